"""Training runs, round 4 of the hardening: a resumed run is the undisturbed one.

- ``--resume`` equals the run that was never stopped (weights compared with
  ``torch.equal``), and a setting that would change the result is refused, naming
  its flag (``sichuan_env.train.common.refuse_changed_settings``);
- ``--minutes`` is this call's budget, ``--run-minutes`` the run's;
- a checkpoint write that fails (``torch.save``'s ``RuntimeError`` included) is one
  line, and every file of the run is as it was;
(the expert-iteration driver and provenance: ``test_hardening4_exit.py``).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
from hostile import exits_in_one_line, files_of

torch = pytest.importorskip("torch")

import sichuan_env.train.policy.search_distill as sd
import sichuan_env.train.policy.search_labels as sl
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import save_checkpoint
from sichuan_env.train import common, value
from sichuan_env.train.policy import bc

from sichuan_env import RuleConfig
from sichuan_env._cli import run as run_cli
from sichuan_env._files import WriteError, write_atomic

ROOT = Path(__file__).resolve().parents[1]
META = {"rules": RuleConfig().to_dict(), "method": "test", "command": "pytest", "commit": "x",
        "wall_clock_s": 0.0}  # fmt: skip


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, map_location="cpu", weights_only=True)


def _same_weights(a: Path, b: Path) -> None:
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    assert all(torch.equal(wa[k], wb[k]) for k in wa), f"{a} and {b} differ"


_files = files_of
_exits = exits_in_one_line


# ------------------------------------------------------------------------- search_distill


@pytest.fixture(scope="module")
def distill_inputs(tmp_path_factory):
    """A tiny label set and a prior network to start from."""
    root = tmp_path_factory.mktemp("distill")
    sl.main(["--out", str(root / "lab"), "--hands", "8", "--shard-hands", "8", "--samples", "2",
             "--draws", "1", "--threads", "1"])  # fmt: skip
    torch.manual_seed(0)
    save_checkpoint(
        root / "init.pt", PolicyNet(PolicyConfig(hidden=16, layers=1, prior=True)), META
    )
    return root


def _sd_args(root: Path, run: Path, *extra: str) -> list[str]:
    return ["--labels", str(root / "lab"), "--run", str(run), "--anchor-decisions", "200",
            "--threads", "1", "--val-mod", "4", "--margins", "0.5", "1", "--select-walls", "0",
            "--batch", "16", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def distill_runs(distill_inputs):
    """The same run twice: two epochs at once, and one epoch then ``--resume`` for the second."""
    root = distill_inputs
    init = ["--init", str(root / "init.pt")]
    whole = sd.main(_sd_args(root, root / "whole", *init, "--epochs", "2"))
    sd.main(_sd_args(root, root / "parts", *init, "--epochs", "1"))
    parts = sd.main(_sd_args(root, root / "parts", "--resume", "--epochs", "2"))
    return root, whole, parts


@pytest.mark.train
def test_distill_resumed_after_an_epoch_is_the_uninterrupted_run(distill_runs):
    root, whole, parts = distill_runs
    for name in ("last.pt", "best.pt", "distilled.pt"):
        _same_weights(root / "whole" / name, root / "parts" / name)
    assert whole["chosen"] == parts["chosen"]
    rows = [
        [json.loads(x)["train_reg"] for x in (root / r / "metrics.jsonl").read_text().splitlines()]
        for r in ("whole", "parts")
    ]
    assert rows[0] == rows[1] and len(rows[0]) == 2
    doc = json.loads((root / "parts" / "distilled.json").read_text())
    assert doc["objective"] == doc["settings"]["objective"] == "regression"


@pytest.mark.train
@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--objective", "softmax"], "--objective"),
        (["--temperature", "2"], "--temperature"),
        (["--floor", "2"], "--floor"),
        (["--hinge-coef", "0.5"], "--hinge-coef"),
        (["--seed", "1"], "--seed"),
        (["--margins", "0.3"], "--margins"),
        (["--anchor-decisions", "300"], "--anchor-decisions"),
        (["--lr", "0.01"], "--lr"),
        (["--no-anchor-claims"], "--no-anchor-claims"),
    ],
)
def test_distill_resume_with_another_setting_is_refused(distill_runs, capsys, extra, flag):
    root = distill_runs[0]
    run = root / "parts"
    before = _files(run)
    argv = _sd_args(root, run, "--resume", "--epochs", "3")
    i = argv.index("--margins") if flag == "--margins" else None
    if i is not None:
        argv[i : i + 3] = []  # the run's margins out, the new ones in
    line = _exits(sd.main, [*argv, *extra], 1, capsys, "other settings")
    assert flag in line and "--resume" in line
    assert _files(run) == before


@pytest.mark.train
def test_distill_run_budget_counts_every_call(distill_runs, capsys):
    root = distill_runs[0]
    run = root / "parts"
    before = _files(run)
    argv = _sd_args(root, run, "--resume", "--epochs", "3", "--run-minutes", "1e-9")
    _exits(sd.main, argv, 1, capsys, r"--run-minutes .* spent")
    assert _files(run) == before


def test_minutes_are_documented_as_the_calls_budget_and_run_minutes_as_the_runs(capsys):
    for main in (sd.main, bc.main):
        with pytest.raises(SystemExit):
            main(["--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "this call's wall-clock budget" in text and "--resume gets it afresh" in text
        assert "--run-minutes" in text and "summed over every --resume" in text
    args = argparse.Namespace(minutes=1.0, run_minutes=2.0)
    now = common.time.time()
    assert common.budget_left(args, now, 0.0)
    assert not common.budget_left(args, now, 120.0)  # the run's two minutes are spent
    assert not common.budget_left(args, now - 61, 0.0)  # this call's minute is spent
    assert common.budget_left(argparse.Namespace(minutes=1.0, run_minutes=None), now, 1e9)


def test_changed_settings_name_the_flags():
    p = argparse.ArgumentParser()
    p.add_argument("--no-claims", dest="claims", action="store_false")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--margins", type=float, nargs="+", default=[0.2])
    p.add_argument("--run", type=Path)
    args = p.parse_args(["--no-claims", "--run", "x"])
    now = common.run_settings(args)
    assert now == {"claims": False, "lr": 1e-3, "margins": [0.2]}  # --run may change
    stored = {"claims": True, "lr": 1e-3, "margins": [0.2, 0.3], "old": 1}
    assert common.changed_settings(stored, now, p) == [
        "--no-claims True (now False)",
        "--margins 0.2 0.3 (now 0.2)",
    ]
    assert common.changed_settings({}, now, p) == []  # a run made before the settings


# -------------------------------------------------------------------------------- value


def _value_args(out: Path, *extra: str) -> list[str]:
    return ["--out", str(out), "--hands", "8", "--block-walls", "1", "--mix", "distill=1",
            "--epochs", "2", "--batch", "16", "--hidden", "4", "--val-share", "0.5",
            "--threads", "1", "--no-progress", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def value_runs(tmp_path_factory):
    """A value-model run whole, and the same run stopped after its first block, resumed."""
    root = tmp_path_factory.mktemp("value")
    assert value.main(_value_args(root / "whole")) == 0
    parts = root / "parts"
    parts.mkdir()
    shutil.copy(root / "whole" / "value.json", parts / "value.json")
    (parts / "shards").mkdir()
    shutil.copy(root / "whole" / "shards" / "shard-0000.npz", parts / "shards")  # one block done
    assert value.main(_value_args(parts, "--resume")) == 0
    return root


@pytest.mark.train
def test_a_resumed_value_run_writes_the_uninterrupted_model(value_runs):
    whole, parts = value_runs / "whole", value_runs / "parts"
    for name in ("shard-0000.npz", "shard-0001.npz"):
        assert (whole / "shards" / name).read_bytes() == (parts / "shards" / name).read_bytes()
    _same_weights(whole / "luck.pt", parts / "luck.pt")
    # also when every shard is there (the network no longer follows the blocks played)
    (parts / "luck.pt").unlink()
    (parts / "luck.json").unlink()
    assert value.main(_value_args(parts, "--resume")) == 0
    _same_weights(whole / "luck.pt", parts / "luck.pt")


@pytest.mark.train
@pytest.mark.parametrize(
    ("extra", "flag"), [(["--seed", "1"], "--seed"), (["--mix", "heuristic=1"], "--mix")]
)
def test_a_value_resume_with_other_data_settings_is_refused(value_runs, capsys, extra, flag):
    run = value_runs / "parts"
    before = _files(run)
    argv = _value_args(run, "--resume")
    if flag == "--mix":
        argv[argv.index("--mix") : argv.index("--mix") + 2] = []
    line = _exits(value.main, [*argv, *extra], 1, capsys, "other settings")
    assert flag in line
    assert _files(run) == before


# ------------------------------------------------------------------------------------ bc


def _bc_args(run: Path, *extra: str) -> list[str]:
    return ["--run", str(run), "--envs", "8", "--chunk-steps", "4", "--chunks", "2",
            "--val-decisions", "40", "--threads", "1", "--quiet", "--hidden", "8", "--layers",
            "1", "--batch", "8", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def bc_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("bc")
    bc.main(_bc_args(root / "whole", "--epochs", "2"))
    bc.main(_bc_args(root / "parts", "--epochs", "1"))
    bc.main(_bc_args(root / "parts", "--epochs", "2", "--resume"))
    return root


@pytest.mark.train
def test_a_resumed_bc_run_is_the_uninterrupted_run(bc_runs, capsys):
    _same_weights(bc_runs / "whole" / "last.pt", bc_runs / "parts" / "last.pt")
    run = bc_runs / "parts"
    before = _files(run)
    line = _exits(bc.main, _bc_args(run, "--epochs", "3", "--resume", "--lr", "0.5"), 1, capsys,
                  "other settings")  # fmt: skip
    assert "--lr 0.001 (now 0.5)" in line
    assert _files(run) == before


# ------------------------------------------------------------------------- belief, ppo


def _belief_args(data: Path, run: Path, *extra: str) -> list[str]:
    return ["--data", str(data), "--run", str(run), "--batch", "16", "--hidden", "8", "--layers",
            "1", "--tile-channels", "4", "--dropout", "0.3", "--val-every", "2", "--val-rows",
            "40", "--eval-every", "3", "--threads", "1", "--quiet", "--epochs", "1", *extra]  # fmt: skip


@pytest.mark.train
def test_a_resumed_belief_run_is_the_uninterrupted_run(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    import sichuan_env.train.belief.train as belief
    from sichuan_env.train.data import make_dataset

    data = tmp_path / "data"
    make_dataset.generate(["heuristic"] * 4, 4, data, obs_version=2, seed=3, num_envs=4,
                          shard_rows=1000, progress=False)  # fmt: skip
    belief.main(_belief_args(data, tmp_path / "whole"))
    belief.main(_belief_args(data, tmp_path / "parts", "--minutes", "1e-9"))  # stops after a step
    assert json.loads((tmp_path / "parts" / "last.json").read_text())["steps"] == 1
    before = _files(tmp_path / "parts")
    line = _exits(belief.main, _belief_args(data, tmp_path / "parts", "--resume", "--epochs", "2"),
                  1, capsys, "other settings")  # fmt: skip
    assert "--epochs 1 (now 2)" in line  # it sets the learning-rate schedule
    assert _files(tmp_path / "parts") == before
    belief.main(_belief_args(data, tmp_path / "parts", "--resume"))
    # the same steps, batches and dropout masks as the run that was never stopped
    _same_weights(tmp_path / "whole" / "last.pt", tmp_path / "parts" / "last.pt")


@pytest.mark.train
def test_a_ppo_resume_with_another_setting_is_refused(tmp_path, capsys):
    from sichuan_env.train.policy import ppo

    run = tmp_path / "run"
    args = ["--run", str(run), "--envs", "4", "--steps", "4", "--hidden", "8", "--layers", "1",
            "--threads", "1", "--quiet", "--eval-every", "0", "--snapshot-every", "0"]  # fmt: skip
    ppo.main([*args, "--iterations", "1"])
    before = _files(run)
    line = _exits(ppo.main, [*args, "--iterations", "2", "--resume", "--kl-coef", "0.5"], 1, capsys,
                  "other settings")  # fmt: skip
    assert "--kl-coef 0.05 (now 0.5)" in line
    assert _files(run) == before
    ppo.main([*args, "--iterations", "2", "--resume", "--threads", "2"])  # the platform may change


# ---------------------------------------------------------------------- failed writes


def _failing_save(real, when=lambda obj: True):
    """``torch.save`` that writes a little and fails as a full disk makes it fail."""

    def save(obj, f, *args, **kwargs):
        if not when(obj):
            return real(obj, f, *args, **kwargs)
        f.write(b"PK\x03\x04 partial")
        raise RuntimeError(
            "[enforce fail at inline_container.cc:672] . unexpected pos 4736 vs 4624"
        )

    return save


def test_a_failed_checkpoint_write_is_an_oserror_naming_the_file(tmp_path, monkeypatch, capsys):
    net = PolicyNet(PolicyConfig(hidden=8, layers=1))
    path = save_checkpoint(tmp_path / "net.pt", net, META)
    before = _files(tmp_path)
    monkeypatch.setattr(torch, "save", _failing_save(torch.save))
    with pytest.raises(WriteError) as info:
        save_checkpoint(path, net, META)
    assert isinstance(info.value, OSError) and info.value.filename == str(path)
    assert "enforce fail" in info.value.strerror
    with pytest.raises(OSError, match="cannot write") as info:
        write_atomic(tmp_path / "state.pt", lambda f: torch.save({}, f))
    assert info.value.filename == str(tmp_path / "state.pt")
    assert _files(tmp_path) == before  # no temporary file left, the checkpoint unchanged

    capsys.readouterr()
    assert run_cli(lambda: save_checkpoint(path, net, META), "prog") == 1
    text = capsys.readouterr().err.strip()
    assert text.count("\n") == 0 and text.startswith(f"prog: error: {path}: cannot write")


@pytest.mark.train
@pytest.mark.parametrize("which", ["checkpoint", "state"])
def test_a_failed_write_ends_a_run_in_one_line_and_keeps_its_files(
    bc_runs, tmp_path, capsys, monkeypatch, which
):
    run = tmp_path / "run"
    shutil.copytree(bc_runs / "whole", run)
    before = _files(run)
    state_only = lambda obj: isinstance(obj, dict) and "optimizer" in obj
    when = state_only if which == "state" else (lambda obj: not state_only(obj))
    monkeypatch.setattr(torch, "save", _failing_save(torch.save, when))
    line = _exits(bc.main, _bc_args(run, "--epochs", "3", "--resume"), 1, capsys, "cannot write")
    name = "state.pt" if which == "state" else "last.pt"
    assert f"{run / name}" in line and "keeps its last good files" in line
    # every file as it was (a last.pt written before its state.pt failed is put back)
    assert _files(run) == before
    monkeypatch.undo()
    bc.main(_bc_args(run, "--epochs", "3", "--resume"))  # and the run resumes


@pytest.mark.train
def test_a_failed_value_model_write_is_one_line(value_runs, capsys, monkeypatch):
    run = value_runs / "whole"
    before = _files(run)
    monkeypatch.setattr(torch, "save", _failing_save(torch.save))
    line = _exits(value.main, _value_args(run, "--resume"), 1, capsys, "cannot write")
    assert str(run / "luck.pt") in line
    assert _files(run) == before


def test_say_written_lists_the_runs_own_files_only(tmp_path, capsys):
    # --overwrite removes the run's files and keeps a user's: the summary names the run's only
    run = tmp_path / "run"
    (run / "tb").mkdir(parents=True)
    for name in ("last.pt", "last.json", "state.pt", "metrics.jsonl", "notes.txt",
                 ".last.pt.prev"):  # fmt: skip
        (run / name).write_text("x")
    (run / "mine").mkdir()
    common.say_written(run)
    out = capsys.readouterr().out.strip()
    assert out == f"wrote {run}/ (last.json, last.pt, metrics.jsonl, state.pt, tb/)"
    common.say_written(run, ("exit.json", "round-*"))  # a script's own list, glob patterns too
    assert capsys.readouterr().out.strip() == f"wrote {run}/ (nothing)"
    (run / "round-01").mkdir()
    common.say_written(run, ("exit.json", "round-*"))
    assert capsys.readouterr().out.strip() == f"wrote {run}/ (round-01/)"


def test_a_state_that_is_not_the_checkpoint_s_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not belong"):
        common.check_state_matches({"last_sha256": "a" * 64}, {"sha256": "b" * 64}, tmp_path)
    common.check_state_matches({}, {"sha256": "b" * 64}, tmp_path)  # runs saved before it
