"""The variance-fitted value model's data and fit: consistent with the estimator, resumable."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck import KIND, LuckModel
from sichuan_env.agents.eval.luck_events import extract

from research.luck_variance import data, fit


@pytest.fixture(scope="module")
def records() -> list[dict]:
    lineup = ["heuristic", "defensive", "heuristic", "random"]
    played = play_block(
        lineup, make_lineup_agents(lineup, 3), wall_seeds_of(8, 5), data.RULES, 5, 0
    )
    return [r for _, r in played]


def test_event_corrections_sum_to_the_estimators_draw_corrections(records) -> None:
    model = LuckModel.load("luck")
    ev = extract(records, data.RULES)
    c, live = model.event_corrections(ev)
    assert live.sum() > 100 and not live[:, 0].any()
    np.testing.assert_allclose(c.sum(axis=1), model.corrections_of(ev).draw, atol=1e-9)


def test_targets_subtract_exactly_the_later_corrections() -> None:
    rng = np.random.default_rng(0)
    h, e = 3, 6

    class Ev:
        final = rng.integers(-20, 20, size=(h, 4))
        scores_at = rng.integers(-5, 5, size=(h, e, 4))

    c = rng.normal(size=(h, e, 4))
    y = data.targets(Ev, c)  # type: ignore[arg-type]
    for k in range(e):
        want = Ev.final - Ev.scores_at[:, k] - c[:, k + 1 :].sum(axis=1)
        np.testing.assert_allclose(y[:, k], want)


def test_the_fits_corrections_are_the_estimators(records) -> None:
    model = LuckModel.load("luck")
    rows = data.block_events(records, model, per_hand=4, rng=np.random.default_rng(1))
    assert len(rows["y"]) == 4 * len(records)
    net, _ = checkpoint.load("luck", KIND)
    with torch.no_grad():
        c = fit.corrections(net, *(torch.from_numpy(rows[k]) for k in ("x", "p", "a"))).numpy()
    # float16 features: the same corrections within rounding
    np.testing.assert_allclose(c, rows["ref"], atol=0.02)
    assert np.abs(rows["ref"]).max() > 0.05


def test_fit_resumes_to_the_uninterrupted_result(tmp_path, capsys) -> None:
    args = [
        "--out",
        str(tmp_path / "d"),
        "--hands",
        "256",
        "--block-walls",
        "16",
        "--per-hand",
        "3",
    ]
    assert data.main(args) == 0
    with pytest.raises(SystemExit):
        data.main(args)  # exists: refused without --resume
    first = dict(np.load(tmp_path / "d" / "shards" / "shard-0001.npz"))
    (tmp_path / "d" / "shards" / "shard-0001.npz").unlink()  # a stop lost this block
    assert data.main([*args, "--resume"]) == 0
    again = np.load(tmp_path / "d" / "shards" / "shard-0001.npz")
    assert set(again.files) == set(first) and all((again[k] == first[k]).all() for k in first)
    common = [
        "--data",
        str(tmp_path / "d"),
        "--val-every",
        "4",
        "--batch",
        "64",
        "--baseline-walls",
        "4",
    ]
    assert fit.main([*common, "--out", str(tmp_path / "a"), "--epochs", "2"]) == 0
    assert fit.main([*common, "--out", str(tmp_path / "b"), "--epochs", "1"]) == 0
    with pytest.raises(SystemExit):  # a setting that changes the result is refused, named
        fit.main(
            [*common, "--out", str(tmp_path / "b"), "--epochs", "2", "--lr", "0.01", "--resume"]
        )
    assert "lr" in capsys.readouterr().err
    assert fit.main([*common, "--out", str(tmp_path / "b"), "--epochs", "2", "--resume"]) == 0
    a = torch.load(tmp_path / "a" / "state.pt", weights_only=True)
    b = torch.load(tmp_path / "b" / "state.pt", weights_only=True)
    assert a["epoch"] == b["epoch"] == 2
    for k in a["net"]:
        torch.testing.assert_close(a["net"][k], b["net"][k])
    assert LuckModel.load(tmp_path / "b" / "luck.pt").covers(data.RULES)
