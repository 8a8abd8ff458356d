"""Validating entry points for the Python facades in ``hand.py``.

The plain kernels trust their input (the engine only feeds them valid
hands). These wrappers check the length, the counts and the hand size in the
same pass, inside numba, and report a status instead of a wrong answer:
``BAD_COUNT`` (-1): some count exceeds 4; ``BAD_SIZE`` (-2): a length other
than 27 or a tile count the function does not accept. Batched variants
return the first bad row and its status.

The single-call entry points have explicit signatures, so any other argument
type raises ``TypeError`` at dispatch, which the facades turn into a
conversion. They hold the GIL: releasing it costs more than they take.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from .._jit import njit
from .agari import mask_to_row, scan, waits_from_keys, win_from_keys
from .shanten import shanten_from_keys

BAD_COUNT = -1
BAD_SIZE = -2
MAX_CONCEALED = 14
SHANTEN_STATUS = -100
"""``shanten_code`` reports a status ``s`` as ``s + SHANTEN_STATUS`` (shanten itself can be -1)."""

_U8 = types.Array(types.uint8, 1, "C")
_U32 = types.Array(types.uint32, 1, "C")
_U64 = types.Array(types.uint64, 1, "C")


@njit
def _status(counts: np.ndarray, residues: int) -> tuple:
    """Scan a hand and check it: ``(status or n, k0, k1, k2, n0, n1, n2, odd)``.

    ``residues`` is a bit set of accepted ``n % 3`` (bit 1: 3k+1, bit 2: 3k+2).
    """
    if counts.shape[0] != 27:
        return BAD_SIZE, 0, 0, 0, 0, 0, 0, 0
    k0, k1, k2, n0, n1, n2, odd = scan(counts)
    if n0 < 0:
        return BAD_COUNT, 0, 0, 0, 0, 0, 0, 0
    n = n0 + n1 + n2
    if n > MAX_CONCEALED or not (residues >> (n % 3)) & 1:
        return BAD_SIZE, 0, 0, 0, 0, 0, 0, 0
    return n, k0, k1, k2, n0, n1, n2, odd


@njit(types.int64(_U8, _U8), nogil=False)
def is_win_code(counts: np.ndarray, complete: np.ndarray) -> int:
    """1 complete, 0 not, or a negative status."""
    n, k0, k1, k2, _, _, _, odd = _status(counts, 4)
    if n < 0:
        return n
    return 1 if win_from_keys(k0, k1, k2, n, odd, complete) else 0


@njit(types.int64(_U8, types.int64, _U32), nogil=False)
def waits_code(counts: np.ndarray, void: int, waits: np.ndarray) -> int:
    """The 27-bit wait mask, or a negative status."""
    n, k0, k1, k2, n0, n1, n2, _ = _status(counts, 2)
    if n < 0:
        return n
    return waits_from_keys(k0, k1, k2, n0, n1, n2, void, waits)


@njit(types.int64(_U8, types.int64, _U64), nogil=False)
def shanten_code(counts: np.ndarray, void: int, dist: np.ndarray) -> int:
    """Shanten (-1..8), or ``status + SHANTEN_STATUS``."""
    n, k0, k1, k2, _, _, _, _ = _status(counts, 6)
    if n < 0:
        return n + SHANTEN_STATUS
    return shanten_from_keys(k0, k1, k2, n, void, dist)


@njit
def _first_bad(status: np.ndarray) -> tuple:
    for i in range(status.shape[0]):
        if status[i] < 0:
            return i, np.int64(status[i])
    return -1, np.int64(0)


@njit(parallel=True)
def is_win_batch_checked(counts: np.ndarray, complete: np.ndarray) -> tuple:
    """``bool[N]`` results and ``(first bad row, status)``; row -1 when all are valid."""
    n = counts.shape[0]
    out = np.empty(n, dtype=np.bool_)
    status = np.empty(n, dtype=np.int8)
    for i in numba.prange(n):
        m, k0, k1, k2, _, _, _, odd = _status(counts[i], 4)
        status[i] = min(m, 0)
        out[i] = m >= 0 and win_from_keys(k0, k1, k2, m, odd, complete)
    row, code = _first_bad(status)
    return out, row, code


@njit(parallel=True)
def waits_batch_checked(counts: np.ndarray, voids: np.ndarray, waits: np.ndarray) -> tuple:
    """``bool[N, 27]`` waits and ``(first bad row, status)``."""
    n = counts.shape[0]
    out = np.empty((n, 27), dtype=np.bool_)
    status = np.empty(n, dtype=np.int8)
    for i in numba.prange(n):
        m, k0, k1, k2, n0, n1, n2, _ = _status(counts[i], 2)
        status[i] = min(m, 0)
        mask = 0
        if m >= 0:
            mask = waits_from_keys(k0, k1, k2, n0, n1, n2, voids[i], waits)
        mask_to_row(mask, out[i])
    row, code = _first_bad(status)
    return out, row, code


@njit(parallel=True)
def shanten_batch_checked(counts: np.ndarray, voids: np.ndarray, dist: np.ndarray) -> tuple:
    """``int8[N]`` shanten and ``(first bad row, status)``."""
    n = counts.shape[0]
    out = np.empty(n, dtype=np.int8)
    status = np.empty(n, dtype=np.int8)
    for i in numba.prange(n):
        m, k0, k1, k2, _, _, _, _ = _status(counts[i], 6)
        status[i] = min(m, 0)
        out[i] = shanten_from_keys(k0, k1, k2, m, voids[i], dist) if m >= 0 else 0
    row, code = _first_bad(status)
    return out, row, code
