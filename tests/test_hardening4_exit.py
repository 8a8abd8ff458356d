"""Training runs, round 4 of the hardening: the expert-iteration driver checks the value model
before any work, and provenance says ``unknown`` for a source checkout whose commit git cannot
give."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import sichuan_env.train.policy.exit as ex
from hostile import exits_in_one_line as _exits
from hostile import files_of as _files
from sichuan_env.agents import checkpoint
from sichuan_env.train import common

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------- expert iteration


TINY = ["--hands", "8", "--samples", "2", "--epochs", "1", "--select-walls", "4",
        "--eval-walls", "4", "--anchor-decisions", "500", "--threads", "1"]  # fmt: skip
LUCK = [*TINY, "--estimator", "luck"]  # the matches need the shipped luck model


@pytest.fixture
def damaged_luck(tmp_path, monkeypatch):
    """The shipped folder with a damaged value model (its weights cut short)."""
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    src = Path(checkpoint.SHIPPED_DIR)
    shutil.copy(src / "luck.json", shipped / "luck.json")
    data = (src / "luck.pt").read_bytes()
    (shipped / "luck.pt").write_bytes(data[: len(data) // 2])
    monkeypatch.setattr(checkpoint, "SHIPPED_DIR", shipped)

    def no_work(*args, **kwargs):
        raise AssertionError("the driver started work with a damaged value model")

    monkeypatch.setattr(ex, "run_round", no_work)
    return src / "distill.pt"


def test_exit_checks_the_value_model_before_any_work(damaged_luck, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["--run", str(run), "--init", str(damaged_luck), *LUCK]
    line = _exits(ex.main, argv, 1, capsys, "value model cannot be loaded")
    assert "luck" in line
    assert not run.exists()  # nothing written


def test_exit_resume_checks_the_value_model_first(damaged_luck, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    args = vars(
        ex.build_parser().parse_args(["--run", str(run), "--init", str(damaged_luck), *LUCK])
    )
    ex.write_state(run, {"settings": {k: args[k] for k in ex.SETTINGS}, "rounds": []})
    before = _files(run)
    argv = ["--run", str(run), "--init", str(damaged_luck), *LUCK, "--resume"]
    _exits(ex.main, argv, 1, capsys, "value model cannot be loaded")
    assert _files(run) == before


def test_exit_with_the_advantage_sum_needs_no_luck_model(damaged_luck, tmp_path):
    """The default estimator does not read the luck model: the damaged one stops nothing."""
    run = tmp_path / "run"
    with pytest.raises(AssertionError, match="started work"):  # run_round: no_work
        ex.main(["--run", str(run), "--init", str(damaged_luck), *TINY])
    assert ex.read_state(run)["settings"]["estimator"] == "advantage"


def test_exit_state_from_before_the_estimator_resumes_as_luck(tmp_path, capsys, monkeypatch):
    """A run made before --estimator used the luck adjustment: resumed as such, and the new
    default is refused by name rather than switched to half-way."""
    run = tmp_path / "run"
    run.mkdir()
    init = Path(checkpoint.SHIPPED_DIR) / "distill.pt"
    args = vars(ex.build_parser().parse_args(["--run", str(run), "--init", str(init), *TINY]))
    old = {k: args[k] for k in ex.SETTINGS if k != "estimator"}
    ex.write_state(run, {"settings": old, "rounds": []})
    calls: list = []
    monkeypatch.setattr(ex, "run_round", lambda *a, **k: calls.append(a))
    argv = ["--run", str(run), "--init", str(init), *TINY, "--resume"]
    line = _exits(ex.main, argv, 1, capsys, "other settings")
    assert "--estimator luck (now advantage)" in line and not calls
    doc = ex.main([*argv, "--estimator", "luck", "--rounds", "1"])
    assert doc["settings"]["estimator"] == "luck" and len(calls) == 1
    assert calls[0][-1] is not None  # the luck model, loaded for the matches


def test_exit_resume_with_other_settings_names_the_flags(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    init = Path(checkpoint.SHIPPED_DIR) / "distill.pt"
    args = vars(ex.build_parser().parse_args(["--run", str(run), "--init", str(init), *TINY]))
    ex.write_state(run, {"settings": {k: args[k] for k in ex.SETTINGS}, "rounds": []})
    monkeypatch.setattr(ex, "run_round", lambda *a, **k: pytest.fail("work started"))
    argv = ["--run", str(run), "--init", str(init), *TINY, "--resume", "--no-claims", "--lr", "0.1"]
    line = _exits(ex.main, argv, 1, capsys, "other settings")
    assert "--no-claims True (now False)" in line and "--lr 0.0001 (now 0.1)" in line


# --------------------------------------------------------------------------- provenance


def test_a_source_checkout_without_git_records_an_unknown_commit(monkeypatch):
    from importlib.metadata import version

    monkeypatch.setenv("PATH", "")  # git cannot run
    got = common.git_commit()
    assert (
        got == f"unknown (git unavailable; sichuan-env {version('sichuan-env')} editable checkout)"
    )

    def broken(*args, **kwargs):
        raise OSError("no git")

    monkeypatch.setattr(subprocess, "run", broken)  # git_commit: train/provenance.py
    assert common.git_commit().startswith("unknown (git unavailable;")


def test_a_wheel_records_its_version_and_a_copied_tree_an_unknown_commit(tmp_path):
    from importlib.metadata import version

    wheel = tmp_path / "site-packages" / "sichuan_env" / "train"
    wheel.mkdir(parents=True)
    assert common.git_commit(wheel) == f"sichuan-env=={version('sichuan-env')}"
    tree = tmp_path / "src"  # a source tree git knows nothing of (an unpacked sdist)
    (tree / "train").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    if shutil.which("git") is not None:
        top = subprocess.run(["git", "-C", str(tree), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=False)  # fmt: skip
        if top.returncode == 0:
            pytest.skip("the temporary folder lies inside a git repository")
        assert common.git_commit(tree / "train").startswith("unknown (git could not tell;")
