"""The only place that decides how kernels are compiled.

Every kernel is compiled with ``cache=True`` (so tests and tools reuse the
on-disk machine code instead of recompiling) and ``nogil=True``. Setting
``NUMBA_DISABLE_JIT=1`` turns every kernel into plain Python for debugging and
coverage runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}  # integer logic only: no fastmath


def njit(fn: Callable[..., Any] | Any = None, **overrides: Any) -> Any:
    """``numba.njit`` with the project defaults.

    Use bare (``@njit``), with options (``@njit(parallel=True)``) or with an
    explicit signature (``@njit(types.int64(...))``, compiled eagerly).
    """
    options = {**JIT_OPTIONS, **overrides}
    if callable(fn) and not isinstance(fn, numba.core.typing.templates.Signature):
        return numba.njit(**options)(fn)
    if fn is not None:
        return numba.njit(fn, **options)
    return numba.njit(**options)
