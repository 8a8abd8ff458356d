"""Say what is happening: a cold numba compile is one stderr line, a log record, a bar note,
and reported times leave it out (sichuan_env._jit, _cli.run, _progress)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sichuan_env import _jit_time as _jit
from sichuan_env._jit import njit
from sichuan_env._progress import JitColumn, Stopwatch, progress_bar

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """
from sichuan_env._jit import njit

@njit
def twice(a):
    return 2 * a
"""


def _run_tool(tmp_path: Path, cache: Path) -> subprocess.CompletedProcess:
    """A process that runs as a project tool (argv[0] sichuan-*) and compiles one kernel."""
    (tmp_path / "kmod.py").write_text(KERNEL)
    code = textwrap.dedent(f"""
        import sys
        sys.argv[0] = "sichuan-probe"
        sys.path.insert(0, {str(tmp_path)!r})
        import kmod
        assert kmod.twice(21) == 42
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_DISABLE_JIT", None)
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True,
        env=env, cwd=ROOT, timeout=600, check=False,
    )  # fmt: skip


def test_a_cold_compile_is_one_line_on_stderr_and_a_warm_one_is_silent(tmp_path):
    cache = tmp_path / "numba-cache"
    cold = _run_tool(tmp_path, cache)
    assert cold.returncode == 0, cold.stderr
    lines = cold.stderr.splitlines()
    assert len(lines) == 1, cold.stderr
    assert lines[0].startswith("sichuan-probe: compiling numba kernels on a cold cache")
    assert "about 20-60 s" in lines[0] and str(cache) in lines[0]
    warm = _run_tool(tmp_path, cache)
    assert warm.returncode == 0 and warm.stderr == "", warm.stderr


def test_the_library_logs_it_once(monkeypatch, caplog):
    monkeypatch.setattr(_jit, "_announced", False)
    monkeypatch.setattr(_jit._jit_log, "propagate", True)
    monkeypatch.setattr(_jit._jit_log, "handlers", [])
    monkeypatch.setattr(_jit, "tool_name", lambda: None)
    monkeypatch.setattr(_jit, "_time", _jit.JitTime())
    with caplog.at_level(logging.INFO, logger="sichuan_env.jit"):
        _jit._cache_miss("/somewhere/__pycache__")
        _jit._cache_miss("/somewhere/__pycache__")
    notes = [r for r in caplog.records if r.name == "sichuan_env.jit"]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO
    assert "cold cache" in notes[0].getMessage()
    assert _jit.jit_time().misses == 2


def test_tool_name(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/sichuan-eval", "--walls", "2"])
    assert _jit.tool_name() == "sichuan-eval"
    monkeypatch.setattr(sys, "argv", ["-m"])
    monkeypatch.setattr(
        sys, "orig_argv", ["python", "-m", "sichuan_env.agents.eval"], raising=False
    )
    assert _jit.tool_name() == "python -m sichuan_env.agents.eval"
    monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "pytest"], raising=False)
    monkeypatch.setattr(sys, "argv", ["/venv/lib/pytest/__main__.py"])
    assert _jit.tool_name() is None


def test_reported_times_leave_the_compile_out_and_the_bar_says_it(monkeypatch):
    fake = _jit.JitTime()
    monkeypatch.setattr(_jit, "_time", fake)
    watch = Stopwatch()
    assert JitColumn().render(None).plain == ""
    fake.since = time.perf_counter() - 3  # a cold compile under way for 3 s
    assert JitColumn().render(None).plain.startswith("compiling numba kernels (3 s")
    fake.since = None
    fake.compiling += 30.0  # as if the span had compiled for 30 s
    assert watch.seconds < 1.0 and watch.jit_seconds == pytest.approx(30.0)
    assert watch.describe().endswith("30.0 s more compiling numba kernels, not counted")
    columns = progress_bar(disable=True).columns
    assert type(columns[0]).__name__ == "SpinnerColumn" and isinstance(columns[-1], JitColumn)


def test_compiles_are_timed():
    before = _jit.jit_time().total

    @njit(cache=False)
    def plus_one(a):
        return a + 1

    assert plus_one(1) == 2
    assert _jit.jit_time().total > before
