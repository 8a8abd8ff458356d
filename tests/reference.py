"""A slow, independent reference for the hand core: the test oracle.

Written from docs/rules.md directly, sharing no code with ``sichuan_env.kernels``:
win shapes by recursive decomposition, shanten as a minimum over enumerated
targets, fan by scoring every decomposition of the hand.
"""

from __future__ import annotations

import itertools
from functools import cache, lru_cache

import numpy as np

MELD_TYPES = [("t", r) for r in range(9)] + [("r", r) for r in range(7)]  # per suit


def decompositions(counts: tuple[int, ...], need_pair: bool = True) -> list[list[tuple]]:
    """Every way to split counts into melds (+ one pair): lists of ("t"|"r"|"p", tile)."""
    c = list(counts)
    out: list[list[tuple]] = []

    def rec(start: int, has_pair: bool, acc: list[tuple]) -> None:
        i = start
        while i < 27 and c[i] == 0:
            i += 1
        if i == 27:
            if has_pair or not need_pair:
                out.append(list(acc))
            return
        if c[i] >= 3:
            c[i] -= 3
            rec(i, has_pair, [*acc, ("t", i)])
            c[i] += 3
        if i % 9 <= 6 and c[i + 1] and c[i + 2]:
            for j in (i, i + 1, i + 2):
                c[j] -= 1
            rec(i, has_pair, [*acc, ("r", i)])
            for j in (i, i + 1, i + 2):
                c[j] += 1
        if need_pair and not has_pair and c[i] >= 2:
            c[i] -= 2
            rec(i, True, [*acc, ("p", i)])
            c[i] += 2

    rec(0, False, [])
    return out


def is_seven_pairs(counts) -> bool:
    return sum(counts) == 14 and all(x % 2 == 0 for x in counts)


def is_win(counts) -> bool:
    c = tuple(int(x) for x in counts)
    if sum(c) % 3 != 2:
        raise ValueError("3k+2 tiles")
    return bool(decompositions(c)) or is_seven_pairs(c)


def waits(counts, void: int | None = None) -> list[int]:
    c = [int(x) for x in counts]
    if void is not None and any(c[void * 9 : void * 9 + 9]):
        return []
    out = []
    for t in range(27):
        if c[t] >= 4 or (void is not None and t // 9 == void):
            continue
        c[t] += 1
        if is_win(c):
            out.append(t)
        c[t] -= 1
    return out


@cache
def _suit_targets(melds: int, pair: int) -> np.ndarray:
    """All 9-count suit configurations of exactly `melds` melds and `pair` pairs (counts <= 4)."""
    configs = set()
    for combo in itertools.combinations_with_replacement(range(len(MELD_TYPES)), melds):
        base = [0] * 9
        for m in combo:
            kind, r = MELD_TYPES[m]
            if kind == "t":
                base[r] += 3
            else:
                for j in range(3):
                    base[r + j] += 1
        pair_ranks = range(9) if pair else [None]
        for pr in pair_ranks:
            cfg = list(base)
            if pr is not None:
                cfg[pr] += 2
            if max(cfg) <= 4:
                configs.add(tuple(cfg))
    return np.array(sorted(configs), dtype=np.int64).reshape(-1, 9)


def _suit_distance(suit: np.ndarray, melds: int, pair: int) -> int:
    return _suit_distance_cached(tuple(int(x) for x in suit), melds, pair)


@lru_cache(maxsize=200_000)
def _suit_distance_cached(suit: tuple[int, ...], melds: int, pair: int) -> int:
    targets = _suit_targets(melds, pair)
    suit = np.array(suit, dtype=np.int64)
    if len(targets) == 0:
        return 99
    return int(np.maximum(targets - suit[None, :], 0).sum(axis=1).min())


def shanten(counts, void: int | None = None) -> int:
    """min over complete targets T (counts <= 4, no void tiles) of |T minus H|, minus 1."""
    h = np.array([int(x) for x in counts], dtype=np.int64)
    n = int(h.sum())
    melds = (n - 1) // 3
    suits = [h[0:9], h[9:18], h[18:27]]
    best = 99
    for split in itertools.product(range(melds + 1), repeat=3):
        if sum(split) != melds:
            continue
        for pair_suit in range(3):
            total = 0
            for s in range(3):
                m, p = split[s], int(s == pair_suit)
                if void is not None and s == void:
                    total += 0 if (m, p) == (0, 0) else 99
                else:
                    total += _suit_distance(suits[s], m, p)
            best = min(best, total)
    if n in (13, 14):
        # seven pairs: every target count is 0, 2 or 4; dynamic programme over tiles
        inf = 99
        dp = [0] + [inf] * 7
        for t in range(27):
            new = [inf] * 8
            for k in range(8):
                if dp[k] >= inf:
                    continue
                options = (
                    [(0, 0)] if (void is not None and t // 9 == void) else [(0, 0), (1, 2), (2, 4)]
                )
                for slots, copies in options:
                    if k + slots <= 7:
                        cost = dp[k] + max(0, copies - int(h[t]))
                        new[k + slots] = min(new[k + slots], cost)
            dp = new
        best = min(best, dp[7])
    return best - 1


BASE_FAN = {
    "pinghu": 1,
    "duidui": 2,
    "qingyise": 3,
    "yaojiu": 3,
    "qidui": 3,
    "qing_duidui": 4,
    "jiang_duidui": 4,
    "long_qidui": 5,
    "qing_qidui": 5,
    "qing_yaojiu": 5,
    "qing_long_qidui": 6,
    "tianhu": 6,
    "dihu": 6,
}
ORDER = list(BASE_FAN)


def score(
    concealed,
    melds=(),
    *,
    self_draw=False,
    after_kong=False,
    kong_discard=False,
    robbing_kong=False,
    heavenly=False,
    earthly=False,
    last_tile=False,
    void=None,
    fan_cap=None,
    haidi=False,
    jingou=False,
    zimo_fan=False,
    extras=True,
):
    """(fan, base, roots, extras) or None; melds are (kind, tile index) with kind in
    pong/kong/concealed_kong. Every decomposition is a reading; the best total wins."""
    c = [int(x) for x in concealed]
    if heavenly or earthly:
        self_draw = True
    total = list(c)
    for kind, t in melds:
        total[t] += 3 if kind == "pong" else 4
    suits = {t // 9 for t in range(27) if total[t]}
    if len(suits) > 2 or (void is not None and void in suits):
        return None
    readings = []  # (base, root adjustment)
    qing = len(suits) == 1
    roots = sum(1 for x in total if x == 4)
    for dec in decompositions(tuple(c)):
        groups = dec + [("t", t) for _, t in melds]
        all_trip = all(k != "r" for k, _ in groups)
        readings.append(("qingyise" if qing else "pinghu", 0))
        if all_trip:
            readings.append(("qing_duidui" if qing else "duidui", 0))
            tiles = [t for t in range(27) if total[t]]
            if all(t % 9 in (1, 4, 7) for t in tiles):
                readings.append(("jiang_duidui", 0))

        def terminal(g):
            k, t = g
            if k == "r":
                return t % 9 in (0, 6)
            return t % 9 in (0, 8)

        if all(terminal(g) for g in groups):
            readings.append(("qing_yaojiu" if qing else "yaojiu", 0))
    if not melds and is_seven_pairs(c):
        if any(x == 4 for x in c):
            readings.append(("qing_long_qidui" if qing else "long_qidui", -1))
        else:
            readings.append(("qing_qidui" if qing else "qidui", 0))
    if not readings:
        return None
    if heavenly:
        readings.append(("tianhu", 0))
    if earthly:
        readings.append(("dihu", 0))
    best = None
    for base, adj in readings:
        key = (BASE_FAN[base] + roots + adj, BASE_FAN[base], -ORDER.index(base))
        if best is None or key > best[0]:
            best = (key, base, roots + adj)
    ex = []
    if extras:
        if self_draw and after_kong:
            ex.append("gang_shang_hua")
        if not self_draw and kong_discard:
            ex.append("gang_shang_pao")
        if robbing_kong:
            ex.append("qiang_gang")
        if haidi and last_tile:
            ex.append("haidi")
        if jingou and len(melds) == 4:
            ex.append("jingou")
        if zimo_fan and self_draw:
            ex.append("zimo")
    fan = best[0][0] + len(ex)
    if fan_cap is not None:
        fan = min(fan, fan_cap)
    return fan, best[1], best[2], tuple(ex)
