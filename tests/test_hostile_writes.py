"""Writes that fail part-way, output folders that hold another run, and the one rule for both.

The contract (docs/guarantees.md, "Output folders and writes"): every writer of state,
results, metadata and plots goes through ``sichuan_env._files.write_atomic``, so a write
that fails part-way (a full disk: a monkeypatched write, or ``RLIMIT_FSIZE`` in a
subprocess) leaves the old file byte for byte and the CLI exits 1 with one line; nothing
is rewritten that did not change; and an output folder that holds a tool's output is
resumed (``--resume``), replaced (``--overwrite``) or refused with a one-line hint.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sichuan_env._files as files
from sichuan_env._cli import run
from sichuan_env._files import claim_output, save_figure, write_atomic, write_if_changed

ROOT = Path(__file__).resolve().parents[1]
OLD = b'{"old": "a good file, to be kept byte for byte"}\n'


@pytest.fixture
def full_disk(monkeypatch):
    """Every ``write_atomic`` writes a few bytes, then fails as a full disk does."""

    def emit(f, data):
        f.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_emit", emit)


def _one_line(err: str, prog: str = "") -> str:
    """The single error line of ``err`` (no traceback, nothing else that says error)."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if "error" in ln or "cannot" in ln]
    assert len(lines) == 1, err
    assert prog in lines[0], lines[0]
    return lines[0]


def _status(call, prog: str) -> int:
    """The exit status of ``call`` run as a console script (``run``, then ``SystemExit``)."""
    try:
        return run(call, prog)
    except SystemExit as exc:
        return int(exc.code or 0)


def _no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ---- the helper --------------------------------------------------------------------------


def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, full_disk):
    f = tmp_path / "state.json"
    f.write_bytes(OLD)
    os.chmod(f, 0o640)
    for data in ("new text", b"new bytes", ["a", b"b"], lambda fh: fh.write(b"x")):
        with pytest.raises(OSError, match="No space"):
            write_atomic(f, data)
        assert f.read_bytes() == OLD
    _no_temporaries(tmp_path)


def test_write_atomic_kinds_permissions_and_unchanged_files(tmp_path):
    f = tmp_path / "x.bin"
    write_atomic(f, ["a", b"b", "c"])
    assert f.read_bytes() == b"abc"
    os.chmod(f, 0o600)
    write_atomic(f, lambda fh: np.save(fh, np.arange(3)))
    assert np.load(f).tolist() == [0, 1, 2] and (f.stat().st_mode & 0o777) == 0o600
    with pytest.raises(ZeroDivisionError):  # a writer that raises: nothing replaced
        write_atomic(f, lambda fh: 1 / 0)
    assert np.load(f).tolist() == [0, 1, 2]
    g = tmp_path / "meta.json"
    assert write_if_changed(g, "{}") and not write_if_changed(g, "{}")
    inode = g.stat().st_ino
    assert not write_if_changed(g, b"{}") and g.stat().st_ino == inode  # not rewritten
    assert write_if_changed(g, "[]") and g.read_text() == "[]"
    _no_temporaries(tmp_path)


def test_figures_are_written_whole(tmp_path, full_disk):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure()
    png = tmp_path / "plot.png"
    png.write_bytes(OLD)
    with pytest.raises(OSError):
        save_figure(fig, png)
    assert png.read_bytes() == OLD
    plt.close(fig)


def test_a_full_disk_by_rlimit_fsize_in_a_subprocess(tmp_path):
    """A real EFBIG from the kernel (``RLIMIT_FSIZE``): the old file survives, one line, exit 1."""
    f = tmp_path / "results.json"
    f.write_bytes(OLD)
    code = (
        "import resource, sys\n"
        "from sichuan_env._cli import run, write_atomic\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))\n"
        f"sys.exit(run(lambda: write_atomic(__import__('pathlib').Path({str(f)!r}), 'x' * 4096),"
        " 'prog'))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert r.returncode == 1, r.stderr
    assert re.fullmatch(r"prog: error: .*File too large\n", r.stderr), r.stderr
    assert f.read_bytes() == OLD
    _no_temporaries(tmp_path)


def test_run_maps_os_errors_to_one_line(capsys):
    def boom():
        raise PermissionError(errno.EACCES, "Permission denied", "/x/meta.json")

    assert run(boom, "prog") == 1
    assert capsys.readouterr().err == "prog: error: /x/meta.json: Permission denied\n"


def test_the_output_folder_rule(tmp_path):
    out = tmp_path / "run"
    owned = ("last.pt", "metrics.jsonl", "tb")
    assert claim_output(out, owned, resume=False, overwrite=False) is False  # nothing there
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert claim_output(out, owned, resume=False, overwrite=False) is False  # not a run
    (out / "last.pt").write_bytes(b"w")
    (out / "tb").mkdir()
    with pytest.raises(ValueError, match=r"holds a run already \(last.pt, tb\): pass --resume"):
        claim_output(out, owned, resume=False, overwrite=False, what="run")
    with pytest.raises(ValueError, match=r"holds a ladder already .*pass --overwrite"):
        claim_output(out, owned, resume=None, overwrite=False, what="ladder")
    with pytest.raises(ValueError, match="give one of them"):
        claim_output(out, owned, resume=True, overwrite=True)
    assert claim_output(out, owned, resume=True, overwrite=False) is True
    assert claim_output(out, owned, resume=False, overwrite=True, remove=False) is False
    assert (out / "last.pt").exists()  # a tool that replaces its files itself, at the end
    assert claim_output(out, owned, resume=False, overwrite=True) is False
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # only the run's own files


def test_no_writer_in_the_tree_writes_in_place():
    """Every writer of state, results, metadata and plots goes through ``sichuan_env._files``."""
    pattern = re.compile(
        r"\.write_text\(|\.write_bytes\(|\.savefig\(|torch\.save\(|np\.save|pq\.write_table\("
    )
    own = {  # writers with atomic code of their own, into an open temporary file or memory
        "sichuan_env/kernels/tables.py": "np.savez(fh,",
        "agents/checkpoint.py": "torch.save(state, f)",
        "train/value.py": "np.savez_compressed(buf,",
        "train/table_value/data.py": "np.savez_compressed(buf,",
        "train/table_value/fit.py": "torch.save(obj, buf)",
    }
    found = []
    for folder in ("sichuan_env", "agents", "train", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            name = path.relative_to(ROOT).as_posix()
            if name == "sichuan_env/_files.py":  # the helper itself
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#")[0]
                if not pattern.search(code) or "write_atomic(" in code or "lambda f" in code:
                    continue
                if own.get(name, "\0") not in code:
                    found.append(f"{name}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


# ---- each writer: a full disk keeps the old file, the CLI exits 1 with one line ------------


def test_eval_json_and_records(tmp_path, full_disk, capsys):
    from sichuan_env.agents.eval.cli import main

    out = tmp_path / "r.json"
    out.write_bytes(OLD)
    argv = ["--walls", "1", "--lineup", "random", "random", "random", "random", "--quiet"]
    assert _status(lambda: main([*argv, "--json", str(out)]), "sichuan-eval") == 1
    _one_line(capsys.readouterr().err, "sichuan-eval: error: cannot write")
    assert out.read_bytes() == OLD
    rec = tmp_path / "match"
    rec.mkdir()
    (rec / "records.jsonl").write_bytes(OLD)
    assert _status(lambda: main([*argv, "--records", str(rec), "--overwrite"]), "sichuan-eval") == 1
    _one_line(capsys.readouterr().err, "sichuan-eval: error: cannot write")
    assert (rec / "records.jsonl").read_bytes() == OLD  # replaced only whole, at the end
    _no_temporaries(rec)


def test_population_json(tmp_path, full_disk, capsys):
    from sichuan_env.agents.rule_based.population import main

    out = tmp_path / "p.json"
    out.write_bytes(OLD)
    assert _status(lambda: main(["--walls", "1", "--json", str(out)]), "population") == 1
    _one_line(capsys.readouterr().err, "population: error:")
    assert out.read_bytes() == OLD


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from sichuan_env.train.data.make_dataset import generate

    out = tmp_path_factory.mktemp("writes") / "data"
    generate(["heuristic"] * 4, 2, out, obs_version=2, seed=3, num_envs=2, progress=False)
    return out


def test_dataset_and_belief_report(dataset, tmp_path, full_disk, capsys):
    from sichuan_env.train.belief import report
    from sichuan_env.train.data.make_dataset import main

    out = tmp_path / "d"
    argv = ["--hands", "1", "--envs", "1", "--out", str(out), "--quiet"]
    assert _status(lambda: main(argv), "make_dataset") == 1
    _one_line(capsys.readouterr().err, "make_dataset: error:")
    assert not (out / "dataset.json").exists()  # never a folder that looks whole
    rep = tmp_path / "report.json"
    rep.write_bytes(OLD)
    argv = ["none", "--data", str(dataset), "--json", str(rep)]
    assert _status(lambda: report.main(argv), "report") == 1
    _one_line(capsys.readouterr().err, "report: error:")
    assert rep.read_bytes() == OLD


def test_checkpoints_and_run_state(tmp_path, full_disk):
    torch = pytest.importorskip("torch")
    from sichuan_env.agents.checkpoint import rehash
    from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
    from sichuan_env.train.common import save_run

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("last.pt", "last.json", "state.pt"):
        (run_dir / name).write_bytes(OLD)
    net = PolicyNet(PolicyConfig(hidden=8, layers=1))
    opt = torch.optim.Adam(net.parameters())
    meta = {"method": "bc", "rules": {}, "command": "", "commit": "", "wall_clock_s": 0.0}
    with pytest.raises(OSError):
        save_run(run_dir, net, opt, {"epoch": 1}, meta)
    assert (run_dir / "state.pt").read_bytes() == OLD  # the checkpoint was new, the state kept
    config = (run_dir / "last.json").read_bytes()
    with pytest.raises(OSError):
        rehash(run_dir / "last.pt")
    assert (run_dir / "last.json").read_bytes() == config


def test_label_meta_is_rewritten_only_when_it_changes_and_then_whole(tmp_path, capsys, monkeypatch):
    import sichuan_env.train.policy.search_labels as sl

    out = tmp_path / "lab"
    argv = ["--out", str(out), "--hands", "1", "--shard-hands", "1", "--samples", "2",
            "--draws", "1", "--threads", "1"]  # fmt: skip
    first = sl.main(argv)
    meta = (out / "meta.json").read_bytes()
    inode = (out / "meta.json").stat().st_ino
    again = sl.main([*argv, "--resume"])  # nothing to do, nothing rewritten
    assert (out / "meta.json").stat().st_ino == inode and again["rows"] == first["rows"]
    assert again["new_rows"] == 0 and first["rows"] == first["new_rows"] > 0
    monkeypatch.setattr(files, "_emit", lambda f, d: (_ for _ in ()).throw(OSError(28, "full")))
    grown = [*argv[:3], "2", *argv[4:], "--resume"]  # a larger run: meta.json changes
    assert _status(lambda: sl.main(grown), sl.PROG) == 1
    _one_line(capsys.readouterr().err, f"{sl.PROG}: error:")
    assert (out / "meta.json").read_bytes() == meta  # every later --resume still works
    monkeypatch.undo()
    assert sl.main([*argv, "--resume"])["rows"] == first["rows"]


def test_exit_state(tmp_path, full_disk):
    import sichuan_env.train.policy.exit as ex

    (tmp_path / "exit.json").write_bytes(OLD)
    with pytest.raises(OSError):
        ex.write_state(tmp_path, {"settings": {}, "rounds": []})
    assert (tmp_path / "exit.json").read_bytes() == OLD


def test_ladder_pair_files_and_plot(tmp_path, full_disk, capsys):
    from sichuan_env.agents.eval.ladder import main

    out = tmp_path / "L"
    argv = ["--agents", "random", "heuristic", "--walls", "2", "--out", str(out), "--quiet"]
    assert _status(lambda: main(argv), "ladder") == 1
    _one_line(capsys.readouterr().err, "ladder: error:")
    assert not list((out / "pairs").glob("*.json"))
    _no_temporaries(out / "pairs")


# ---- one rule for output folders ----------------------------------------------------------


def test_eval_records_over_an_existing_folder(tmp_path, capsys):
    from sichuan_env.agents.eval.cli import main

    rec = tmp_path / "match"
    argv = ["--walls", "1", "--lineup", "random", "random", "random", "random", "--quiet",
            "--records", str(rec)]  # fmt: skip
    main(argv)
    old = (rec / "records.jsonl").read_bytes()
    with pytest.raises(SystemExit) as err:
        main([*argv[:1], "2", *argv[2:]])
    assert err.value.code == 2 and (rec / "records.jsonl").read_bytes() == old
    assert "pass --overwrite to replace it" in _one_line(capsys.readouterr().err, "sichuan-eval")
    main([*argv[:1], "2", *argv[2:], "--overwrite"])
    assert len((rec / "records.jsonl").read_text().splitlines()) == 8
    with pytest.raises(SystemExit):
        main([*argv[:-2], "--overwrite"])  # --overwrite is for --records


@pytest.mark.parametrize(
    "module, argv",
    [
        ("sichuan_env.train.policy.bc", ["--minutes", "0.01"]),
        ("sichuan_env.train.policy.ppo", []),
        ("sichuan_env.train.belief.train", ["--data", "DATA"]),
        ("sichuan_env.train.policy.search_distill", ["--labels", "DATA", "--init", "x.pt"]),
    ],
)
def test_a_new_run_never_replaces_another(module, argv, tmp_path, dataset, capsys):
    import importlib

    mod = importlib.import_module(module)
    main = mod.main
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "best.pt").write_bytes(OLD)
    (run_dir / "metrics.jsonl").write_bytes(OLD)
    argv = [str(dataset) if a == "DATA" else a for a in argv]
    with pytest.raises(SystemExit) as err:
        main(["--run", str(run_dir), *argv])
    assert err.value.code == 2
    line = _one_line(capsys.readouterr().err, mod.PROG)
    assert "holds a run already" in line and "--resume" in line and "--overwrite" in line
    assert (run_dir / "best.pt").read_bytes() == OLD
    with pytest.raises(SystemExit):
        main(["--run", str(run_dir), "--resume", "--overwrite", *argv])
    assert (run_dir / "best.pt").read_bytes() == OLD


def test_labels_datasets_and_ladders_follow_the_same_rule(tmp_path, dataset, capsys):
    import sichuan_env.train.policy.search_labels as sl
    from sichuan_env.agents.eval.ladder import main as ladder
    from sichuan_env.train.data.make_dataset import main as make_dataset

    with pytest.raises(SystemExit) as err:
        make_dataset(["--hands", "1", "--out", str(dataset), "--quiet"])
    assert err.value.code == 2 and "--overwrite" in capsys.readouterr().err
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "meta.json").write_text("{}")
    with pytest.raises(SystemExit):
        sl.main(["--out", str(lab), "--hands", "1"])
    assert "--resume to continue it, --overwrite" in capsys.readouterr().err
    out = tmp_path / "L"
    argv = ["--agents", "random", "heuristic", "--walls", "2", "--out", str(out), "--quiet"]
    ladder(argv)
    (out / "pairs" / "stale.json").write_text("{}")
    with pytest.raises(SystemExit):
        ladder(argv)
    assert "holds a ladder already" in capsys.readouterr().err
    ladder([*argv, "--overwrite"])
    assert "stale.json" not in {p.name for p in (out / "pairs").iterdir()}


# ---- SIGKILL and Ctrl-C, then --resume -------------------------------------------------------


def _start_and_stop(argv: list[str], ready, sig: int) -> subprocess.CompletedProcess:
    """Start ``python argv``, wait (up to 5 minutes) until ``ready()``, send ``sig``."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=300)
    if sig == signal.SIGKILL:
        assert proc.returncode in (-signal.SIGKILL, 0), err
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.train
def test_labels_killed_then_resumed_count_every_row_on_disk(tmp_path):
    import signal

    import sichuan_env.train.policy.search_labels as sl

    # 60 one-hand shards: on a warm cache 6 took 0.1 s, finished before the kill could land
    args = ["--hands", "60", "--shard-hands", "1", "--samples", "2", "--draws", "1",
            "--threads", "1"]  # fmt: skip
    clean = sl.main(["--out", str(tmp_path / "clean"), *args])
    out = tmp_path / "killed"
    _start_and_stop(["-m", "sichuan_env.train.policy.search_labels", "--out", str(out), *args],
                    lambda: (out / "shard-00001.npz").exists(), signal.SIGKILL)  # fmt: skip
    json.loads((out / "meta.json").read_text())  # whole, whatever the moment of the kill
    assert len(list(out.glob("shard-*.npz"))) < 60  # killed part-way
    resumed = sl.main(["--out", str(out), *args, "--resume"])
    assert resumed["rows"] == clean["rows"] and resumed["new_rows"] <= clean["rows"]
    for k, v in sl.load_labels(out).items():
        np.testing.assert_array_equal(v, sl.load_labels(tmp_path / "clean")[k])


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_ladder_stopped_then_resumed_is_the_same_ladder(tmp_path, how):
    import signal

    from sichuan_env.agents.eval.ladder import main

    argv = ["--agents", "random", "heuristic", "defensive", "--walls", "2", "--quiet"]
    clean = main([*argv, "--out", str(tmp_path / "clean")])
    out = tmp_path / "stopped"
    r = _start_and_stop(["-m", "sichuan_env.agents.eval.ladder", *argv, "--out", str(out)],
                        lambda: any((out / "pairs").glob("*.json")), getattr(signal, how))  # fmt: skip
    if how == "SIGINT" and r.returncode:
        assert r.returncode == 130 and "Traceback" not in r.stderr, r.stderr
    pairs = list((out / "pairs").glob("*.json"))
    assert pairs and all(json.loads(p.read_text())["identity"] for p in pairs)
    resumed = main([*argv, "--out", str(out), "--resume"])
    assert resumed["ratings"] == clean["ratings"] and resumed["matrix"] == clean["matrix"]
