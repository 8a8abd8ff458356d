"""Hardening of the evaluation tools: a value model's outputs are checked like its weights,
results are strict JSON, the luck adjustment is a stage of its own (a bar, its own time),
and a ladder on few walls says its intervals are rough."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval import ladder
from sichuan_env.agents.eval import luck as luck_mod
from sichuan_env.agents.eval.cli import main as evaluate_main
from sichuan_env.agents.eval.cli import results_json, time_line
from sichuan_env.agents.eval.luck import KIND, LuckModel

EVAL = ["--walls", "2", "--lineup", "heuristic", "random", "random", "random"]
LADDER = ["--agents", "heuristic", "random", "--walls", "2", "--boot", "20"]


def _huge_model(folder: Path, scale: float = 1e30) -> Path:
    """The shipped value model with its weights times ``scale``, saved as checkpoints are.

    Every load check passes (finite float32 tensors, a matching sha256), but its values
    overflow float32.
    """
    net, doc = checkpoint.load("luck", KIND)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
    meta = {k: v for k, v in doc.items()
            if k not in ("format", "arch", "obs_version", "created", "sha256")}  # fmt: skip
    return checkpoint.save(folder / "huge.pt", KIND, net, meta)


def _error_text(exc: pytest.ExceptionInfo, err: str) -> str:
    """The one error line of a CLI that exited: a ``SystemExit`` message or stderr's line."""
    assert "Traceback" not in err, err
    code = exc.value.code
    if isinstance(code, str):
        assert "\n" not in code
        return code
    assert code not in (0, None)
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert len(lines) == 1, err
    return lines[0]


def _no_nan_files(folder: Path) -> list[Path]:
    """Every file under ``folder``; none holds a NaN or an infinity."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    for f in files:
        if f.suffix == ".json":
            json.loads(f.read_text(), parse_constant=lambda c: pytest.fail(f"{f} holds {c}"))
    return files


# ---- item 1: a value model that overflows ------------------------------------------------


def test_an_overflowing_value_model_is_refused_before_play(tmp_path, capsys):
    huge = _huge_model(tmp_path)
    with pytest.raises(ValueError, match=r"huge\.pt.*non-finite"):
        LuckModel.load(str(huge))
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as exc:
        evaluate_main([*EVAL, "--value-model", str(huge), "--json", str(out), "--quiet"])
    line = _error_text(exc, capsys.readouterr().err)
    assert "--value-model" in line and "huge.pt" in line and "non-finite" in line
    assert not out.exists()
    lad = tmp_path / "lad"
    with pytest.raises(SystemExit) as exc:
        ladder.main([*LADDER, "--value-model", str(huge), "--out", str(lad), "--quiet"])
    line = _error_text(exc, capsys.readouterr().err)
    assert "huge.pt" in line and "non-finite" in line
    assert not (lad / "pairs").exists() and not (lad / "ladder.json").exists()


def test_values_that_overflow_on_real_hands_are_an_error_not_nan(tmp_path, capsys, monkeypatch):
    huge = _huge_model(tmp_path)
    # it passes the load, and fails on the hands' features
    monkeypatch.setattr(LuckModel, "_probe", lambda self: None, raising=False)
    out = tmp_path / "eval"
    out.mkdir()
    with pytest.raises(SystemExit) as exc:
        evaluate_main([*EVAL, "--value-model", str(huge), "--json", str(out / "r.json"),
                       "--records", str(out / "rec"), "--quiet"])  # fmt: skip
    line = _error_text(exc, capsys.readouterr().err)
    assert line.startswith("sichuan-eval: error: luck adjustment:") and "non-finite" in line
    assert _no_nan_files(out) == []  # nothing written
    lad = tmp_path / "lad"
    with pytest.raises(SystemExit) as exc:
        ladder.main([*LADDER, "--value-model", str(huge), "--out", str(lad), "--quiet"])
    line = _error_text(exc, capsys.readouterr().err)
    assert "luck adjustment of heuristic vs random" in line and "non-finite" in line
    assert not list(lad.rglob("*.json"))  # no pair file of NaN that --resume would refuse
    # --target-ci's checks during play are the same one line
    with pytest.raises(SystemExit) as exc:
        evaluate_main([*EVAL[2:], "--walls", "16", "--block-walls", "8", "--target-ci", "0.001",
                       "--value-model", str(huge), "--quiet"])  # fmt: skip
    assert "luck adjustment:" in _error_text(exc, capsys.readouterr().err)


def test_the_probe_refuses_a_model_whose_values_overflow():
    torch.manual_seed(0)
    net = luck_mod.ValueNet()
    model = LuckModel(net, {"rules": luck_mod.RuleConfig().to_dict(),
                            "deal_baseline": [0.0] * 4}, "probe-ok")  # fmt: skip
    feats = np.full((1, 4, luck_mod.NF), np.float32(3e38))
    assert not np.isfinite(model.values(feats)).all()  # no RuntimeWarning either: errstate
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(1e30)
    with pytest.raises(ValueError, match=r"'scaled'.*non-finite"):
        LuckModel(net, {"rules": luck_mod.RuleConfig().to_dict(), "deal_baseline": [0.0] * 4},
                  "scaled")  # fmt: skip


def test_results_are_strict_json(tmp_path):
    path = tmp_path / "pairs" / "p.json"
    with pytest.raises(ValueError):
        ladder._save_json(path, {"points": [math.inf]})
    assert not path.exists()
    with pytest.raises(ValueError):
        results_json({"x": math.nan})
    assert json.loads(results_json({"x": 1.5})) == {"x": 1.5}


# ---- item 3: the adjustment's own bar and time -------------------------------------------


class _Slow:
    """``LuckModel.corrections`` that takes ``delay`` seconds per call (zero corrections)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0

    def __call__(self, records, progress=None):  # set on the class: no self of the model
        self.calls += 1
        time.sleep(self.delay)
        if progress is not None:
            progress(len(records))
        zero = np.zeros((len(records), 4))
        return luck_mod.Corrections(deal=zero, draw=zero.copy())


@pytest.mark.parametrize("target_ci", [False, True])
def test_the_time_line_counts_play_and_adjustment_once(monkeypatch, capsys, target_ci):
    slow = _Slow(1.0)
    monkeypatch.setattr(LuckModel, "corrections", slow)
    argv = [*EVAL, "--quiet"]
    if target_ci:  # one check after the first block (during play), then the rest
        argv = [*EVAL[2:], "--walls", "16", "--block-walls", "8", "--target-ci", "1e-6",
                "--quiet"]  # fmt: skip
    t0 = time.perf_counter()
    doc = evaluate_main(argv)
    wall = time.perf_counter() - t0
    assert slow.calls == (2 if target_ci else 1)
    out = capsys.readouterr().out
    m = re.search(r"\((?:play )?([0-9.]+) s.*; luck adjustment ([0-9.]+) s\)", out)
    assert m, out
    play, adjust = float(m[1]), float(m[2])
    assert adjust >= slow.calls * 1.0 - 0.05
    assert play + adjust <= wall + 0.15  # each second once (rounding to 0.1 s)
    assert doc["seconds"] + doc["adjust_seconds"] <= wall + 0.01


def test_time_line_text():
    assert time_line("3.0 s", 1.0, 2.5) == "play 2.0 s; luck adjustment 2.5 s"
    cold = "3.0 s; 35.0 s more compiling numba kernels, not counted"
    assert time_line(cold, 0.0, None, ", on Ray") == f"play {cold}, on Ray"


def test_the_adjustment_shows_a_bar_unless_quiet(capsys, tmp_path):
    evaluate_main(EVAL)
    err = capsys.readouterr().err
    assert "luck adjustment" in err and "8/8" in err.split("luck adjustment", 1)[1]
    evaluate_main([*EVAL, "--quiet"])
    assert "luck adjustment" not in capsys.readouterr().err
    ladder.main([*LADDER, "--out", str(tmp_path / "lad")])
    assert "luck adjustment" in capsys.readouterr().err


# ---- item 4: a ladder on few walls says so -----------------------------------------------


def test_a_ladder_on_few_walls_prints_and_records_a_caution(tmp_path, capsys, monkeypatch):
    out = tmp_path / "lad"
    doc = ladder.main([*LADDER, "--out", str(out), "--quiet", "--no-adjust"])
    text = capsys.readouterr().out
    assert doc["caution"] and "2 walls per pair" in doc["caution"]
    assert str(ladder.CAUTION_WALLS) in doc["caution"]
    assert doc["caution"] in text  # on one line, after the table
    assert json.loads((out / "ladder.json").read_text())["caution"] == doc["caution"]
    assert ladder.caution(ladder.CAUTION_WALLS) is None
    assert ladder.caution(ladder.CAUTION_WALLS - 1)
    monkeypatch.setattr(ladder, "CAUTION_WALLS", 2)  # enough walls: no caution
    doc = ladder.main([*LADDER, "--out", str(out), "--quiet", "--no-adjust", "--resume"])
    assert doc["caution"] is None and "caution" not in capsys.readouterr().out
