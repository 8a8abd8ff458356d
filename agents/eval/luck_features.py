"""Oracle features of a hand's chance events, for the luck-adjusted estimator (numba).

A hand is replayed from its deal and decision log (``replay_events``). At the
deal, and after every draw from the wall (normal or kong replacement), the
full state (every concealed hand and the remaining wall's composition) is
summarised per seat into ``NF`` features, for the state that happened *and*
for each state that could have happened instead: the drawer holding tile
``t`` instead of the tile it drew, for every tile type ``t`` still in the wall
before the draw, with probability ``wall[t] / sum(wall)`` (the wall is a
uniform shuffle, so given everything that happened before, the next tile is
uniform over the tiles not yet drawn). ``sichuan_env.agents.eval.luck`` turns
the features into values and the values into corrections.

Counterfactual states differ from the real one only in the drawer's hand and
the wall's composition; ``tests/test_luck.py`` checks that the features of
every counterfactual equal those of the real state of a wall in which that
tile was drawn.

Features of seat ``k`` (``F_*`` offsets; a seat that has won has only
``F_WON``, its relative position and the globals):

- ``F_WON``: 1 once the seat has won (it takes no further part);
- ``F_SH``..: the concealed part's void-aware shanten, one-hot over
  -1 (complete), 0 (tenpai), 1, 2, 3, 4, 5+;
- ``F_DRAWER``: the seat just drew and holds 14 (3k + 2) tiles;
- ``F_VOIDN``: tiles of its void suit still held, / 4;
- ``F_LIVE_WAIT``, ``F_HELD_WAIT``, ``F_WAIT_FAN``, ``F_WAIT_N``: when tenpai
  with 3k + 1 tiles: its wait tiles in the wall / 8, held by other active
  seats / 8, the best fan among its waits / 6, wait types / 9;
- ``F_UKE``: 3k + 1 tiles, not tenpai: wall tiles that lower its shanten / 20;
- ``F_CANWIN``, ``F_WINFAN``: the drawer can win by self-draw now, and that fan / 6;
- ``F_MELDS``, ``F_KONGS``: melds and kongs / 4;
- ``F_REL``..: the seat's position after the seat to act, one-hot over 0..3;
- ``F_WALL``, ``F_ACTIVE``, ``F_SETUP``, ``F_DEALER``: tiles left / 55,
  active seats / 4, the state is the deal (before 换三张 / 定缺 / play), the seat dealt;
- in points (a wait's points ``2 ** (fan - 1)``, the engine's scale in base points):
  ``F_WAIT_PTS`` the best wait's / 16; ``F_LIVE_EV`` the expected points of its next
  draw (wall copies of each wait times its points, / tiles left); ``F_HELD_PTS``
  wait copies held by other active seats times their points / 16; ``F_WIN_PTS`` the
  drawer's self-draw win now / 16; ``F_DANGER`` the tiles the seat holds that are
  waits of other tenpai seats, times their points / 16 (what it may deal in);
  ``F_THREAT`` the other seats' ``F_LIVE_EV`` summed; ``F_CAN_KONG``: the drawer
  holds four of a tile or the fourth of one of its pongs (a kong's payment);
- the drawn tile as the drawer's likely next discard (a tile of its void suit, or
  with no void tile left one that does not lower its shanten): ``F_DRAWN_VOID``,
  ``F_DRAWN_USELESS``, and when likely, ``F_DRAWN_DEALIN`` (drawer: its points as
  other tenpai seats' wait / 16) and ``F_RON_CHANCE`` (each other seat: its own
  points on it / 16): the deal-in the next discard may bring.
"""

from __future__ import annotations

import numpy as np

from sichuan_env._jit import njit
from sichuan_env.kernels.agari import scan
from sichuan_env.kernels.fan import held_copies, score
from sichuan_env.kernels.layout import (
    CTX_AFTER_KONG,
    CTX_EARTHLY,
    CTX_LAST_TILE,
    CTX_SELF_DRAW,
    MELD_CONCEALED_KONG,
    MELD_KONG,
    MELD_PONG,
    R_DECLARE_VOID,
)
from sichuan_env.kernels.shanten import shanten_from_words
from sichuan_env.kernels.tables import POW5

F_WON = 0
F_SH = 1  # 7 one-hot slots: shanten -1, 0, 1, 2, 3, 4, 5+
F_DRAWER = 8
F_VOIDN = 9
F_LIVE_WAIT = 10
F_HELD_WAIT = 11
F_WAIT_FAN = 12
F_WAIT_N = 13
F_UKE = 14
F_CANWIN = 15
F_WINFAN = 16
F_MELDS = 17
F_KONGS = 18
F_REL = 19  # 4 one-hot slots
F_WALL = 23
F_ACTIVE = 24
F_SETUP = 25
F_DEALER = 26
F_WAIT_PTS = 27
F_LIVE_EV = 28
F_HELD_PTS = 29
F_WIN_PTS = 30
F_DANGER = 31
F_THREAT = 32
F_CAN_KONG = 33
F_DRAWN_VOID = 34
F_DRAWN_USELESS = 35
F_DRAWN_DEALIN = 36
F_RON_CHANCE = 37
NF = 38
"""Features per seat."""
MAX_EVENTS = 72
"""Events a hand can have: the deal and at most 55 draws (108 tiles, 53 dealt)."""


@njit
def _void(st, k: int, rules) -> int:
    return int(st.void[k]) if rules[R_DECLARE_VOID] and st.void[k] >= 0 else -1


@njit
def _shanten_plus(k0, k1, k2, n: int, t: int, void: int, dist) -> int:
    """Shanten of the scanned hand with one more ``t``."""
    s = t // 9
    p = POW5[t % 9]
    if s == 0:
        return shanten_from_words(dist[k0 + p], dist[k1], dist[k2], n + 1, void)
    if s == 1:
        return shanten_from_words(dist[k0], dist[k1 + p], dist[k2], n + 1, void)
    return shanten_from_words(dist[k0], dist[k1], dist[k2 + p], n + 1, void)


@njit
def _kongs(st, k: int) -> int:
    n = 0
    for m in range(st.n_melds[k]):
        kind = st.melds[k, m, 0]
        if kind == MELD_KONG or kind == MELD_CONCEALED_KONG:
            n += 1
    return n


@njit
def _seat_static(st, k: int, rules, flags, dist, useful, waitset, out) -> int:
    """Features of a 3k + 1 (or, at the deal, any) seat that do not depend on the wall.

    Writes shanten, void count, melds, wait fan, points and types into ``out``; fills
    ``useful[27]`` (tiles lowering shanten) or ``waitset[27]`` (each wait tile's points
    when tenpai, 0 elsewhere). Returns the shanten.
    """
    h = st.hands[k]
    void = _void(st, k, rules)
    k0, k1, k2, n0, n1, n2, _ = scan(h)
    n = n0 + n1 + n2
    sh = shanten_from_words(dist[k0], dist[k1], dist[k2], n, void)
    out[F_SH + min(max(sh, -1), 5) + 1] = 1.0
    if void >= 0:
        c = 0
        for t in range(9 * void, 9 * void + 9):
            c += h[t]
        out[F_VOIDN] = c / 4.0
    out[F_MELDS] = st.n_melds[k] / 4.0
    out[F_KONGS] = _kongs(st, k) / 4.0
    for t in range(27):
        useful[t] = 0
        waitset[t] = 0
    if n % 3 != 1:
        return sh
    if sh == 0:
        best = -1
        nw = 0
        for t in range(27):
            if t // 9 == void or held_copies(h, st.melds[k], st.n_melds[k], t) >= 4:
                continue
            h[t] += 1
            fan, _, _, _ = score(h, st.melds[k], st.n_melds[k], void, 0, rules, flags)
            h[t] -= 1
            if fan >= 0:
                waitset[t] = 1 << max(fan - 1, 0)
                nw += 1
                best = max(best, fan)
        out[F_WAIT_FAN] = max(best, 0) / 6.0
        out[F_WAIT_N] = nw / 9.0
        out[F_WAIT_PTS] = (1 << max(best - 1, 0)) / 16.0
    elif sh > 0:
        for t in range(27):
            if h[t] >= 4 or t // 9 == void:
                continue
            if _shanten_plus(k0, k1, k2, n, t, void, dist) < sh:
                useful[t] = 1
    return sh


@njit
def _drawer(st, k: int, rules, flags, dist, ctx: int, out) -> int:
    """Features of the seat that just drew (14 tiles as held in ``st``); returns its shanten."""
    h = st.hands[k]
    void = _void(st, k, rules)
    k0, k1, k2, n0, n1, n2, _ = scan(h)
    sh = shanten_from_words(dist[k0], dist[k1], dist[k2], n0 + n1 + n2, void)
    out[F_SH + min(max(sh, -1), 5) + 1] = 1.0
    out[F_DRAWER] = 1.0
    if void >= 0:
        c = 0
        for t in range(9 * void, 9 * void + 9):
            c += h[t]
        out[F_VOIDN] = c / 4.0
    out[F_MELDS] = st.n_melds[k] / 4.0
    out[F_KONGS] = _kongs(st, k) / 4.0
    for t in range(27):
        if h[t] == 4 and t // 9 != void:
            out[F_CAN_KONG] = 1.0
    for m in range(st.n_melds[k]):
        if st.melds[k, m, 0] == MELD_PONG and h[st.melds[k, m, 1]] > 0:
            out[F_CAN_KONG] = 1.0
    if sh < 0:
        fan, _, _, _ = score(h, st.melds[k], st.n_melds[k], void, ctx, rules, flags)
        if fan >= 0:
            out[F_CANWIN] = 1.0
            out[F_WINFAN] = fan / 6.0
            out[F_WIN_PTS] = (1 << max(fan - 1, 0)) / 16.0
    return sh


@njit
def _globals(st, k: int, left: int, setup: int, out) -> None:
    active = 0
    for s in range(4):
        active += st.won[s] == 0
    rel = (k - st.to_act) % 4 if st.to_act >= 0 else 0
    out[F_REL + rel] = 1.0
    out[F_WALL] = left / 55.0
    out[F_ACTIVE] = active / 4.0
    out[F_SETUP] = setup
    out[F_DEALER] = 1.0 if k == st.dealer else 0.0


@njit
def _wall_counts(st, out) -> int:
    for t in range(27):
        out[t] = 0
    n = 0
    for j in range(st.head, st.tail + 1):
        out[st.wall[j]] += 1
        n += 1
    return n


@njit
def _danger(hand, waitset, k: int, d: int, won) -> int:
    """Points at stake in ``hand``: its copies of other tenpai seats' waits (not ``k``, ``d``)."""
    n = 0
    for j in range(4):
        if j == k or j == d or won[j]:
            continue
        for u in range(27):
            n += hand[u] * waitset[j, u]
    return n


@njit
def _live(st, k: int, waitset, useful, sh: int, wall, left: int, row) -> None:
    """The wall-dependent features of a 3k + 1 seat ``k``."""
    live = 0
    held = 0
    ev = 0
    held_pts = 0
    for u in range(27):
        if waitset[u]:
            live += wall[u]
            ev += wall[u] * waitset[u]
            for j in range(4):
                if j != k and st.won[j] == 0:
                    held += st.hands[j, u]
                    held_pts += st.hands[j, u] * waitset[u]
        elif useful[u]:
            live += wall[u]
    if sh == 0:
        row[F_LIVE_WAIT] = live / 8.0
        row[F_HELD_WAIT] = held / 8.0
        row[F_LIVE_EV] = ev / max(left, 1)
        row[F_HELD_PTS] = held_pts / 16.0
    elif sh > 0:
        row[F_UKE] = live / 20.0


@njit
def draw_event(st, rules, flags, dist, feats, probs) -> int:
    """Features of the post-draw state ``st`` and of its counterfactuals; returns the drawn tile.

    ``feats`` is ``float32[27, 4, NF]`` (slot ``t``: the drawer drew ``t``), ``probs``
    ``float32[27]`` (the chance of each slot; 0 for tiles that were not in the wall).
    ``st`` is left as it was.
    """
    d = int(st.to_act)
    drawn = int(st.drawn_tile)
    wall = np.zeros(27, dtype=np.int64)
    left = _wall_counts(st, wall)  # after the draw
    wall[drawn] += 1  # before the draw
    total = left + 1
    ctx = CTX_SELF_DRAW
    if st.replacement:
        ctx |= CTX_AFTER_KONG
    if left == 0:
        ctx |= CTX_LAST_TILE
    if st.earthly:
        ctx |= CTX_EARTHLY
    feats[:] = 0.0
    probs[:] = 0.0
    # the other seats: their hands are the same in every slot; only the wall moves
    useful = np.zeros((4, 27), dtype=np.int64)
    waitset = np.zeros((4, 27), dtype=np.int64)
    base = np.zeros((4, NF), dtype=np.float32)
    shanten_of = np.zeros(4, dtype=np.int64)
    for k in range(4):
        if k == d or st.won[k]:
            continue
        shanten_of[k] = _seat_static(st, k, rules, flags, dist, useful[k], waitset[k], base[k])
    danger = np.zeros(27, dtype=np.int64)  # points at stake per tile: waits of tenpai seats
    for k in range(4):
        if k != d and not st.won[k] and shanten_of[k] == 0:
            for u in range(27):
                danger[u] += waitset[k, u]
    for k in range(4):
        if k != d and not st.won[k]:
            base[k, F_DANGER] = _danger(st.hands[k], waitset, k, d, st.won) / 16.0
    h = st.hands[d]
    h[drawn] -= 1
    drawer_danger = 0
    for u in range(27):
        drawer_danger += h[u] * danger[u]
    void_d = _void(st, d, rules)
    k0, k1, k2, n0, n1, n2, _ = scan(h)
    sh13 = shanten_from_words(dist[k0], dist[k1], dist[k2], n0 + n1 + n2, void_d)
    void_held = 0
    if void_d >= 0:
        for u in range(9 * void_d, 9 * void_d + 9):
            void_held += h[u]
    for t in range(27):
        if wall[t] == 0:
            continue
        probs[t] = wall[t] / total
        wall[t] -= 1  # the wall after drawing t
        h[t] += 1
        ev_sum = 0.0
        sh14 = 0
        for k in range(4):
            row = feats[t, k]
            if st.won[k]:
                row[F_WON] = 1.0
            elif k == d:
                sh14 = _drawer(st, k, rules, flags, dist, ctx, row)
                row[F_DANGER] = (drawer_danger + danger[t]) / 16.0
            else:
                row[:] = base[k]
                _live(st, k, waitset[k], useful[k], shanten_of[k], wall, left, row)
                ev_sum += row[F_LIVE_EV]
            _globals(st, k, left, 0, row)
        for k in range(4):
            if not st.won[k]:
                feats[t, k, F_THREAT] = ev_sum - feats[t, k, F_LIVE_EV]
        is_void = t // 9 == void_d
        useless = sh14 >= sh13 and feats[t, d, F_CANWIN] == 0
        likely = is_void if (void_held > 0 or is_void) else useless
        feats[t, d, F_DRAWN_VOID] = 1.0 if is_void else 0.0
        feats[t, d, F_DRAWN_USELESS] = 1.0 if useless else 0.0
        if likely:
            feats[t, d, F_DRAWN_DEALIN] = danger[t] / 16.0
            for k in range(4):
                if k != d and not st.won[k]:
                    feats[t, k, F_RON_CHANCE] = waitset[k, t] / 16.0
        h[t] -= 1
        wall[t] += 1
    h[drawn] += 1
    return drawn


@njit
def deal_event(st, rules, flags, dist, row4) -> None:
    """Features (``float32[4, NF]``) of the state right after the deal."""
    wall = np.zeros(27, dtype=np.int64)
    left = _wall_counts(st, wall)
    useful = np.zeros((4, 27), dtype=np.int64)
    waitset = np.zeros((4, 27), dtype=np.int64)
    row4[:] = 0.0
    for k in range(4):
        row = row4[k]
        sh = _seat_static(st, k, rules, flags, dist, useful[k], waitset[k], row)
        if k == st.dealer:
            row[F_DRAWER] = 1.0
        else:
            _live(st, k, waitset[k], useful[k], sh, wall, left, row)
        _globals(st, k, left, 1, row)
    for k in range(4):
        row4[k, F_DANGER] = _danger(st.hands[k], waitset, k, -1, st.won) / 16.0
        for j in range(4):
            if j != k:
                row4[k, F_THREAT] += row4[j, F_LIVE_EV]
