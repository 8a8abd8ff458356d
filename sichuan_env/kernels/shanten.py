"""Exact shanten over ``uint8[27]`` count vectors (docs/rules.md §5).

``shanten = min over complete targets T of |T minus H| - 1`` where ``H`` is
the concealed part (exposed melds inferred from its size: ``k`` melds for
``3k+1`` and ``3k+2`` tiles), the targets are standard shapes (``k`` melds +
a pair) or, for 13/14 tiles, seven pairs (a quad is two pairs); every target
count is at most 4, and with a void suit no target holds a tile of it. The
standard part adds the per-suit distances of ``tables.DIST`` over every split
of the melds and the pair between the suits; seven pairs adds per-suit slot
counts stored in the same word.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .agari import scan

VOID_WORD = np.uint64(0xFFFFFFFFF0)
"""A void suit's word: only the empty target (other fields 15 = unreachable), no pair slots."""


@njit
def _fields(w: np.uint64) -> tuple:
    """(no-pair distances for m = 0..4, with-pair distances for m = 0..4)."""
    a = (
        np.int64(w & np.uint64(15)),
        np.int64((w >> np.uint64(8)) & np.uint64(15)),
        np.int64((w >> np.uint64(16)) & np.uint64(15)),
        np.int64((w >> np.uint64(24)) & np.uint64(15)),
        np.int64((w >> np.uint64(32)) & np.uint64(15)),
    )
    b = (
        np.int64((w >> np.uint64(4)) & np.uint64(15)),
        np.int64((w >> np.uint64(12)) & np.uint64(15)),
        np.int64((w >> np.uint64(20)) & np.uint64(15)),
        np.int64((w >> np.uint64(28)) & np.uint64(15)),
        np.int64((w >> np.uint64(36)) & np.uint64(15)),
    )
    return a, b


@njit
def standard_distance(w0: np.uint64, w1: np.uint64, w2: np.uint64, melds: int) -> int:
    """Least tiles to add so the three suits hold ``melds`` melds and one pair."""
    a0, b0 = _fields(w0)
    a1, b1 = _fields(w1)
    a2, b2 = _fields(w2)
    best = 99
    for m0 in range(melds + 1):
        for m1 in range(melds - m0 + 1):
            m2 = melds - m0 - m1
            x = a0[m0] + a1[m1]
            d = min(b0[m0] + a1[m1] + a2[m2], x + b2[m2], a0[m0] + b1[m1] + a2[m2])
            best = min(best, d)
    return best


@njit
def seven_pairs_distance(w0: np.uint64, w1: np.uint64, w2: np.uint64) -> np.int64:
    """Least tiles to add for seven pairs from the suits' slot counts."""
    m5 = np.uint64(31)
    m4 = np.uint64(15)
    s40 = np.uint64(40)
    s48 = np.uint64(48)
    free = np.int64(((w0 >> s40) & m5) + ((w1 >> s40) & m5) + ((w2 >> s40) & m5))
    one = np.int64(((w0 >> s48) & m4) + ((w1 >> s48) & m4) + ((w2 >> s48) & m4))
    need = 7 - min(free, np.int64(7))
    take = min(one, need)
    return take + 2 * (need - take)


@njit
def shanten_from_words(w0: np.uint64, w1: np.uint64, w2: np.uint64, n: int, void: int) -> int:
    """``shanten`` from the suits' ``DIST`` words (``n`` tiles, 3k+1 or 3k+2)."""
    if void == 0:
        w0 = VOID_WORD
    elif void == 1:
        w1 = VOID_WORD
    elif void == 2:
        w2 = VOID_WORD
    melds = (n - 1) // 3
    # literal meld counts let LLVM unroll the split loops (4x faster than a runtime bound)
    if melds == 4:
        best = standard_distance(w0, w1, w2, 4)
    elif melds == 3:
        best = standard_distance(w0, w1, w2, 3)
    elif melds == 2:
        best = standard_distance(w0, w1, w2, 2)
    elif melds == 1:
        best = standard_distance(w0, w1, w2, 1)
    else:
        best = standard_distance(w0, w1, w2, 0)
    if n >= 13:
        qd = seven_pairs_distance(w0, w1, w2)
        best = min(best, qd)
    return best - 1


@njit
def shanten(counts: np.ndarray, void: int, dist: np.ndarray) -> int:
    """Shanten of a ``3k + 1`` or ``3k + 2`` concealed part: -1 complete, 0 tenpai.

    ``void`` is 0..2, or -1 for plain shanten.
    """
    k0, k1, k2, n0, n1, n2, _ = scan(counts)
    return shanten_from_words(dist[k0], dist[k1], dist[k2], n0 + n1 + n2, void)
