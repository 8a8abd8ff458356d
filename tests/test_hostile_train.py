"""The training and dataset CLIs under hostile input ("Hardening, round 2").

The contract (as ``test_hostile_cli.py``'s): bad usage exits 2, bad input (a run, a
state file, data) exits 1, each with one line on stderr and never a traceback; output
paths are checked before any work; a run never replaces a good checkpoint with a
non-finite one, and training that does nothing is an error that writes nothing.
The inputs named in the issue run as subprocesses (four at a time); the many variants
call the same ``main`` in-process. Tests that train (tiny configurations, one or two
steps) are marked ``train``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.policy import bc, ppo
from train_fixtures import (
    STATE_DAMAGE,
    copy_run,
    doctor_state,
    files_of,
    header_bomb,
    rewrite_shard,
    run_state,
    tiny_datasets,
    tiny_labels,
)

ROOT = Path(__file__).resolve().parents[1]
BC = "sichuan_env.train.policy.bc"
PPO = "sichuan_env.train.policy.ppo"
SD = "sichuan_env.train.policy.search_distill"
BELIEF = "sichuan_env.train.belief.train"


# ------------------------------------------------------------------------------ helpers


def _run_all(cases: dict[str, list[str]]) -> dict[str, subprocess.CompletedProcess]:
    """Run ``{label: argv after python}`` four at a time."""
    out: dict[str, subprocess.CompletedProcess] = {}
    labels = list(cases)
    for start in range(0, len(labels), 4):
        procs = {
            label: subprocess.Popen(
                [sys.executable, *cases[label]],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
            )
            for label in labels[start : start + 4]
        }
        for label, proc in procs.items():
            try:
                stdout, stderr = proc.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            out[label] = subprocess.CompletedProcess(
                proc.args,
                proc.returncode,
                stdout.decode(errors="replace"),
                stderr.decode(errors="replace"),
            )
    return out


def _check(results, expected: dict[str, tuple[int, str]]) -> None:
    """Each run exits with its code, a last stderr line matching its pattern, no traceback."""
    problems = []
    for label, (code, pattern) in expected.items():
        r = results[label]
        last = (r.stderr.strip().splitlines() or [""])[-1]
        if r.returncode != code or "Traceback" in r.stderr + r.stdout:
            problems.append(f"{label}: exit {r.returncode} (want {code})\n{r.stderr[-1500:]}")
        elif ": error: " not in last or not re.search(pattern, last):
            problems.append(f"{label}: last line {last!r} does not match {pattern!r}")
    assert not problems, "\n\n".join(problems)


def _exits(main, argv: list[str], code: int, capsys, pattern: str = "") -> str:
    """``main(argv)`` exits ``code`` with one ``prog: error:`` line matching ``pattern``."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    last = (err.strip().splitlines() or [""])[-1]
    assert info.value.code == code, err
    assert ": error: " in last and "Traceback" not in err, err
    assert re.search(pattern, last), last
    return last


# -------------------------------------------------------------------------- fixtures


def _bc_args(run: Path, *extra: str) -> list[str]:
    return [
        "--run",
        str(run),
        "--envs",
        "8",
        "--chunk-steps",
        "4",
        "--chunks",
        "1",
        "--val-decisions",
        "40",
        "--threads",
        "1",
        "--quiet",
        "--hidden",
        "8",
        "--layers",
        "1",
        *extra,
    ]


def _ppo_args(run: Path, *extra: str) -> list[str]:
    return [
        "--run",
        str(run),
        "--envs",
        "4",
        "--steps",
        "4",
        "--hidden",
        "8",
        "--layers",
        "1",
        "--threads",
        "1",
        "--quiet",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        *extra,
    ]


@pytest.fixture(scope="module")
def bc_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("bc") / "run"
    bc.main(_bc_args(run, "--epochs", "1"))
    return run


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("ppo") / "run"
    ppo.main(_ppo_args(run, "--iterations", "1"))
    return run


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A tiny observation-v2 dataset (two shards) and a v1 one."""
    return tiny_datasets(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """A small label set and a prior network to start from."""
    return tiny_labels(tmp_path_factory.mktemp("labels"))


# ---------------------------------------------------- the issue's inputs, as a user runs them


@pytest.mark.train
def test_the_issue_inputs_as_subprocesses(bc_run, ppo_run, data, labels, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    nan_ppo = copy_run(ppo_run, tmp_path / "nan_ppo")
    doctor_state(nan_ppo, "nan moments")
    pickled = copy_run(bc_run, tmp_path / "pickled")
    doctor_state(pickled, "pickled")
    bomb = copy_run(labels / "lab", tmp_path / "bomb")
    header_bomb(bomb / "shard-00000.npz")
    shifted = copy_run(labels / "lab", tmp_path / "shifted")
    for shard in sorted(shifted.glob("shard-*.npz")):  # no hand index divisible by --val-mod
        rewrite_shard(shard, hand=lambda h: h * 3 + 1)
    m = ["-m"]
    sd_common = [
        "--run",
        str(tmp_path / "sd"),
        "--init",
        str(labels / "init.pt"),
        "--threads",
        "1",
        "--epochs",
        "1",
        "--anchor-decisions",
        "10",
    ]
    belief_common = [
        "--hidden",
        "8",
        "--layers",
        "1",
        "--tile-channels",
        "4",
        "--threads",
        "1",
        "--quiet",
        "--val-every",
        "2",
    ]
    cases = {
        "bc --lr inf": [*m, BC, *_bc_args(tmp_path / "a"), "--lr", "inf"],
        "ppo --lr inf": [*m, PPO, *_ppo_args(tmp_path / "b"), "--lr", "inf"],
        "bc --hidden 0": [*m, BC, *_bc_args(tmp_path / "c"), "--hidden", "0"],
        "ppo --seed huge": [*m, PPO, *_ppo_args(tmp_path / "d"), "--seed", str(2**70)],
        "ppo --resume nan moments": [
            *m,
            PPO,
            *_ppo_args(nan_ppo, "--resume", "--iterations", "2"),
        ],
        "ppo --resume missing": [*m, PPO, *_ppo_args(tmp_path / "none", "--resume")],
        "ppo --resume bc run": [*m, PPO, *_ppo_args(bc_run, "--resume", "--iterations", "5")],
        "bc --resume pickled": [*m, BC, *_bc_args(pickled, "--resume", "--epochs", "3")],
        "bc --run file": [*m, BC, *_bc_args(blocker)],
        "ppo --ray empty": [*m, PPO, *_ppo_args(tmp_path / "e"), "--ray", ""],
        "make_dataset --ray empty": [
            *m,
            "sichuan_env.train.data.make_dataset",
            "--out",
            str(tmp_path / "f"),
            "--ray",
            "",
            "--hands",
            "1",
        ],
        "belief --batch > rows": [
            *m,
            BELIEF,
            "--data",
            str(data / "v2"),
            "--run",
            str(tmp_path / "g"),
            "--batch",
            "100000",
            *belief_common,
        ],
        "belief_report --json dir": [
            *m,
            "sichuan_env.train.belief.report",
            "none",
            "--data",
            str(data / "v2"),
            "--json",
            str(tmp_path),
        ],
        "search_distill header bomb": [*m, SD, "--labels", str(bomb), *sd_common],
        "search_distill empty held-out": [
            *m,
            SD,
            "--labels",
            str(shifted),
            *sd_common,
            "--val-mod",
            "3",
        ],
        "search_labels --out file": [
            *m,
            "sichuan_env.train.policy.search_labels",
            "--out",
            str(blocker),
            "--hands",
            "1",
        ],
    }
    before = files_of(nan_ppo)
    results = _run_all(cases)
    _check(
        results,
        {
            "bc --lr inf": (2, "--lr"),
            "ppo --lr inf": (2, "--lr"),
            "bc --hidden 0": (2, "--hidden"),
            "ppo --seed huge": (2, "--seed"),
            "ppo --resume nan moments": (1, "non-finite"),
            "ppo --resume missing": (1, "no run folder"),
            "ppo --resume bc run": (1, "'bc' run, not a 'ppo' run"),
            "bc --resume pickled": (1, "cannot be read"),
            "bc --run file": (2, "not a directory"),
            "ppo --ray empty": (2, "--ray"),
            "make_dataset --ray empty": (2, "--ray"),
            "belief --batch > rows": (1, "no training step ran"),
            "belief_report --json dir": (2, "--json: .* is a directory"),
            "search_distill header bomb": (1, "sane size"),
            "search_distill empty held-out": (1, "no held-out rows"),
            "search_labels --out file": (2, "not a directory"),
        },
    )
    assert files_of(nan_ppo) == before  # the good checkpoint stays
    for name in "abcdeg":
        assert not (tmp_path / name).exists(), name  # nothing was written
    assert not (tmp_path / "sd").exists()


# ------------------------------------------------------------------- resumed runs, in-process


@pytest.mark.train
@pytest.mark.parametrize("how", STATE_DAMAGE)
def test_a_damaged_state_never_replaces_the_good_checkpoint(bc_run, tmp_path, capsys, how):
    run = copy_run(bc_run, tmp_path / "run")
    doctor_state(run, how)
    before = files_of(run)
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "3"), 1, capsys, "cannot resume")
    assert files_of(run) == before


@pytest.mark.train
def test_resuming_what_is_not_this_script_s_run(bc_run, ppo_run, tmp_path, capsys):
    _exits(bc.main, _bc_args(ppo_run, "--resume", "--epochs", "3"), 1, capsys, "'ppo' run")
    _exits(bc.main, _bc_args(tmp_path, "--resume"), 1, capsys, "holds no last.pt")
    _exits(bc.main, _bc_args(bc_run, "--resume", "--epochs", "1"), 1, capsys, "raise --epochs")
    # counters of the right keys but another script's types are caught too
    run = copy_run(ppo_run, tmp_path / "ppo")
    s = run_state(run)
    s["counters"]["iteration"] = 2.5
    torch.save(s, run / "state.pt")
    _exits(ppo.main, _ppo_args(run, "--resume", "--iterations", "3"), 1, capsys, "iteration")


@pytest.mark.train
def test_a_run_that_diverges_stops_before_writing(bc_run, ppo_run, tmp_path, capsys, monkeypatch):
    run = copy_run(bc_run, tmp_path / "bc")
    before = files_of(run)
    real = bc.fit_chunk

    def poisoned(net, *args):
        out = real(net, *args)
        with torch.no_grad():
            next(net.parameters()).view(-1)[0] = float("nan")
        return out

    monkeypatch.setattr(bc, "fit_chunk", poisoned)  # finite losses, NaN weights
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "2"), 1, capsys, "non-finite|not finite")
    assert files_of(run) == before
    monkeypatch.setattr(bc, "fit_chunk", lambda *a: (float("nan"), 0.0, 1))  # a NaN loss
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "2"), 1, capsys, "not finite")
    assert files_of(run) == before
    run = copy_run(ppo_run, tmp_path / "ppo")
    before = files_of(run)
    monkeypatch.setattr(ppo, "ppo_update", lambda *a: {"pg_loss": float("nan"), "v_loss": 1.0})
    _exits(ppo.main, _ppo_args(run, "--resume", "--iterations", "2"), 1, capsys, "pg_loss")
    assert files_of(run) == before


@pytest.mark.train
def test_a_tiny_budget_still_trains_once(tmp_path, capsys):
    run = tmp_path / "run"
    row = bc.main(_bc_args(run, "--epochs", "5", "--minutes", "1e-9"))
    assert row["epoch"] == 1 and load_network(run / "last.pt")[1]["epoch"] == 1
