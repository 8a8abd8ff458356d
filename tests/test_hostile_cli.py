"""Every CLI under hostile input, run as a user would (``python -m ...`` in a subprocess).

The contract: bad usage exits 2, a bad input file exits 1, each with one clear line on
stderr (argparse adds its usage line), and never a traceback. The processes of one
table run concurrently to keep the suite fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_replay_hostile_files(record_files):
    f = record_files
    bad = [k for k in f if k != "good.json"]
    cases = {k: (["-m", "sichuan_env.replay", f[k], "--all"], None) for k in bad}
    cases["stdin closed, waiting"] = (["-m", "sichuan_env.replay", f["good.json"]], CLOSED)
    cases["stdin at EOF, waiting"] = (["-m", "sichuan_env.replay", f["good.json"]], b"")
    cases["stdin not UTF-8"] = (["-m", "sichuan_env.replay", f["good.json"]], b"\xff\xfe\n" * 500)
    cases["record on stdin"] = (
        ["-m", "sichuan_env.replay", "-"],
        Path(f["good.json"]).read_bytes(),
    )
    cases["garbage on stdin"] = (["-m", "sichuan_env.replay", "-"], b"\xff{")
    cases["closed stdin as file"] = (["-m", "sichuan_env.replay", "-"], CLOSED)
    cases["bad seat"] = (["-m", "sichuan_env.replay", f["good.json"], "--seat", "7"], None)
    cases["no file"] = (["-m", "sichuan_env.replay"], None)
    results = _run_all(cases)
    expected = {k: 1 for k in bad}
    expected.update(
        {
            "stdin closed, waiting": 0,
            "stdin at EOF, waiting": 0,
            "stdin not UTF-8": 0,
            "record on stdin": 0,
            "garbage on stdin": 1,
            "closed stdin as file": 1,
            "bad seat": 2,
            "no file": 2,
        }
    )
    _check(results, expected)
    scores = json.loads(Path(f["good.json"]).read_text())["result"]["scores"]
    for label in ("stdin closed, waiting", "stdin at EOF, waiting", "record on stdin"):
        assert f"result: {scores}" in results[label].stdout, label
    assert "not UTF-8" in results["latin1.json"].stderr
    assert "nested too deeply" in results["nested.json"].stderr


def test_play_hostile_input():
    play = ["-m", "sichuan_env.play", "--seed", "3"]
    cases = {
        "superscript two": (play, "²\n".encode()),
        "not UTF-8": (play, b"\xff\xfe\x80\n"),
        "stdin closed": (play, CLOSED),
        "stdin at EOF": (play, b""),
        "negative seed": (["-m", "sichuan_env.play", "--seed", "-1"], None),
        "text seed": (["-m", "sichuan_env.play", "--seed", "x"], None),
        "seat 4": (["-m", "sichuan_env.play", "--seat", "4"], None),
        "unknown opponent": (["-m", "sichuan_env.play", "--opponents", "nobody"], None),
        "two opponents": (["-m", "sichuan_env.play", "--opponents", "random", "random"], None),
        "bad preset": (["-m", "sichuan_env.play", "--preset", "bogus"], None),
    }
    results = _run_all(cases)
    _check(
        results,
        {
            "superscript two": 1,  # rejected as not legal, then the end of input quits
            "not UTF-8": 1,
            "stdin closed": 1,
            "stdin at EOF": 1,
            "negative seed": 2,
            "text seed": 2,
            "seat 4": 2,
            "unknown opponent": 2,
            "two opponents": 2,
            "bad preset": 2,
        },
    )
    assert "'²' is not legal now" in results["superscript two"].stdout
    assert "registered names: heuristic, random" in results["unknown opponent"].stderr


def test_evaluate_hostile_arguments(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ev = ["-m", "agents.evaluate", "--quiet"]
    cases = {
        "walls 0": ([*ev, "--walls", "0"], None),
        "walls -5": ([*ev, "--walls", "-5"], None),
        "walls huge": ([*ev, "--walls", str(10**12)], None),
        "walls text": ([*ev, "--walls", "many"], None),
        "bogus preset": ([*ev, "--preset", "bogus"], None),
        "seed -1": ([*ev, "--seed", "-1"], None),
        "unknown agent": ([*ev, "--lineup", "heuristic", "foo", "random", "random"], None),
        "three agents": ([*ev, "--lineup", "heuristic", "random", "random"], None),
        "json under a file": ([*ev, "--walls", "50000", "--json", str(blocker / "x.json")], None),
        "json is a folder": ([*ev, "--walls", "50000", "--json", str(tmp_path)], None),
    }
    results = _run_all(cases)
    _check(results, dict.fromkeys(cases, 2))
    for label in ("json under a file", "json is a folder"):
        # rejected before the run: 50,000 walls would take minutes
        assert "duplicate match" not in results[label].stdout
        assert "--json" in results[label].stderr
    assert "registered names" in results["unknown agent"].stderr


def test_benchmark_and_demo_hostile_arguments(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = {
        "hand_eval peers foo": (["-m", "benchmarks.hand_eval", "--peers", "foo"], None),
        "hand_eval hands 0": (["-m", "benchmarks.hand_eval", "--hands", "0"], None),
        "hand_eval budget nan": (["-m", "benchmarks.hand_eval", "--budget", "nan"], None),
        "hand_eval repeats 0": (["-m", "benchmarks.hand_eval", "--repeats", "0"], None),
        "hand_eval json": (
            ["-m", "benchmarks.hand_eval", "--json", str(blocker / "x.json")],
            None,
        ),
        "engine budget -1": (["-m", "benchmarks.engine", "--budget", "-1"], None),
        "engine envs 0": (["-m", "benchmarks.engine", "--envs", "0"], None),
        "engine peers foo": (["-m", "benchmarks.engine", "--peers", "foo"], None),
        "env envs -3": (["-m", "benchmarks.env", "--envs", "-3"], None),
        "env budget inf": (["-m", "benchmarks.env", "--budget", "inf"], None),
        "env agents foo": (["-m", "benchmarks.env", "--agents", "foo"], None),
        "demo hands -5": (["-m", "sichuan_env", "--hands", "-5"], None),
    }
    _check(_run_all(cases), dict.fromkeys(cases, 2))
