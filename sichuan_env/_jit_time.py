"""How long numba spends on the project's kernels, and saying so when it compiles.

``sichuan_env._jit`` calls ``_cache_miss`` when a kernel finds no usable cached
machine code and times every outermost ``Dispatcher.compile`` call through
``_timed_compile``. The first miss of a process logs one ``INFO`` line on the
``sichuan_env.jit`` logger; ``announce_to_stderr(prog)`` shows it as one line
``prog: ...`` on stderr (the command-line tools), and ``jit_time()`` /
``compiling_since()`` feed the reported times and progress bars
(``sichuan_env._progress``).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher

_jit_log = logging.getLogger("sichuan_env.jit")
COLD_SECONDS = "20-60 s"
"""Roughly how long a cold cache takes to fill for one tool (2 cores; more for training)."""


class JitTime:
    """Seconds spent in numba compiles of this project's kernels, in this process."""

    def __init__(self) -> None:
        self.compiling = 0.0  # outermost compile calls that compiled something (a cache miss)
        self.loading = 0.0  # outermost compile calls that only loaded cached machine code
        self.misses = 0  # kernels compiled (no usable cached machine code)
        self.depth = 0  # nesting of compile calls (under numba's global compiler lock)
        self.since: float | None = None  # when the current compile with a miss began
        self._start = 0.0
        self._missed = False

    @property
    def total(self) -> float:
        """Compiling and loading: what a tool's reported time leaves out."""
        return self.compiling + self.loading


_time = JitTime()
_announced = False


def jit_time() -> JitTime:
    """The process's ``JitTime`` (live: read its fields before and after a span)."""
    return _time


def compiling_since() -> float | None:
    """``time.perf_counter()`` at which the compile running now began, None when none runs.

    Only compiles that found no cached machine code count (a cold cache), not cache loads.
    """
    return _time.since


def cache_location(cache_path: str) -> str:
    """Where the kernels' machine code is cached, in words (``$NUMBA_CACHE_DIR`` or beside the sources)."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return f"$NUMBA_CACHE_DIR ({env})"
    return f"__pycache__ folders beside the sources ({cache_path}, ...)"


class StderrNote(logging.Handler):
    """Each record as one line ``prog: message`` on the stderr of the moment (rich redirects it)."""

    def __init__(self, prog: str) -> None:
        super().__init__(logging.INFO)
        self.prog = prog

    def emit(self, record: logging.LogRecord) -> None:
        """Print the line (nothing when stderr is closed)."""
        try:
            print(f"{self.prog}: {record.getMessage()}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass


def announce_to_stderr(prog: str) -> None:
    """Show this module's notes (the cold-compile line) as ``prog: ...`` on stderr, once.

    What the command-line tools do (``sichuan_env._cli.run``); the notes then stay off
    the root logger's handlers.
    """
    if not any(isinstance(h, StderrNote) for h in _jit_log.handlers):
        _jit_log.addHandler(StderrNote(prog))
        _jit_log.setLevel(logging.INFO)
        _jit_log.propagate = False


_PROJECT_MODULES = ("sichuan_env", "train", "agents", "benchmarks", "research", "examples")


def tool_name() -> str | None:
    """The project command-line tool this process runs, None when it is not one.

    A ``sichuan-*`` console script, or ``python -m`` of one of the project's modules
    (``sys.orig_argv``: at import time ``sys.argv[0]`` is still ``-m``).
    """
    script = os.path.basename(sys.argv[0]) if sys.argv else ""
    if script.startswith("sichuan-"):
        return script
    orig = list(getattr(sys, "orig_argv", []))
    if "-m" in orig[:-1]:
        module = orig[orig.index("-m") + 1]
        if module.partition(".")[0] in _PROJECT_MODULES:
            return f"python -m {module}"
    folder = os.path.basename(os.path.dirname(os.path.abspath(sys.argv[0]))) if script else ""
    if script.endswith(".py") and folder == "examples":  # python examples/cleanrl_ppo.py
        return script
    return None


def _cache_miss(cache_path: str) -> None:
    """A kernel found no usable cached machine code: it is compiled now."""
    global _announced
    _time.misses += 1
    if _time.depth:
        _time._missed = True
        if _time.since is None:
            _time.since = _time._start
    if not _announced:
        _announced = True
        if not _jit_log.hasHandlers() and (prog := tool_name()) is not None:
            announce_to_stderr(prog)  # a tool compiling while it imports, before its main()
        _jit_log.info(
            "compiling numba kernels on a cold cache (once: about %s; cached in %s)",
            COLD_SECONDS,
            cache_location(cache_path),
        )


def _timed_compile(self: Dispatcher, sig: Any) -> Any:
    """``Dispatcher.compile``, timed into ``jit_time()`` (outermost calls only)."""
    with global_compiler_lock:  # reentrant; numba takes it anyway: compiles are serial
        outer = _time.depth == 0
        if outer:
            _time._start, _time._missed = time.perf_counter(), False
        _time.depth += 1
        try:
            return type(self).compile(self, sig)
        finally:
            _time.depth -= 1
            if outer:
                dt = time.perf_counter() - _time._start
                if _time._missed:
                    _time.compiling += dt
                else:
                    _time.loading += dt
                _time.since = None
