"""Shanten and ukeire after every discard of a ``3k+2`` hand, in one pass (docs/rules.md §5).

``discard_table(hand, void, unseen, dist, sh, uk)`` gives, for every tile
type ``t`` the hand holds, the shanten of the hand less one ``t`` and its
ukeire: the number of unseen tiles whose draw lowers that shanten. It is the
table a player ranks its discards by, and exactly what one ``shanten`` call
per (discard, draw) pair gives (``tests/test_ukeire_table.py`` checks it
against that reference).

Why it is faster than those calls: a discard and a draw change at most two
of the three suits' ``tables.DIST`` words, so the other suits are combined
once (the min-plus convolution of their per-meld distances, with the pair in
either of them) and each draw adds one suit to that combination, five terms
instead of the fifteen splits of three suits. Whether a draw lowers the
shanten is then one test of its suit word against per-field limits, made on
all ten fields at once in one 64-bit word (``_limits``, ``_lowers``). Seven
pairs adds per-suit slot counts, so it is a sum.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .agari import scan
from .shanten import VOID_WORD, _fields, shanten
from .tables import POW5

_FAR = 99
"""A distance no target reaches (larger than any sum of table fields)."""
_LOW = np.uint64(0x0F0F0F0F0F)
"""The five fields of one kind (no pair at bits ``8i``; with pair at ``8i + 4``, shifted down)."""
_GUARD = np.uint64(0x8080808080)
"""Each field's byte's top bit: the borrow guard of the packed comparison."""


@njit
def _conv(x0, x1, x2, x3, x4, y0, y1, y2, y3, y4) -> tuple:
    """Min-plus convolution of two five-term sequences (no lists: they would be heap objects)."""
    return (
        x0 + y0,
        min(x0 + y1, x1 + y0),
        min(x0 + y2, x1 + y1, x2 + y0),
        min(min(x0 + y3, x1 + y2), min(x2 + y1, x3 + y0)),
        min(min(x0 + y4, x1 + y3), min(x2 + y2, x3 + y1), x4 + y0),
    )


@njit
def _reversed(c: tuple, m: int) -> tuple:
    """``(c[m], c[m-1], ..., c[0], _FAR, ...)``: the terms ``_with`` adds to a suit's 0..4 melds."""
    if m == 4:
        return (c[4], c[3], c[2], c[1], c[0])
    if m == 3:
        return (c[3], c[2], c[1], c[0], _FAR)
    if m == 2:
        return (c[2], c[1], c[0], _FAR, _FAR)
    if m == 1:
        return (c[1], c[0], _FAR, _FAR, _FAR)
    return (c[0], _FAR, _FAR, _FAR, _FAR)


@njit
def _pair(wx: np.uint64, wy: np.uint64, m: int) -> tuple:
    """Two suits' fields combined for ``m`` melds in all, reversed for ``_with``.

    Returns ``(ra, rb)``: ``ra[i]`` is the least tiles for ``m - i`` melds
    over the two suits with no pair, ``rb[i]`` the same with the pair in one
    of them (the min-plus convolution of their fields); ``_FAR`` for ``i > m``.
    """
    ax, bx = _fields(wx)
    ay, by = _fields(wy)
    a = _conv(ax[0], ax[1], ax[2], ax[3], ax[4], ay[0], ay[1], ay[2], ay[3], ay[4])
    b1 = _conv(bx[0], bx[1], bx[2], bx[3], bx[4], ay[0], ay[1], ay[2], ay[3], ay[4])
    b2 = _conv(ax[0], ax[1], ax[2], ax[3], ax[4], by[0], by[1], by[2], by[3], by[4])
    b = (
        min(b1[0], b2[0]),
        min(b1[1], b2[1]),
        min(b1[2], b2[2]),
        min(b1[3], b2[3]),
        min(b1[4], b2[4]),
    )
    return _reversed(a, m), _reversed(b, m)


@njit
def _with(w: np.uint64, ra: tuple, rb: tuple) -> int:
    """Least tiles for the melds and a pair: one suit's word added to a ``_pair``."""
    a, b = _fields(w)
    return min(
        min(a[0] + rb[0], b[0] + ra[0]),
        min(a[1] + rb[1], b[1] + ra[1]),
        min(a[2] + rb[2], b[2] + ra[2]),
        min(a[3] + rb[3], b[3] + ra[3]),
        min(a[4] + rb[4], b[4] + ra[4]),
    )


@njit
def _limits(ra: tuple, rb: tuple, best: int) -> tuple:
    """Packed limits under which a suit word joined to ``_pair``'s ``(ra, rb)`` beats ``best``.

    The standard distance ``_with(w, ra, rb)`` is below ``best`` exactly when some
    field ``a[i] <= best - 1 - rb[i]`` or ``b[i] <= best - 1 - ra[i]``. Returns
    ``(la, lb, va, vb)``: those limits, one per byte (at most 127), and the guard
    bits of the bytes whose limit is not negative (a negative limit no field meets).
    """
    la = np.uint64(0)
    lb = np.uint64(0)
    va = np.uint64(0)
    vb = np.uint64(0)
    for i in range(5):
        xa = best - 1 - rb[i]
        xb = best - 1 - ra[i]
        at = np.uint64(8 * i)
        if xa >= 0:
            la |= np.uint64(min(xa, 127)) << at
            va |= np.uint64(0x80) << at
        if xb >= 0:
            lb |= np.uint64(min(xb, 127)) << at
            vb |= np.uint64(0x80) << at
    return la, lb, va, vb


@njit
def _lowers(w: np.uint64, la: np.uint64, lb: np.uint64, va: np.uint64, vb: np.uint64) -> bool:
    """``_with(w, ra, rb) < best`` for ``_limits(ra, rb, best)``, all ten fields at once.

    Each byte holds a limit ``l <= 127`` and a field ``x <= 15``: ``(l | 0x80) - x``
    keeps the byte's top bit exactly when ``x <= l``, and never borrows from the
    next byte.
    """
    xa = w & _LOW
    xb = (w >> np.uint64(4)) & _LOW
    return ((((la | _GUARD) - xa) & va) | (((lb | _GUARD) - xb) & vb)) != np.uint64(0)


@njit
def _slots(w: np.uint64) -> tuple:
    """(free pair slots, single tiles) of one suit's word: the seven-pairs counts."""
    free = np.int64((w >> np.uint64(40)) & np.uint64(31))
    one = np.int64((w >> np.uint64(48)) & np.uint64(15))
    return free, one


@njit
def _seven(free: int, one: int) -> int:
    """Least tiles to add for seven pairs (``shanten.seven_pairs_distance`` from summed slots)."""
    need = 7 - min(free, 7)
    take = min(one, need)
    return take + 2 * (need - take)


@njit
def _word(dist, key: int, s: int, void: int) -> np.uint64:
    return VOID_WORD if s == void else dist[key]


@njit
def _shanten_of(w: np.uint64, ra: tuple, rb: tuple, n: int, free: int, one: int) -> int:
    """Shanten of a hand of ``n`` tiles: suit word ``w`` with the other two as a ``_pair`` + slots."""
    best = _with(w, ra, rb)
    if n >= 13:
        f, o = _slots(w)
        best = min(best, _seven(free + f, one + o))
    return best - 1


@njit
def discard_table(hand, void: int, unseen, dist, sh, uk) -> None:
    """``sh[t], uk[t]`` = shanten and ukeire of ``hand`` less one ``t``, for each held ``t``.

    See ``discard_table_of``, which this is with every held tile wanted.
    """
    discard_table_of(hand, void, unseen, dist, hand, sh, uk)


@njit
def discard_table_of(hand, void: int, unseen, dist, want, sh, uk) -> None:
    """``sh[t], uk[t]`` = shanten and ukeire of ``hand`` less one ``t``, for each held ``t`` wanted.

    ``want[t]`` nonzero: the entry of ``t`` is computed (a player's legal
    discards, say); ``hand`` is a ``uint8[27]`` count vector of ``3k+2`` tiles, at most 14,
    each count at most 4 (any other hand: one ``shanten`` call per pair, the
    reference, with the same answers),
    ``void`` 0..2 or -1, ``unseen`` the unseen count of each tile type (a
    draw of ``d`` counts when ``unseen[d] > 0``, the hand less ``t`` holds
    fewer than four ``d`` and ``d`` is not of the void suit). Entries of
    other tiles are left as they are. ``hand`` is not changed.
    """
    k0, k1, k2, n0, n1, n2, _ = scan(hand)
    if n0 < 0 or (n0 + n1 + n2) % 3 != 2 or n0 + n1 + n2 > 14:
        _table_plain(hand, void, unseen, dist, want, sh, uk)  # not a 3k+2 hand of counts <= 4
        return
    n = n0 + n1 + n2 - 1  # tiles after the discard; a draw makes n + 1, the same meld count
    m = (n - 1) // 3
    seven = n + 1 >= 13  # the hands after a draw may be seven pairs
    # each draw's weight (0: it cannot be drawn) and word, the hand as it is; the loads are
    # gathered before the evaluations so that they overlap
    weight = np.empty(27, dtype=np.int64)
    plus = np.empty(27, dtype=np.uint64)
    for d in range(27):
        s = d // 9
        k = k0 if s == 0 else (k1 if s == 1 else k2)
        ok = unseen[d] > 0 and hand[d] < 4 and s != void
        weight[d] = unseen[d] if ok else 0
        plus[d] = dist[k + POW5[d % 9] if ok else 0]
    for s in range(3):
        kt = k0 if s == 0 else (k1 if s == 1 else k2)
        # the two other suits, as they are: the draws of the discard's own suit
        x = 1 if s == 0 else 0
        y = 1 if s == 2 else 2
        wx = _word(dist, k0 if x == 0 else k1, x, void)
        wy = _word(dist, k1 if y == 1 else k2, y, void)
        ra, rb = _pair(wx, wy, m)
        fx, ox = _slots(wx)
        fy, oy = _slots(wy)
        for t in range(9 * s, 9 * s + 9):
            if hand[t] == 0 or want[t] == 0:
                continue
            kd = kt - POW5[t % 9]
            wt = _word(dist, kd, s, void)
            ft, o_t = _slots(wt)
            base = _shanten_of(wt, ra, rb, n, fx + fy, ox + oy)
            best = base + 1  # a draw is useful when its hand needs fewer than best tiles
            # a draw lowers the seven-pairs distance by at most one: only when seven pairs is
            # already a best shape can it bring the hand below best
            seven_t = seven and _seven(fx + fy + ft, ox + oy + o_t) <= best
            useful = 0
            if s != void:
                la, lb, va, vb = _limits(ra, rb, best)
                for r in range(9):
                    d = 9 * s + r
                    # less one t: a fourth t is drawable
                    w = max(unseen[d], 0) if d == t else weight[d]
                    if w == 0:
                        continue
                    wd = dist[kd + POW5[r]]
                    hit = _lowers(wd, la, lb, va, vb)
                    if seven_t and not hit:
                        f, o = _slots(wd)
                        hit = _seven(fx + fy + f, ox + oy + o) < best
                    useful += w * hit
            # draws of the other suits: the discard's suit (now wt) and the third are fixed
            for u, wo, f_other, o_other in ((x, wy, fy, oy), (y, wx, fx, ox)):
                if u == void:
                    continue
                qa, qb = _pair(wt, wo, m)
                la, lb, va, vb = _limits(qa, qb, best)
                for d in range(9 * u, 9 * u + 9):
                    if weight[d] == 0:
                        continue
                    hit = _lowers(plus[d], la, lb, va, vb)
                    if seven_t and not hit:
                        f, o = _slots(plus[d])
                        hit = _seven(ft + f_other + f, o_t + o_other + o) < best
                    useful += weight[d] * hit
            sh[t] = base
            uk[t] = useful


@njit
def _table_plain(hand, void: int, unseen, dist, want, sh, uk) -> None:
    """``discard_table_of`` by one ``shanten`` call per (discard, draw): the reference."""
    for t in range(27):
        if hand[t] == 0 or want[t] == 0:
            continue
        hand[t] -= 1
        base = shanten(hand, void, dist)
        useful = 0
        for d in range(27):
            if unseen[d] <= 0 or hand[d] >= 4 or d // 9 == void:
                continue
            hand[d] += 1
            if shanten(hand, void, dist) < base:
                useful += unseen[d]
            hand[d] -= 1
        hand[t] += 1
        sh[t] = base
        uk[t] = useful
