"""Progress bars that say when numba is compiling (a cold cache), so a bar at 0 is not a hang.

``progress_bar(*columns)`` is rich's ``Progress`` on stderr with a spinner in front
(it turns while the bar does not move) and ``JitColumn`` at the end: "compiling
numba kernels (N s)" while a compile that found no cached machine code runs
(``sichuan_env._jit.compiling_since``), nothing otherwise.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task
from rich.text import Text

from ._jit_time import compiling_since, jit_time


class JitColumn(ProgressColumn):
    """The note "compiling numba kernels (N s)" while a cold compile runs, else nothing."""

    def render(self, task: Task) -> Text:
        """The note, or an empty text."""
        since = compiling_since()
        if since is None:
            return Text("")
        return Text(
            f"compiling numba kernels ({time.perf_counter() - since:.0f} s; once, then cached)",
            style="yellow",
        )


def progress_bar(*columns: Any, disable: bool = False, **kwargs: Any) -> Progress:
    """``Progress(SpinnerColumn(), *columns, JitColumn())`` on stderr (``kwargs`` pass through)."""
    kwargs.setdefault("console", Console(stderr=True))
    return Progress(SpinnerColumn(), *columns, JitColumn(), disable=disable, **kwargs)


class Stopwatch:
    """A span's wall time less what numba spent compiling and loading kernels in this process.

    The time a tool reports for a match or a benchmark (``seconds``) is the work, not a
    cold cache's compile; ``describe()`` says how much compiling it left out. Work in
    other processes (Ray workers) compiles there, inside ``seconds``.
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self._jit0 = jit_time().total
        self._compiling0 = jit_time().compiling

    @property
    def jit_seconds(self) -> float:
        """Seconds of numba compiling and cache loading in the span."""
        return jit_time().total - self._jit0

    @property
    def seconds(self) -> float:
        """Wall seconds of the span, numba's compiling and loading left out."""
        return max(0.0, time.perf_counter() - self._t0 - self.jit_seconds)

    def describe(self) -> str:
        """``"12.3 s"``, with ``"; 35.0 s more compiling numba kernels"`` after a cold compile."""
        text = f"{self.seconds:.1f} s"
        compiled = jit_time().compiling - self._compiling0
        if compiled >= 0.05:
            text += f"; {compiled:.1f} s more compiling numba kernels, not counted"
        return text


__all__ = ["JitColumn", "Stopwatch", "progress_bar"]
