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

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import sichuan_env.train.belief.report as belief_report
import sichuan_env.train.belief.train as belief
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import load_network, save_checkpoint
from sichuan_env.train.belief import batches
from sichuan_env.train.data import dataset as ds
from sichuan_env.train.data import make_dataset
from sichuan_env.train.policy import bc, ppo, search_distill, search_labels

from sichuan_env import RuleConfig
from sichuan_env._cli import float_arg, int_arg
from sichuan_env._npz import Spec, safe_load_npz

ROOT = Path(__file__).resolve().parents[1]
META = {
    "rules": RuleConfig().to_dict(),
    "method": "test",
    "command": "pytest",
    "commit": "x",
    "wall_clock_s": 0.0,
}
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


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


# ------------------------------------------------------------------ numeric option types


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "0", "-1", "1e309", "2", "x", ""])
def test_float_arg_refuses_nan_inf_and_out_of_range(text):
    with pytest.raises(argparse.ArgumentTypeError):
        float_arg(0, 1)(text)


def test_float_arg_bounds():
    assert float_arg(0, 1)("1") == 1.0 and float_arg(0, 1, include_lo=True)("0") == 0.0
    assert float_arg(0, math.inf, finite=False)("inf") == math.inf
    with pytest.raises(argparse.ArgumentTypeError):
        float_arg(0, math.inf, finite=False)("nan")
    with pytest.raises(argparse.ArgumentTypeError, match="integer"):
        int_arg(0, 10)(str(2**70))


NUMERIC = {
    "bc": (
        bc.main,
        [],
        [
            ("--lr", "inf"),
            ("--lr", "nan"),
            ("--lr", "0"),
            ("--lr", "-1e-3"),
            ("--minutes", "nan"),
            ("--minutes", "0"),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--seed", str(2**70)),
            ("--seed", "-1"),
            ("--batch", "0"),
            ("--envs", "10000000"),
            ("--epochs", "1.5"),
        ],
    ),
    "ppo": (
        ppo.main,
        [],
        [
            ("--lr", "inf"),
            ("--clip", "nan"),
            ("--gamma", "2"),
            ("--kl-coef", "-1"),
            ("--minutes", "-inf"),
            ("--seed", str(2**64)),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--minibatch", "0"),
            ("--reward-scale", "1e400"),
        ],
    ),
    "belief": (
        belief.main,
        ["--data", "x"],
        [
            ("--lr", "inf"),
            ("--dropout", "1"),
            ("--weight-decay", "-1"),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--seed", str(2**70)),
            ("--batch", "-5"),
            ("--seq-lr-mult", "nan"),
        ],
    ),
    "search_distill": (
        search_distill.main,
        ["--labels", "x", "--run", "y"],
        [
            ("--lr", "inf"),
            ("--minutes", "nan"),
            ("--margins", "nan"),
            ("--floor", "inf"),
            ("--val-mod", "1"),
            ("--seed", str(2**70)),
        ],
    ),
    "search_labels": (
        search_labels.main,
        ["--out", "x"],
        [("--p-label", "0"), ("--p-label", "nan"), ("--hands", "-5"), ("--seed", str(2**70))],
    ),
    "make_dataset": (
        make_dataset.main,
        ["--out", "x"],
        [("--hands", "0"), ("--seed", "-1"), ("--envs", "0")],
    ),
    "belief_report": (
        belief_report.main,
        ["none", "--data", "x"],
        [("--max-rows", "-5"), ("--games", "0"), ("--threads", "nan")],
    ),
}


@pytest.mark.parametrize(
    ("cli", "flag", "value"),
    [(cli, f, v) for cli, (_, _, cases) in NUMERIC.items() for f, v in cases],
)
def test_every_numeric_flag_is_range_checked(cli, flag, value, capsys):
    main, base, _ = NUMERIC[cli]
    with pytest.raises(SystemExit) as info:
        main([*base, flag, value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and flag in err and "Traceback" not in err, err


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
    root = tmp_path_factory.mktemp("data")
    kw = {"seed": 3, "num_envs": 4, "shard_rows": 1000, "progress": False}
    make_dataset.generate(["heuristic"] * 4, 6, root / "v2", obs_version=2, **kw)
    make_dataset.generate(["heuristic"] * 4, 2, root / "v1", obs_version=1, **kw)
    return root


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """A small label set and a prior network to start from."""
    root = tmp_path_factory.mktemp("labels")
    search_labels.main(
        [
            "--out",
            str(root / "lab"),
            "--hands",
            "8",
            "--shard-hands",
            "4",
            "--samples",
            "2",
            "--draws",
            "1",
            "--threads",
            "1",
        ]
    )
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=8, layers=1, aux=True, prior=True))
    save_checkpoint(root / "init.pt", net, META)
    return root


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _state(run: Path) -> dict:
    return torch.load(run / "state.pt", weights_only=True)


def _doctor_state(run: Path, how: str) -> None:
    """Damage a run's ``state.pt`` one way."""
    path = run / "state.pt"
    s = _state(run)
    moments = next(iter(s["optimizer"]["state"].values()))
    if how == "nan moments":
        moments["exp_avg"].view(-1)[0] = float("nan")
    elif how == "inf second moments":
        moments["exp_avg_sq"].view(-1)[-1] = float("inf")
    elif how == "mis-shaped moments":
        moments["exp_avg"] = torch.zeros(3)
    elif how == "nan lr":
        s["optimizer"]["param_groups"][0]["lr"] = float("nan")
    elif how == "sparse moments":
        moments["exp_avg"] = moments["exp_avg"].to_sparse()
    elif how in ("counter text", "counter float", "counter negative", "counter bool"):
        key = next(iter(s["counters"]))
        s["counters"][key] = {
            "counter text": "3",
            "counter float": 1.5,
            "counter negative": -1,
            "counter bool": True,
        }[how]
    elif how == "counter missing":
        s["counters"].pop(next(iter(s["counters"])))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
        return
    elif how == "pickled":
        torch.save({"optimizer": argparse.Namespace(evil=1), "counters": {}}, path)
        return
    elif how == "not a state":
        torch.save([1, 2, 3], path)
        return
    elif how == "missing":
        path.unlink()
        return
    torch.save(s, path)


STATE_DAMAGE = [
    "nan moments",
    "inf second moments",
    "mis-shaped moments",
    "nan lr",
    "sparse moments",
    "counter text",
    "counter float",
    "counter negative",
    "counter bool",
    "counter missing",
    "truncated",
    "pickled",
    "not a state",
    "missing",
]


# ---------------------------------------------------- the issue's inputs, as a user runs them


@pytest.mark.train
def test_the_issue_inputs_as_subprocesses(bc_run, ppo_run, data, labels, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    nan_ppo = _copy(ppo_run, tmp_path / "nan_ppo")
    _doctor_state(nan_ppo, "nan moments")
    pickled = _copy(bc_run, tmp_path / "pickled")
    _doctor_state(pickled, "pickled")
    bomb = _copy(labels / "lab", tmp_path / "bomb")
    _header_bomb(bomb / "shard-00000.npz")
    shifted = _copy(labels / "lab", tmp_path / "shifted")
    for shard in sorted(shifted.glob("shard-*.npz")):  # no hand index divisible by --val-mod
        _rewrite_shard(shard, hand=lambda h: h * 3 + 1)
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
    before = _files(nan_ppo)
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
    assert _files(nan_ppo) == before  # the good checkpoint stays
    for name in "abcdeg":
        assert not (tmp_path / name).exists(), name  # nothing was written
    assert not (tmp_path / "sd").exists()


# ------------------------------------------------------------------- resumed runs, in-process


@pytest.mark.train
@pytest.mark.parametrize("how", STATE_DAMAGE)
def test_a_damaged_state_never_replaces_the_good_checkpoint(bc_run, tmp_path, capsys, how):
    run = _copy(bc_run, tmp_path / "run")
    _doctor_state(run, how)
    before = _files(run)
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "3"), 1, capsys, "cannot resume")
    assert _files(run) == before


@pytest.mark.train
def test_resuming_what_is_not_this_script_s_run(bc_run, ppo_run, tmp_path, capsys):
    _exits(bc.main, _bc_args(ppo_run, "--resume", "--epochs", "3"), 1, capsys, "'ppo' run")
    _exits(bc.main, _bc_args(tmp_path, "--resume"), 1, capsys, "holds no last.pt")
    _exits(bc.main, _bc_args(bc_run, "--resume", "--epochs", "1"), 1, capsys, "raise --epochs")
    # counters of the right keys but another script's types are caught too
    run = _copy(ppo_run, tmp_path / "ppo")
    s = _state(run)
    s["counters"]["iteration"] = 2.5
    torch.save(s, run / "state.pt")
    _exits(ppo.main, _ppo_args(run, "--resume", "--iterations", "3"), 1, capsys, "iteration")


@pytest.mark.train
def test_a_run_that_diverges_stops_before_writing(bc_run, ppo_run, tmp_path, capsys, monkeypatch):
    run = _copy(bc_run, tmp_path / "bc")
    before = _files(run)
    real = bc.fit_chunk

    def poisoned(net, *args):
        out = real(net, *args)
        with torch.no_grad():
            next(net.parameters()).view(-1)[0] = float("nan")
        return out

    monkeypatch.setattr(bc, "fit_chunk", poisoned)  # finite losses, NaN weights
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "2"), 1, capsys, "non-finite|not finite")
    assert _files(run) == before
    monkeypatch.setattr(bc, "fit_chunk", lambda *a: (float("nan"), 0.0, 1))  # a NaN loss
    _exits(bc.main, _bc_args(run, "--resume", "--epochs", "2"), 1, capsys, "not finite")
    assert _files(run) == before
    run = _copy(ppo_run, tmp_path / "ppo")
    before = _files(run)
    monkeypatch.setattr(ppo, "ppo_update", lambda *a: {"pg_loss": float("nan"), "v_loss": 1.0})
    _exits(ppo.main, _ppo_args(run, "--resume", "--iterations", "2"), 1, capsys, "pg_loss")
    assert _files(run) == before


@pytest.mark.train
def test_a_tiny_budget_still_trains_once(tmp_path, capsys):
    run = tmp_path / "run"
    row = bc.main(_bc_args(run, "--epochs", "5", "--minutes", "1e-9"))
    assert row["epoch"] == 1 and load_network(run / "last.pt")[1]["epoch"] == 1


# ---------------------------------------------------------------------------- belief runs


def _belief_args(data: Path, run: Path, *extra: str) -> list[str]:
    return [
        "--data",
        str(data),
        "--run",
        str(run),
        "--batch",
        "16",
        "--hidden",
        "8",
        "--layers",
        "1",
        "--tile-channels",
        "4",
        "--val-every",
        "2",
        "--val-rows",
        "40",
        "--eval-every",
        "1000",
        "--threads",
        "1",
        "--quiet",
        *extra,
    ]


@pytest.mark.train
def test_belief_runs_do_something_or_fail(data, tmp_path, capsys, monkeypatch):
    v2 = data / "v2"
    _exits(
        belief.main,
        _belief_args(v2, tmp_path / "big", "--batch", "100000"),
        1,
        capsys,
        "no training step ran",
    )
    assert not (tmp_path / "big").exists()
    run = tmp_path / "run"
    belief.main(_belief_args(v2, run, "--epochs", "1", "--minutes", "1e-9"))  # one step
    assert json.loads((run / "last.json").read_text())["steps"] == 1
    for how in ("nan moments", "mis-shaped moments", "counter text", "pickled", "truncated"):
        bad = _copy(run, tmp_path / how.replace(" ", "_"))
        _doctor_state(bad, how)
        before = _files(bad)
        _exits(belief.main, _belief_args(v2, bad, "--resume"), 1, capsys, "cannot resume")
        assert _files(bad) == before, how
    before = _files(run)
    monkeypatch.setattr(belief, "losses", lambda out, b, heads: {"x": torch.tensor(float("nan"))})
    resume = _belief_args(v2, run, "--resume", "--epochs", "1")  # the run's own --epochs
    _exits(belief.main, resume, 1, capsys, "diverged")
    assert _files(run) == before


def test_belief_data_must_agree(data, tmp_path, capsys):
    other = _copy(data / "v2", tmp_path / "other")
    meta = json.loads((other / "dataset.json").read_text())
    meta["rules"] = {**meta["rules"], "base_points": 2}
    (other / "dataset.json").write_text(json.dumps(meta))
    both = _belief_args(data / "v2", tmp_path / "r")
    both[1:2] = [str(data / "v2"), str(other)]  # --data v2 other
    _exits(belief.main, both, 1, capsys, "--mixed-rules")
    ds.check_compatible([data / "v2", other], [ds.read_meta(data / "v2"), meta], mixed_rules=True)
    _exits(belief.main, ["--data", str(data / "v1"), "--run", str(tmp_path / "s")], 1, capsys, "v2")
    with pytest.raises(ValueError, match="observation v1"):
        ds.check_compatible(
            [data / "v2", data / "v1"], [ds.read_meta(data / "v2"), ds.read_meta(data / "v1")]
        )


# ------------------------------------------------------------------------------ datasets


def _meta_with(folder: Path, dst: Path, **changes) -> Path:
    out = _copy(folder, dst)
    meta = json.loads((out / "dataset.json").read_text())
    for k, v in changes.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    (out / "dataset.json").write_text(json.dumps(meta))
    return out


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"obs_version": None}, "obs_version"),
        ({"obs_version": "2"}, "obs_version"),
        ({"obs_version": 9}, "obs_version"),
        ({"obs_shape": [10**7, 27]}, "obs_shape"),
        ({"obs_shape": [83, 27]}, "obs_shape"),
        ({"rules": {"bogus": 1}}, "rules"),
        ({"rules": None}, "rules"),
        ({"decisions": -1}, "decisions"),
    ],
)
def test_dataset_json_is_checked(data, tmp_path, changes, match):
    folder = _meta_with(data / "v2", tmp_path / "d", **changes)
    with pytest.raises(ValueError, match=match):
        ds.read_meta(folder)
    with pytest.raises(ValueError, match=match):
        next(ds.iter_batches(folder))


def _replace_shard(folder: Path, table: pa.Table) -> Path:
    shard = ds.shards(folder)[0]
    pq.write_table(table, shard)
    return shard


def test_shards_are_checked_against_the_metadata(data, tmp_path):
    v2 = data / "v2"
    # a v1 shard in a v2 folder: refused, not zero-padded
    folder = _copy(v2, tmp_path / "mixed")
    shutil.copy(ds.shards(data / "v1")[0], ds.shards(folder)[0])
    heads = belief.BeliefConfig().head_specs
    for read in (
        lambda: next(ds.iter_batches(folder)),
        lambda: ds.read_shard(ds.shards(folder)[0]),
        lambda: batches.load_shard(ds.shards(folder)[0], heads),
    ):
        with pytest.raises(ValueError, match=r"column 'obs' is fixed_size_binary\[281\]"):
            read()
    table = pq.read_table(ds.shards(v2)[0])
    # a missing column, a column of another type, nulls, a truncated file
    cases = {
        "no column 'mask'": table.drop_columns(["mask"]),
        "column 'game_id' is int32": table.set_column(
            table.schema.get_field_index("game_id"),
            "game_id",
            table.column("game_id").cast(pa.int32()),
        ),
        "'game_id' holds 1 null": table.set_column(
            table.schema.get_field_index("game_id"),
            "game_id",
            pa.array([None, *table.column("game_id").to_pylist()[1:]], pa.int64()),
        ),
    }
    for match, bad in cases.items():
        folder = _copy(v2, tmp_path / f"c{len(match)}")
        _replace_shard(folder, bad)
        with pytest.raises(ValueError, match=match):
            next(ds.iter_batches(folder))
        with pytest.raises(ValueError, match=match):
            batches.load_shard(ds.shards(folder)[0], heads)
    folder = _copy(v2, tmp_path / "truncated")
    shard = ds.shards(folder)[0]
    shard.write_bytes(shard.read_bytes()[:-200])
    with pytest.raises(ValueError, match="cannot read the decisions shard"):
        ds.read_shard(shard)
    with pytest.raises(SystemExit) as info:  # the training CLI: one line, exit 1
        belief.main(_belief_args(folder, tmp_path / "run"))
    assert info.value.code == 1 and not (tmp_path / "run").exists()
    games = _copy(v2, tmp_path / "games")
    g = pq.read_table(games / "games.parquet")
    pq.write_table(
        g.set_column(
            g.schema.get_field_index("offsets"),
            "offsets",
            g.column("offsets").cast(pa.list_(pa.int32())),
        ),
        games / "games.parquet",
    )
    with pytest.raises(ValueError, match="column 'offsets' is list<element: int32>"):
        ds.EventTable(games)


def test_null_list_elements_are_refused(data, tmp_path):
    table = pq.read_table(ds.shards(data / "v2")[0])
    values = table.column("tenpai").combine_chunks().flatten().to_pylist()
    values[1] = None
    col = pa.FixedSizeListArray.from_arrays(pa.array(values, pa.bool_()), 3)
    folder = _copy(data / "v2", tmp_path / "d")
    _replace_shard(folder, table.set_column(table.schema.get_field_index("tenpai"), "tenpai", col))
    with pytest.raises(ValueError, match="'tenpai' holds 1 null"):
        next(ds.iter_batches(folder))


def test_iter_batches_reads_a_subset_of_columns_and_checks_its_arguments(data):
    b = next(ds.iter_batches(data / "v2", 7, columns=["action", "game_id"]))
    assert sorted(b) == ["action", "game_id"] and len(b["action"]) == 7
    b = next(ds.iter_batches(data / "v2", 5, columns=["obs"]))
    assert b["obs"].shape == (5, 232, 27)
    for kwargs, match in (
        ({"columns": ["nope"]}, "not decision columns"),
        ({"columns": "action"}, "list of column names"),
        ({"columns": []}, "not decision columns"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -5}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"batch_size": 2.5}, "batch_size"),
    ):
        with pytest.raises(ValueError, match=match):
            next(ds.iter_batches(data / "v2", **kwargs))


def test_decision_dataset_checks_its_arguments(data):
    for kwargs in (
        {"shuffle_buffer": -1},
        {"shuffle_buffer": 2.5},
        {"batch_size": 0},
        {"seed": -1},
        {"seed": "x"},
    ):
        with pytest.raises(ValueError):
            ds.DecisionDataset(data / "v2", **kwargs)
    rows = list(ds.DecisionDataset(data / "v2", batch_size=64, shuffle_buffer=16, seed=1))
    assert len(rows) == ds.read_meta(data / "v2")["decisions"]


# ----------------------------------------------------------------------------- .npz files


def _header_bomb(path: Path, shape=(10**11, 83, 27)) -> None:
    """Replace ``obs`` of an ``.npz`` by a header declaring ``shape`` and 1 KB of data."""
    import io
    import zipfile

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files if k != "obs"}
    np.savez_compressed(path, **arrays)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "|u1", "fortran_order": False, "shape": shape}
    )
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr("obs.npy", buf.getvalue() + bytes(1024))


def _rewrite_shard(path: Path, **changes) -> None:
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    for k, f in changes.items():
        arrays[k] = f(arrays[k]).astype(arrays[k].dtype)
    np.savez_compressed(path, **arrays)


def test_safe_load_npz_checks_headers_before_reading(tmp_path):
    good = tmp_path / "good.npz"
    np.savez_compressed(good, a=np.zeros((4, 3), np.float32), b=np.arange(4))
    spec = {"a": Spec(("n", 3), kinds="f"), "b": Spec(("n",), kinds="iu")}
    assert safe_load_npz(good, spec)["a"].shape == (4, 3)
    bomb = tmp_path / "bomb.npz"
    shutil.copy(good, bomb)
    _header_bomb_named(bomb, "a", (10**11, 3), "<f4")
    uneven = tmp_path / "uneven.npz"
    np.savez(uneven, a=np.zeros((4, 3), np.float32), b=np.arange(5))
    cases = {
        "sane size": (bomb, spec),
        r"'b' has 5 for the size 'n', other arrays 4": (uneven, spec),
        "has dtype float32, expected kind 'iu'": (good, {"a": Spec(("n", 3), kinds="iu")}),
        r"has shape \(4, 3\), expected \('n', 2\)": (good, {"a": Spec(("n", 2), kinds="f")}),
        r"lacks the arrays \['c'\]": (good, {"c": Spec(("n",))}),
        "no such file": (tmp_path / "none.npz", spec),
    }
    for match, (path, expected) in cases.items():
        with pytest.raises(ValueError, match=match):
            safe_load_npz(path, expected)
    obj = tmp_path / "obj.npz"
    np.savez(obj, a=np.array([{"x": 1}] * 4, dtype=object))
    with pytest.raises(ValueError, match="not a plain array"):
        safe_load_npz(obj, {"a": Spec(("n",))})
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(ValueError, match="not a file"):
        safe_load_npz(junk, spec)


def _header_bomb_named(path: Path, name: str, shape, descr: str) -> None:
    import io
    import zipfile

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files if k != name}
    np.savez_compressed(path, **arrays)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{name}.npy", buf.getvalue() + bytes(64))


@pytest.mark.train
def test_label_shards_and_rows_are_checked(labels, tmp_path, capsys, monkeypatch):
    lab = labels / "lab"
    bomb = _copy(lab, tmp_path / "bomb")
    _header_bomb(bomb / "shard-00000.npz")
    with pytest.raises(ValueError, match="label shard array 'obs' is not an array of a sane size"):
        search_labels.load_labels(bomb)
    wrong = _copy(lab, tmp_path / "wrong")
    with np.load(wrong / "shard-00001.npz") as z:
        arrays = {k: z[k] for k in z.files}
    np.savez_compressed(
        wrong / "shard-00001.npz", **{**arrays, "gain": arrays["gain"].astype(np.float64)}
    )
    with pytest.raises(
        ValueError, match=r"shard-00001\.npz: label shard array 'gain' has dtype float64"
    ):
        search_labels.load_labels(wrong)
    # a row whose base action is not the heuristic's: one line, exit 1, nothing written
    moved = _copy(lab, tmp_path / "moved")
    for shard in sorted(moved.glob("shard-*.npz")):
        with np.load(shard) as z:
            arrays = {k: z[k] for k in z.files}
        two = np.flatnonzero((arrays["cands"] >= 0).sum(1) >= 2)
        if len(two):
            arrays["base"][two[0]] = 1 - arrays["base"][two[0]] if arrays["base"][two[0]] < 2 else 0
            np.savez_compressed(shard, **arrays)
    args = [
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
        "--val-mod",
        "2",
        "--select-walls",
        "0",
    ]
    _exits(search_distill.main, ["--labels", str(moved), *args], 1, capsys, "heuristic action")
    assert not (tmp_path / "sd").exists()
    # a NaN estimate never picks the margin
    monkeypatch.setattr(
        search_distill,
        "margin_table",
        lambda *a, **k: [
            {
                "margin": 0.5,
                "gain_per_hand": float("nan"),
                "ci95": 0.0,
                "deviation_rate": 0.0,
                "off_candidate": 0,
            }
        ],
    )
    _exits(search_distill.main, ["--labels", str(lab), *args], 1, capsys, "not finite")
    assert not (tmp_path / "sd").exists()
