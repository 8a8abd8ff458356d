"""Fan (番) of a win: legality, every reading of the hand, roots, extras, cap.

``score(concealed, melds, n_melds, void, ctx, rules, flags)`` returns
``(fan, base, roots, extras)`` with ``fan = -1`` when the hand is not a legal
win (docs/rules.md §5): a complete shape, at most two suits over concealed tiles
and melds, and no tile of the void suit. Otherwise every reading (standard,
all-triplets, terminals, seven pairs, plus 天胡/地胡 when the context says so)
is scored as base fan + roots (one fewer for 龙七对) and the best total is
kept (ties go to the higher base fan, then to the earlier pattern); extras
are added and the cap applied. ``melds`` is ``int8[>=n_melds, 2]`` rows of
``(kind, tile)``; ``rules`` is ``RuleConfig.as_array()``.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from .agari import scan, waits_mask
from .layout import (
    BAD_COUNT,
    BAD_MELD,
    BAD_SIZE,
    BASE_FAN,
    BONUS_FAN,
    CTX_AFTER_KONG,
    CTX_EARTHLY,
    CTX_HEAVENLY,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_NO_EXTRAS,
    CTX_ROBBING_KONG,
    CTX_SELF_DRAW,
    DIHU,
    DUIDUI,
    JIANG_DUIDUI,
    LONG_QIDUI,
    MELD_CONCEALED_KONG,
    MELD_PONG,
    NUM_BASES,
    NUM_EXTRAS,
    PINGHU,
    QIDUI,
    QING_DUIDUI,
    QING_LONG_QIDUI,
    QING_QIDUI,
    QING_YAOJIU,
    QINGYISE,
    R_FAN_CAP,
    R_HAIDI,
    R_JINGOU,
    R_SELF_DRAW_BONUS,
    TIANHU,
    X_GANG_SHANG_HUA,
    X_GANG_SHANG_PAO,
    X_HAIDI,
    X_JINGOU,
    X_QIANG_GANG,
    X_ZIMO,
    YAOJIU,
)

_BASE_FAN = np.array(BASE_FAN, dtype=np.int64)


@njit
def _yaojiu_suit(c: np.ndarray, b: int) -> int:
    """Pairs used if suit ``c[b:b+9]`` splits into 123/789 runs, 1/9 triplets and a 1/9 pair.

    Returns -1 when it cannot. Ranks 2, 3 occur only in 123 runs (so their
    counts are equal and at most the 1s), likewise 7, 8 with 9; the leftover
    1s and 9s must be a triplet, a pair or nothing.
    """
    if c[b + 3] or c[b + 4] or c[b + 5]:
        return -1
    if c[b + 1] != c[b + 2] or c[b + 6] != c[b + 7]:
        return -1
    lo = np.int64(c[b]) - np.int64(c[b + 1])
    hi = np.int64(c[b + 8]) - np.int64(c[b + 7])
    pairs = 0
    for left in (lo, hi):
        if left == 2:
            pairs += 1
        elif left != 0 and left != 3:
            return -1
    return pairs


@njit
def score(
    concealed: np.ndarray,
    melds: np.ndarray,
    n_melds: int,
    void: int,
    ctx: int,
    rules: np.ndarray,
    flags: np.ndarray,
) -> tuple:
    """``(fan, base, roots, extras)``; ``fan = -1`` if this is not a legal win.

    Trusts its input (``score_code`` validates); allocates nothing.
    """
    k0, k1, k2, n0, n1, n2, odd = scan(concealed)
    n = n0 + n1 + n2
    if n < 0 or n != 14 - 3 * n_melds:
        return -1, -1, 0, 0
    # suits present, roots and meld shapes; a meld's tile is never also a
    # concealed quad (at most 4 copies), so roots split cleanly
    suits = np.int64(n0 > 0) | (np.int64(n1 > 0) << 1) | (np.int64(n2 > 0) << 2)
    roots = 0
    meld_terminal = True
    meld_258 = True
    for j in range(n_melds):
        t = melds[j, 1]
        suits |= 1 << (t // 9)
        if concealed[t] + (3 if melds[j, 0] == MELD_PONG else 4) == 4:
            roots += 1
        rank = t % 9
        if rank != 0 and rank != 8:
            meld_terminal = False
        if rank != 1 and rank != 4 and rank != 7:
            meld_258 = False
    n_suits = (suits & 1) + ((suits >> 1) & 1) + ((suits >> 2) & 1)
    if n_suits > 2:
        return -1, -1, 0, 0
    if void >= 0 and (suits >> void) & 1:
        return -1, -1, 0, 0
    standard = flags[k0] & flags[k1] & flags[k2] & 1
    seven = n_melds == 0 and n == 14 and odd == 0
    if not standard and not seven:
        return -1, -1, 0, 0

    qing = n_suits == 1
    quads = 0
    pairs = 0
    singles_or_quads = 0
    all_258 = meld_258
    for t in range(27):
        c = concealed[t]
        if c == 4:
            quads += 1
        if c == 2:
            pairs += 1
        if c == 1 or c == 4:
            singles_or_quads += 1
        if c and t % 9 != 1 and t % 9 != 4 and t % 9 != 7:
            all_258 = False
    roots += quads

    best_base = -1
    best_total = -1
    # candidates in table order; a later one replaces only a strictly better
    # total, or an equal total with a higher base fan
    for cand in range(NUM_BASES):
        ok = False
        root_adjust = 0
        if cand == PINGHU:
            ok = standard == 1 and not qing
        elif cand == QINGYISE:
            ok = standard == 1 and qing
        elif cand == DUIDUI or cand == QING_DUIDUI or cand == JIANG_DUIDUI:
            ok = standard == 1 and pairs == 1 and singles_or_quads == 0
            if cand == DUIDUI:
                ok = ok and not qing
            elif cand == QING_DUIDUI:
                ok = ok and qing
            else:
                ok = ok and all_258
        elif cand == YAOJIU or cand == QING_YAOJIU:
            if standard == 1 and meld_terminal and ((cand == QING_YAOJIU) == qing):
                p0 = _yaojiu_suit(concealed, 0)
                p1 = _yaojiu_suit(concealed, 9)
                p2 = _yaojiu_suit(concealed, 18)
                ok = p0 >= 0 and p1 >= 0 and p2 >= 0 and p0 + p1 + p2 == 1
        elif cand == QIDUI or cand == QING_QIDUI:
            ok = seven and quads == 0 and ((cand == QING_QIDUI) == qing)
        elif cand == LONG_QIDUI or cand == QING_LONG_QIDUI:
            ok = seven and quads > 0 and ((cand == QING_LONG_QIDUI) == qing)
            root_adjust = -1
        elif cand == TIANHU:
            ok = (ctx & CTX_HEAVENLY) != 0
        elif cand == DIHU:
            ok = (ctx & CTX_EARTHLY) != 0
        if not ok:
            continue
        tot = _BASE_FAN[cand] + roots + root_adjust
        if tot > best_total or (tot == best_total and _BASE_FAN[cand] > _BASE_FAN[best_base]):
            best_total = tot
            best_base = cand
    roots_counted = roots
    if best_base == LONG_QIDUI or best_base == QING_LONG_QIDUI:
        roots_counted = roots - 1

    extras = 0
    if not ctx & CTX_NO_EXTRAS:
        self_draw = (ctx & CTX_SELF_DRAW) != 0
        if self_draw and ctx & CTX_AFTER_KONG:
            extras |= X_GANG_SHANG_HUA
        if not self_draw and ctx & CTX_KONG_DISCARD:
            extras |= X_GANG_SHANG_PAO
        if ctx & CTX_ROBBING_KONG:
            extras |= X_QIANG_GANG
        if rules[R_HAIDI] and ctx & CTX_LAST_TILE:
            extras |= X_HAIDI
        if rules[R_JINGOU] and n_melds == 4:
            extras |= X_JINGOU
        if self_draw and rules[R_SELF_DRAW_BONUS] == BONUS_FAN:
            extras |= X_ZIMO
    n_extras = 0
    for i in range(NUM_EXTRAS):
        n_extras += (extras >> i) & 1
    fan = best_total + n_extras
    cap = rules[R_FAN_CAP]
    if cap > 0 and fan > cap:
        fan = cap
    return fan, best_base, roots_counted, extras


@njit(nogil=False)
def score_code(
    concealed: np.ndarray,
    melds: np.ndarray,
    n_melds: int,
    void: int,
    ctx: int,
    rules: np.ndarray,
    flags: np.ndarray,
) -> tuple:
    """``score`` after validating everything; ``fan`` is a negative status on bad input."""
    if concealed.shape[0] != 27 or n_melds < 0 or n_melds > 4 or melds.shape[0] < n_melds:
        return BAD_SIZE, -1, 0, 0
    _, _, _, n0, n1, n2, _ = scan(concealed)
    if n0 < 0:
        return BAD_COUNT, -1, 0, 0
    if n0 + n1 + n2 != 14 - 3 * n_melds:
        return BAD_SIZE, -1, 0, 0
    for j in range(n_melds):
        kind = melds[j, 0]
        t = melds[j, 1]
        if kind < MELD_PONG or kind > MELD_CONCEALED_KONG or t < 0 or t > 26:
            return BAD_MELD, -1, 0, 0
        held = np.int64(concealed[t]) + (3 if kind == MELD_PONG else 4)
        for i in range(j):
            if melds[i, 1] == t:
                held += 3
        if held > 4:
            return BAD_COUNT, -1, 0, 0
    return score(concealed, melds, n_melds, void, ctx, rules, flags)


@njit
def held_copies(concealed: np.ndarray, melds: np.ndarray, n_melds: int, tile: int) -> int:
    """Copies of ``tile`` in a player's own hand and melds: 3 per pong, 4 per kong.

    A tile already held 4 times cannot be won on, so it is never a wait
    (docs/rules.md §5); ``best_wait`` and the engine's ``win_score`` both ask here.
    """
    held = int(concealed[tile])  # int64 under numba, as np.int64 would be
    for j in range(n_melds):
        if melds[j, 1] == tile:
            held += 3 if melds[j, 0] == MELD_PONG else 4
    return held


@njit
def best_wait(
    concealed: np.ndarray,
    melds: np.ndarray,
    n_melds: int,
    void: int,
    rules: np.ndarray,
    flags: np.ndarray,
    waits: np.ndarray,
) -> tuple:
    """查大叫: the highest-fan win among a ``3k + 1`` hand's waits (docs/rules.md §7.3).

    Each tile with fewer than 4 copies in the hand and melds is tried as a win
    on a discard: roots counted, no extra fan, capped. Returns
    ``(fan, tile, base, roots)``; ``fan = -1`` when the hand is not tenpai.
    Ties go to the lowest tile.
    """
    shape_waits = waits_mask(concealed, -1, waits)
    trial = concealed.copy()
    best = (-1, -1, -1, 0)
    for t in range(27):
        if not (shape_waits >> t) & 1 or held_copies(concealed, melds, n_melds, t) >= 4:
            continue
        trial[t] += 1
        fan, base, roots, _ = score(trial, melds, n_melds, void, CTX_NO_EXTRAS, rules, flags)
        trial[t] -= 1
        if fan > best[0]:
            best = (fan, t, base, roots)
    return best


@njit(parallel=True)
def score_batch(
    concealed: np.ndarray,
    melds: np.ndarray,
    n_melds: np.ndarray,
    voids: np.ndarray,
    ctx: np.ndarray,
    rules: np.ndarray,
    flags: np.ndarray,
) -> tuple:
    """``score_code`` over N hands, parallel over the cores.

    Returns ``fan int8[N]`` (-1 = not a win, below -1 a ``score_code`` status),
    ``base int8[N]``, ``roots int8[N]`` and ``extras uint8[N]``; ``melds`` is
    ``int8[N, 4, 2]``.
    """
    n = concealed.shape[0]
    fan = np.empty(n, dtype=np.int8)
    base = np.empty(n, dtype=np.int8)
    roots = np.empty(n, dtype=np.int8)
    extras = np.empty(n, dtype=np.uint8)
    for i in numba.prange(n):
        f, b, r, x = score_code(concealed[i], melds[i], n_melds[i], voids[i], ctx[i], rules, flags)
        fan[i] = f
        base[i] = b
        roots[i] = r
        extras[i] = x
    return fan, base, roots, extras
