"""The ladder: per-wall results, the Bradley-Terry fit, resuming, and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sichuan_env.agents.eval import ladder
from sichuan_env.agents.eval.evaluate import play_duplicate

from sichuan_env import RuleConfig

ARGS = ["--agents", "random", "heuristic", "defensive", "--walls", "3", "--quiet", "--boot", "20"]


def test_pair_points_are_the_first_agents_seats():
    lineup = ["heuristic", "random", "heuristic", "random"]
    records = play_duplicate(lineup, 2, RuleConfig(), 0, False)
    pts = ladder.pair_points(records, 2)
    mine = np.zeros(2)
    for wall, rot, rec in records:
        for seat, score in enumerate(rec["result"]["scores"]):
            if lineup[(seat + rot) % 4] == "heuristic":
                mine[wall] += score
    np.testing.assert_array_equal(pts, mine)
    assert (pts > 0).all()  # the heuristic beats random on these walls (the case is not vacuous)


def test_the_fit_recovers_known_strengths():
    rng = np.random.default_rng(0)
    truth = {"a": 1.0, "b": 0.0, "c": -1.5}
    pairs = {}
    for x, y in [("a", "b"), ("a", "c"), ("b", "c")]:
        p = 1 / (1 + np.exp(truth[y] - truth[x]))
        pairs[(x, y)] = np.where(rng.random(4000) < p, 1.0, -1.0)
    r = ladder.fit_bradley_terry(["a", "b", "c"], pairs)
    r -= r[1]  # anchored at b
    np.testing.assert_allclose(r, [1.0, 0.0, -1.5], atol=0.12)
    rated = ladder.ratings(["a", "b", "c"], pairs, "b", boot=50)
    assert rated["b"] == {"rating": 0.0, "lo": 0.0, "hi": 0.0}
    assert rated["a"]["lo"] < 1.0 < rated["a"]["hi"] or abs(rated["a"]["rating"] - 1) < 0.12
    # an agent that won every wall gets a finite rating (the prior)
    sweep = {("a", "b"): np.ones(50), ("a", "c"): np.ones(50), ("b", "c"): np.ones(50)}
    assert np.isfinite(ladder.fit_bradley_terry(["a", "b", "c"], sweep)).all()


def test_a_run_resumes_without_playing_again(tmp_path, monkeypatch):
    out = tmp_path / "lad"
    first = ladder.main([*ARGS, "--out", str(out)])
    assert len(list((out / "pairs").glob("*.json"))) == 3 and (out / "ladder.png").is_file()
    assert first["ratings"][0]["agent"] == "heuristic"

    def no_play(*_args, **_kw):
        raise AssertionError("a finished pair was played again")

    monkeypatch.setattr(ladder, "play_pair", no_play)
    again = ladder.main([*ARGS, "--out", str(out), "--resume"])
    assert again["ratings"] == first["ratings"] and again["matrix"] == first["matrix"]
    saved = json.loads((out / "ladder.json").read_text())
    assert saved["ratings"] == first["ratings"]


def test_other_settings_are_played_again_and_damage_is_an_error(tmp_path, capsys):
    out = tmp_path / "lad"
    ladder.main([*ARGS, "--out", str(out)])
    played = []
    real = ladder.play_pair

    def counting(*args, **kw):
        played.append(args[:2])
        return real(*args, **kw)

    ladder.play_pair = counting
    try:
        ladder.main([*ARGS[:-5], "--walls", "2", "--quiet", "--out", str(out), "--resume"])
    finally:
        ladder.play_pair = real
    assert len(played) == 3  # other walls: every pair again
    pair = next((out / "pairs").glob("*.json"))
    pair.write_text('{"agents": ["x", "y"]}')
    with pytest.raises(SystemExit) as exc:
        ladder.main([*ARGS, "--out", str(out), "--resume"])
    assert exc.value.code == 1 and "not the pair" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "heuristic", "--walls", "2"], "at least two"),
        (["--agents", "heuristic", "nobody", "--walls", "2"], "unknown agent"),
        (["--agents", "heuristic", "random", "--walls", "1"], "--walls"),
        (["--agents", "heuristic", "random", "--ray", " "], "--ray"),
    ],
)
def test_usage_errors(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        ladder.main([*argv, "--out", str(tmp_path / "o")])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_out_must_be_a_folder_and_not_overwritten(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        ladder.main([*ARGS, "--out", str(tmp_path / "file")])
    out = tmp_path / "lad"
    ladder.main([*ARGS, "--out", str(out)])
    with pytest.raises(SystemExit) as exc:  # finished pairs are never overwritten silently
        ladder.main([*ARGS, "--out", str(out)])
    assert exc.value.code == 2 and "--resume" in capsys.readouterr().err
