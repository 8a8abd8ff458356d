"""The expert-iteration pictures and the claim-search comparison: they draw a run's files,
count CPU-hours, reject malformed state, and the comparison writes its table."""

import json

import pytest

from research.exit import claims_search
from research.exit.plot import main, summary

pytestmark = pytest.mark.research


def _match(ppm, ci):
    return {"points_per_hand": ppm, "ci95": ci, "win_rate": 0.3, "deal_in_rate": 0.1,
            "walls": 200, "seed": 7}  # fmt: skip


def _round(k, done=("labels", "fit", "eval")):
    """A round entry as train.policy.exit writes it: each done stage's results present."""
    r = {"round": k, "done": list(done), "seconds": {s: (1800.0 if s == "labels" else 0.0)
                                                     for s in done}}  # fmt: skip
    if "labels" in done:
        r["labels"] = {"shards": 3, "new_rows": 9000, "rows": 9000 * k, "seconds": 1800.0}
    if "fit" in done:
        r["fit"] = {"margin": 0.3, "selection": {"epoch": 3}}
    if "eval" in done:
        r.update(vs_heuristic=_match(0.05 * k, 0.04), vs_previous=_match(0.01, 0.05))
    return r


def _run(tmp_path, rounds):
    run = tmp_path / "exit"
    run.mkdir()
    (run / "exit.json").write_text(json.dumps({"settings": {"hands": 900}, "rounds": rounds}))
    fit = run / "round-01" / "fit"
    fit.mkdir(parents=True)
    fit.joinpath("metrics.jsonl").write_text("".join(
        json.dumps({"step": e, "val_reg": 2.0 - 0.1 * e}) + "\n" for e in range(1, 4)))  # fmt: skip
    return run


def test_plot_and_summary_of_a_run(tmp_path):
    run = _run(tmp_path, [_round(1), _round(2), _round(3, done=("labels",))])
    png, js = tmp_path / "exit.png", tmp_path / "s.json"
    assert main([str(run), "--out", str(png), "--json", str(js)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    s = json.loads(js.read_text())
    assert [r["round"] for r in s["rounds"]] == [1, 2]  # round 3 has not been evaluated
    assert [r["cpu_hours"] for r in s["rounds"]] == [1.0, 2.0]  # 1800 s x 2 cores per round
    assert s["rounds"][0]["val_reg"] == pytest.approx([1.9, 1.8, 1.7])
    assert s["rounds"][1]["label_rows_per_s"] == 5.0 and s["rounds"][1]["label_hands_per_s"] == 0.5


def test_summary_names_the_estimator_of_adjusted_figures(tmp_path):
    """Adjusted matches carry their estimator: a run from before the option was luck-adjusted."""
    adj = {"adjusted": 0.05, "adjusted_ci95": 0.02}
    new = _round(1) | {"vs_heuristic": _match(0.05, 0.04) | adj | {"estimator": "advantage"},
                       "vs_previous": _match(0.0, 0.04) | adj | {"estimator": "advantage"}}  # fmt: skip
    old = _round(2) | {"vs_heuristic": _match(0.05, 0.04) | adj,
                       "vs_previous": _match(0.0, 0.04) | adj}  # fmt: skip
    s = summary(_run(tmp_path, [new, old]))
    kinds = [r[k]["estimator"] for r in s["rounds"] for k in ("vs_heuristic", "vs_previous")]
    assert kinds == ["advantage", "advantage", "luck", "luck"]


@pytest.mark.parametrize(
    "rounds",
    [[], [_round(1) | {"vs_heuristic": {"points_per_hand": "x", "ci95": 1}}],
     [_round(2)], [_round(1) | {"seconds": {"labels": -5}}]],
)  # fmt: skip
def test_malformed_runs_are_refused(tmp_path, rounds, capsys):
    run = _run(tmp_path, rounds)
    assert main([str(run), "--out", str(tmp_path / "x.png")]) == 1
    assert "research.exit.plot" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
    with pytest.raises(ValueError):
        summary(run)


def test_claims_search_comparison_writes_its_table(tmp_path, capsys, monkeypatch):
    out = tmp_path / "c.json"
    assert (
        claims_search.main(["--walls", "3", "--samples", "2", "--draws", "1", "--out", str(out)])
        == 0
    )
    doc = json.loads(out.read_text())
    own, both = doc["rows"]["own turns"], doc["rows"]["own turns + claims"]
    assert both["searched"] > own["searched"] > 0  # claim answers were searched too
    assert doc["claims_gain"]["ci95"] >= 0 and "paired over 3 walls" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        claims_search.main(["--walls", "1"])
    calls = []
    real = claims_search.play
    monkeypatch.setattr(claims_search, "play", lambda *a: calls.append(a[5:]) or real(*a))
    argv = ["--walls", "3", "--samples", "2", "--draws", "1", "--scope", "setup", "--out", str(out)]
    assert claims_search.main(argv) == 0
    assert calls[1:] == [(False, False), (False, True)]  # own turns; own turns + 定缺
    doc = json.loads(out.read_text())
    assert doc["rows"]["own turns + setup"]["searched"] > 0 and "setup_gain" in doc
