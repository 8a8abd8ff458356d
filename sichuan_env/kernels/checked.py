"""Validating entry points for the Python facades in ``hand.py``, single and batched.

The plain kernels trust their input (the engine only feeds them valid
hands). The single-call wrappers check the length, the counts and the hand
size in the same pass and report a status instead of a wrong answer:
``BAD_COUNT``: some count exceeds 4; ``BAD_SIZE``: a length other
than 27 or a tile count the function does not accept. They have explicit
signatures, so any other argument type raises ``TypeError`` at dispatch
(which the facades turn into a conversion), and they hold the GIL:
releasing it costs more than they take.

The batched kernels run parallel over rows after ``any_over_four`` has
checked every count in one pass over the buffer; they return their results
and the number of rows of a size they do not accept (the facade then finds
the first one). Their loops are kept branch-free where possible so LLVM can
vectorise them.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from .._jit import njit
from .agari import mask_to_row, row_key, scan, waits_from_keys, win_from_flags, win_from_keys
from .layout import BAD_COUNT, BAD_SIZE
from .shanten import shanten_from_words

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
def is_win_code(counts: np.ndarray, flags: np.ndarray) -> int:
    """1 complete, 0 not, or a negative status."""
    n, k0, k1, k2, _, _, _, odd = _status(counts, 4)
    if n < 0:
        return n
    return 1 if win_from_keys(k0, k1, k2, n, odd, flags) else 0


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
    return shanten_from_words(dist[k0], dist[k1], dist[k2], n, void)


@njit(types.int64(_U8, _U32), nogil=False)
def waits_code_plain(counts: np.ndarray, waits: np.ndarray) -> int:
    """``waits_code`` without a void suit (one argument fewer to dispatch)."""
    n, k0, k1, k2, n0, n1, n2, _ = _status(counts, 2)
    if n < 0:
        return n
    return waits_from_keys(k0, k1, k2, n0, n1, n2, -1, waits)


@njit(types.int64(_U8, _U64), nogil=False)
def shanten_code_plain(counts: np.ndarray, dist: np.ndarray) -> int:
    """``shanten_code`` without a void suit (one argument fewer to dispatch)."""
    n, k0, k1, k2, _, _, _, _ = _status(counts, 6)
    if n < 0:
        return n + SHANTEN_STATUS
    return shanten_from_words(dist[k0], dist[k1], dist[k2], n, -1)


@njit(parallel=True)
def is_win_batch(counts: np.ndarray, flags: np.ndarray) -> tuple:
    """``bool[N]`` over ``uint8[N, 27]`` (counts <= 4) and the number of rows not 3k+2 <= 14."""
    n = counts.shape[0]
    out = np.empty(n, dtype=np.bool_)
    bad = 0
    for i in numba.prange(n):
        f0 = np.int64(flags[row_key(counts, i, 0)])
        f1 = np.int64(flags[row_key(counts, i, 9)])
        f2 = np.int64(flags[row_key(counts, i, 18)])
        size = (f0 >> 2) + (f1 >> 2) + (f2 >> 2)
        ok = (size <= MAX_CONCEALED) & (size % 3 == 2)
        out[i] = ok & win_from_flags(f0, f1, f2)
        bad += int(not ok)
    return out, bad


@njit(parallel=True)
def waits_batch(counts: np.ndarray, voids: np.ndarray, waits: np.ndarray) -> tuple:
    """``bool[N, 27]`` waits and the number of rows not 3k+1 <= 13."""
    n = counts.shape[0]
    out = np.empty((n, 27), dtype=np.bool_)
    bad = 0
    for i in numba.prange(n):
        k0, k1, k2, n0, n1, n2, _ = scan(counts[i])
        size = n0 + n1 + n2
        mask = 0
        if size <= MAX_CONCEALED and size % 3 == 1:
            mask = waits_from_keys(k0, k1, k2, n0, n1, n2, voids[i], waits)
        else:
            bad += 1
        mask_to_row(mask, out[i])
    return out, bad


@njit(parallel=True)
def shanten_batch(counts: np.ndarray, voids: np.ndarray, dist: np.ndarray) -> tuple:
    """``int8[N]`` shanten and the number of rows that are 3k or above 14 tiles."""
    n = counts.shape[0]
    out = np.empty(n, dtype=np.int8)
    bad = 0
    s56 = np.uint64(56)
    m6 = np.uint64(63)
    for i in numba.prange(n):
        w0 = dist[row_key(counts, i, 0)]
        w1 = dist[row_key(counts, i, 9)]
        w2 = dist[row_key(counts, i, 18)]
        size = np.int64(((w0 >> s56) & m6) + ((w1 >> s56) & m6) + ((w2 >> s56) & m6))
        if size <= MAX_CONCEALED and size % 3 != 0:
            out[i] = shanten_from_words(w0, w1, w2, size, voids[i])
        else:
            out[i] = 0
            bad += 1
    return out, bad
