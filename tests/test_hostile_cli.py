"""Every CLI under hostile input, run as a user would (``python -m ...`` in a subprocess).

The contract: bad usage exits 2, a bad input file exits 1, each with one clear line on
stderr (argparse adds its usage line), and never a traceback. The inputs named in the
issue run in subprocesses (four at a time, to keep the suite fast); the many further
argument checks call the same ``main`` in-process and assert the exit status 2.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sichuan_env.play import main as play_main
from sichuan_env.replay import main as replay_main
from sichuan_env.replay import replay

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.json"))
ROOT = Path(__file__).resolve().parents[1]
CLOSED = object()
"""stdin closed (the process starts without a file descriptor 0)."""


def _run_all(cases: dict[str, tuple[list[str], object]]) -> dict[str, subprocess.CompletedProcess]:
    """Run ``{label: (argv after python, stdin)}`` four at a time; stdin is bytes, None or CLOSED."""
    out: dict[str, subprocess.CompletedProcess] = {}
    labels = list(cases)
    for start in range(0, len(labels), 4):
        procs = {}
        for label in labels[start : start + 4]:
            argv, stdin = cases[label]
            kwargs: dict = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "cwd": ROOT}
            if stdin is CLOSED:
                # close fd 0 in the child: Python then has sys.stdin = None
                kwargs["preexec_fn"] = lambda: __import__("os").close(0)
                kwargs["stdin"] = subprocess.DEVNULL
            else:
                kwargs["stdin"] = subprocess.PIPE
            proc = subprocess.Popen([sys.executable, *argv], **kwargs)
            procs[label] = (proc, stdin)
        for label, (proc, stdin) in procs.items():
            data = stdin if isinstance(stdin, bytes) else None
            try:
                stdout, stderr = proc.communicate(data, timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            out[label] = subprocess.CompletedProcess(
                proc.args,
                proc.returncode,
                stdout.decode("utf-8", "replace"),
                stderr.decode("utf-8", "replace"),
            )
    return out


def _check(results, expected: dict[str, int]) -> None:
    problems = []
    for label, code in expected.items():
        r = results[label]
        if r.returncode != code or "Traceback" in r.stderr + r.stdout:
            problems.append(f"{label}: exit {r.returncode} (want {code})\n{r.stderr[-1500:]}")
        elif code and not r.stderr.strip():
            problems.append(f"{label}: exit {code} without a message on stderr")
    assert not problems, "\n\n".join(problems)


@pytest.fixture(scope="module")
def record_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("records")
    good = json.loads(GOLDEN[0].read_text())
    files = {}

    def put(name, content):
        path = d / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        files[name] = str(path)

    put("latin1.json", json.dumps(good).encode() + "é".encode("latin-1"))
    put("nested.json", "[" * 200_000 + "]" * 200_000)
    nest = json.dumps({**good, "rules": "NEST"})
    put("nested_rules.json", nest.replace('"NEST"', "[" * 5000 + "]" * 5000))
    put("actions5.json", json.dumps({**good, "actions": 5}))
    put("rules_null.json", json.dumps({**good, "rules": None}))
    put("wall_null.json", json.dumps({**good, "wall": None}))
    put("dealer_huge.json", json.dumps({**good, "dealer": 10**400}))
    put("seat_text.json", json.dumps({**good, "actions": [["1", a] for _, a in good["actions"]]}))
    put("list.json", "[1, 2, 3]")
    put("empty.json", "")
    put("good.json", json.dumps(good))
    (d / "folder.json").mkdir()
    files["folder.json"] = str(d / "folder.json")
    files["missing.json"] = str(d / "missing.json")
    return files


SUBPROCESS_FILES = ("latin1.json", "nested.json", "actions5.json", "rules_null.json")
SUBPROCESS_FILES += ("missing.json", "folder.json")


def test_replay_hostile_files(record_files):
    f = record_files
    cases = {k: (["-m", "sichuan_env.replay", f[k], "--all"], None) for k in SUBPROCESS_FILES}
    cases["stdin closed, waiting"] = (["-m", "sichuan_env.replay", f["good.json"]], CLOSED)
    cases["stdin not UTF-8"] = (["-m", "sichuan_env.replay", f["good.json"]], b"\xff\xfe\n" * 500)
    cases["record on stdin"] = (
        ["-m", "sichuan_env.replay", "-"],
        Path(f["good.json"]).read_bytes(),
    )
    cases["bad seat"] = (["-m", "sichuan_env.replay", f["good.json"], "--seat", "7"], None)
    results = _run_all(cases)
    expected = dict.fromkeys(SUBPROCESS_FILES, 1)
    expected.update(
        {"stdin closed, waiting": 0, "stdin not UTF-8": 0, "record on stdin": 0, "bad seat": 2}
    )
    _check(results, expected)
    scores = json.loads(Path(f["good.json"]).read_text())["result"]["scores"]
    for label in ("stdin closed, waiting", "stdin not UTF-8", "record on stdin"):
        assert f"result: {scores}" in results[label].stdout, label
    assert "not UTF-8" in results["latin1.json"].stderr
    assert "nested too deeply" in results["nested.json"].stderr


def test_replay_more_hostile_files_in_process(record_files, capsys, monkeypatch):
    f = record_files
    for name in sorted(set(f) - set(SUBPROCESS_FILES) - {"good.json"}):
        assert replay_main([f[name], "--all"]) == 1, name
        err = capsys.readouterr().err
        assert err.startswith("sichuan-replay: ") and err.count("\n") == 1, (name, err)
    # waiting for key presses when input ends or is closed: the rest is printed
    scores = json.loads(Path(f["good.json"]).read_text())["result"]["scores"]
    for exc in (EOFError(), RuntimeError("input(): lost sys.stdin")):

        def read(prompt, exc=exc):
            raise exc

        record = json.loads(Path(f["good.json"]).read_text())
        assert replay(record, None, wait=True, read=read) == 0
        assert f"result: {scores}" in capsys.readouterr().out
    # "-" with closed or garbage stdin
    monkeypatch.setattr(sys, "stdin", None)
    assert replay_main(["-", "--all"]) == 1
    assert "standard input is closed" in capsys.readouterr().err


def test_play_hostile_input():
    play = ["-m", "sichuan_env.play", "--seed", "3"]
    cases = {
        "superscript two": (play, "²\n".encode()),
        "stdin closed": (play, CLOSED),
        "stdin at EOF": (play, b""),
        "negative seed": (["-m", "sichuan_env.play", "--seed", "-1"], None),
    }
    results = _run_all(cases)
    _check(
        results,
        {
            "superscript two": 1,  # rejected as not legal, then the end of input quits
            "stdin closed": 1,
            "stdin at EOF": 1,
            "negative seed": 2,
        },
    )
    assert "'²' is not legal now" in results["superscript two"].stdout
    assert "stdin is closed" in results["stdin closed"].stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--seed", "x"],
        ["--seat", "4"],
        ["--opponents", "nobody"],
        ["--opponents", "random", "random"],
        ["--opponents", ""],
        ["--preset", "bogus"],
    ],
)
def test_play_bad_usage_in_process(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        play_main(argv)
    assert exit_.value.code == 2
    assert "sichuan-play: error: " in capsys.readouterr().err


def test_evaluate_hostile_arguments(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ev = ["-m", "sichuan_env.agents.eval", "--quiet"]
    cases = {
        "walls 0": ([*ev, "--walls", "0"], None),
        "walls -5": ([*ev, "--walls", "-5"], None),
        "bogus preset": ([*ev, "--preset", "bogus"], None),
        "seed -1": ([*ev, "--seed", "-1"], None),
        "unknown agent": ([*ev, "--lineup", "heuristic", "foo", "random", "random"], None),
        "json under a file": ([*ev, "--walls", "50000", "--json", str(blocker / "x.json")], None),
        "hand_eval peers foo": (["-m", "benchmarks.hand_eval", "--peers", "foo"], None),
    }
    results = _run_all(cases)
    _check(results, dict.fromkeys(cases, 2))
    # rejected before the run: 50,000 walls would take minutes
    assert "duplicate match" not in results["json under a file"].stdout
    assert "--json" in results["json under a file"].stderr
    assert "registered names" in results["unknown agent"].stderr


def _blocked(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    return str(blocker / "x.json")


BAD_USAGE = {
    "sichuan_env.agents.eval.cli": [
        ["--walls", str(10**12)],
        ["--walls", "many"],
        ["--lineup", "heuristic", "random", "random"],
        ["--lineup", "heuristic", "random", "random", "x.pt"],
        ["--json", "{tmp}"],
        ["--json", "{blocked}"],
    ],
    "benchmarks.hand_eval": [
        ["--hands", "0"],
        ["--budget", "nan"],
        ["--budget", "0"],
        ["--repeats", "0"],
        ["--seed", "-1"],
        ["--single", "x"],
        ["--json", "{blocked}"],
    ],
    "benchmarks.engine": [
        ["--budget", "-1"],
        ["--envs", "0"],
        ["--hands", str(10**9)],
        ["--peers", "foo"],
        ["--json", "{tmp}"],
    ],
    "benchmarks.env": [
        ["--envs", "-3"],
        ["--budget", "inf"],
        ["--agents", "foo"],
        ["--peers", "foo"],
        ["--json", "{blocked}"],
    ],
    "sichuan_env.demo": [["--hands", "-5"], ["--hands", "0"], ["--hands", "1e9"]],
    "benchmarks.collector_ab": [
        ["no-such-ref-xyz"],
        ["HEAD", "--pairs", "0"],
        ["HEAD", "--envs", "0"],
        ["HEAD", "--json", "{blocked}"],
    ],
}


@pytest.mark.parametrize(
    ("module", "argv"), [(m, a) for m, cases in BAD_USAGE.items() for a in cases]
)
def test_more_bad_usage_in_process(module, argv, tmp_path, capsys):
    argv = [a.format(tmp=tmp_path, blocked=_blocked(tmp_path)) for a in argv]
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error: " in err and "Traceback" not in err


def test_replay_reads_a_bounded_amount(tmp_path, capsys, monkeypatch):
    if Path("/dev/zero").exists():  # an endless file
        assert replay_main(["/dev/zero", "--all"]) == 1
        assert "larger than 16 MB" in capsys.readouterr().err
    import sichuan_env.replay as replay_module

    monkeypatch.setattr(replay_module, "MAX_BYTES", 1 << 20)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"pad": "x" * (2 << 20)}))
    assert replay_main([str(big), "--all"]) == 1
    assert "larger than 1 MB" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_a_reader_that_goes_away_is_no_traceback():
    # `| true` closes the pipe before the CLI writes; each CLI stops with status 1, quietly
    py = sys.executable
    golden = str(GOLDEN[0])
    commands = {
        "evaluate": f"'{py}' -m sichuan_env.agents.eval --walls 2 --quiet",
        "replay": f"'{py}' -m sichuan_env.replay '{golden}' --all",
        "play": f"yes 0 | '{py}' -m sichuan_env.play --seed 1",
    }
    procs = {
        k: subprocess.Popen(
            ["bash", "-c", f"{c} | true; exit ${{PIPESTATUS[-2]}}"],
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        for k, c in commands.items()
    }
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, (name, proc.returncode, err[-1000:])
        assert b"Traceback" not in err, (name, err[-1000:])
