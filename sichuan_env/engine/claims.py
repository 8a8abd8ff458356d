"""Discards, kongs and the windows they open (numba): claims, robbing, 一炮多响 (docs/rules.md §4).

A discard opens a claim window (hu / pong / kong / pass) and an added kong a
robbing window (hu / pass) with the same mechanism, ``open_window``: the
seats that may act are asked one at a time in turn order from the tile's
owner, with their options fixed when the window opens; ``answer`` resolves
the window after the last answer.
"""

from __future__ import annotations

from .._jit import njit
from ..kernels.layout import (
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROBBING_KONG,
    MELD_CONCEALED_KONG,
    MELD_KONG,
    MELD_PONG,
    R_MUST_WIN_LAST_FOUR,
    R_PASS_WIN_RULE,
)
from .actions import HU, KONG, PONG
from .core import (
    OPT_FORCED,
    OPT_HU,
    OPT_KONG,
    OPT_PONG,
    next_active,
    offered_win,
    tiles_left,
    void_of,
    win_score,
    window_ctx,
)
from .settlement import drop_transferred_kong, kong_payment, kong_transfer, pay, record_win
from .state import PH_CLAIM, PH_ROB, PH_TURN, RIVER_MELDED, RIVER_ROBBED, RIVER_WON_ON
from .turn import after_win, begin_turn, complete_added_kong


@njit
def open_window(st, origin: int, tile: int, ctx: int, melds: bool, rules, flags) -> int:
    """Ask who may act on ``origin``'s ``tile``; return how many seats (the window stays shut at 0).

    ``melds``: pong and kong are offered too (a discard; not a robbing window).
    With 4 tiles or fewer left and 最后四张必须胡, a possible win is forced.
    """
    left = tiles_left(st)
    forced = rules[R_MUST_WIN_LAST_FOUR] and left <= 4
    st.claim_tile = tile
    st.claim_from = origin
    st.claim_after_kong = (ctx & CTX_KONG_DISCARD) != 0
    st.claim_last = (ctx & CTX_LAST_TILE) != 0
    n = 0
    for k in range(1, 4):
        s = (origin + k) % 4
        if st.won[s]:
            continue
        opts = 0
        fan = offered_win(st, s, tile, ctx, rules, flags)
        if fan >= 0:
            opts |= OPT_HU
        if melds and left > 0 and tile // 9 != void_of(st, s, rules):
            if st.hands[s, tile] >= 2:
                opts |= OPT_PONG
            if st.hands[s, tile] == 3:
                opts |= OPT_KONG
        if forced and opts & OPT_HU:
            opts = OPT_HU | OPT_FORCED
        if opts:
            st.claim_seats[n] = s
            st.claim_opts[n] = opts
            st.claim_fan[n] = fan if opts & OPT_HU else -1
            st.claim_ans[n] = -1
            n += 1
    st.n_claim = n
    st.claim_pos = 0
    if n > 0:
        st.to_act = st.claim_seats[0]
    return n


@njit
def discard(st, seat: int, tile: int, rules, flags, waits) -> None:
    """Discard a tile into the river and open the claim window (or pass the turn on)."""
    st.hands[seat, tile] -= 1
    k = st.n_river[seat]
    st.river[seat, k] = tile
    st.river_flag[seat, k] = 0
    st.river_tsumo[seat, k] = st.drawn and st.drawn_tile == tile
    st.n_river[seat] = k + 1
    st.heavenly = 0
    ctx = 0
    if st.replacement:
        ctx |= CTX_KONG_DISCARD
    if tiles_left(st) <= 0:
        ctx |= CTX_LAST_TILE
    if open_window(st, seat, tile, ctx, True, rules, flags):
        st.phase = PH_CLAIM
    else:
        begin_turn(st, next_active(st, seat), 0, rules, flags, waits)


@njit
def self_kong(st, seat: int, tile: int, rules, flags, waits) -> None:
    """暗杠 (four in hand) or 加杠 (on an own pong; opens the robbing window)."""
    st.heavenly = 0
    st.claimed = 1  # a kong, robbed or not, ends 地胡 chances
    if st.hands[seat, tile] == 4:
        st.hands[seat, tile] -= 4
        j = st.n_melds[seat]
        st.melds[seat, j, 0] = MELD_CONCEALED_KONG
        st.melds[seat, j, 1] = tile
        st.meld_turn[seat, j] = st.turn
        st.n_melds[seat] = j + 1
        kong_payment(st, seat, MELD_CONCEALED_KONG, -1, rules)
        begin_turn(st, seat, 1, rules, flags, waits)
    elif open_window(st, seat, tile, CTX_ROBBING_KONG, False, rules, flags):
        st.phase = PH_ROB
    else:
        complete_added_kong(st, seat, tile, rules, flags, waits)


@njit
def _farthest(st, origin: int, action: int) -> int:
    """The answering seat farthest from ``origin`` in turn order that chose ``action``."""
    best = -1
    best_d = -1
    for i in range(st.n_claim):
        if st.claim_ans[i] == action:
            d = (st.claim_seats[i] - origin) % 4
            if d > best_d:
                best_d = d
                best = st.claim_seats[i]
    return best


@njit
def _window_wins(st, rules, flags, waits) -> None:
    """One win event: every seat that answered hu wins on the window's tile (一炮多响, 抢杠胡).

    The discarder (or konger) pays each winner the win's points, plus the
    kong income it hands on by 呼叫转移.
    """
    origin = st.claim_from
    tile = st.claim_tile
    ctx = window_ctx(st)
    robbing = st.phase == PH_ROB
    if robbing:  # the tile leaves the konger for the robbers; the pong stays
        st.hands[origin, tile] -= 1
        n = st.n_river[origin]
        st.river[origin, n] = tile
        st.river_flag[origin, n] = RIVER_ROBBED
        st.n_river[origin] = n + 1
    transfer = 0 if robbing else kong_transfer(st, origin)
    st.n_win_events += 1
    k = st.n_river[origin] - 1  # the discard, or the robbed tile just put in the river
    for i in range(st.n_claim):
        if st.claim_ans[i] != HU:
            continue
        w = st.claim_seats[i]
        st.river_by[origin, k] |= 1 << w
        fan, base, roots, extras = win_score(st, w, tile, ctx, rules, flags)
        pts = record_win(st, w, tile, origin, fan, base, roots, extras, rules)
        pay(st, origin, w, pts + transfer)  # 呼叫转移: each winner gets the whole income
    if transfer:
        drop_transferred_kong(st, origin)
    if not robbing:
        st.river_flag[origin, st.n_river[origin] - 1] = RIVER_WON_ON
    after_win(st, _farthest(st, origin, HU), rules, flags, waits)


@njit
def _take(st, taker: int, taken: int, rules, flags, waits) -> None:
    """Pong or direct kong of the discard."""
    d = st.claim_from
    t = st.claim_tile
    st.claimed = 1
    st.river_flag[d, st.n_river[d] - 1] = RIVER_MELDED
    st.river_by[d, st.n_river[d] - 1] = 1 << taker
    j = st.n_melds[taker]
    st.melds[taker, j, 1] = t
    st.meld_turn[taker, j] = st.turn + 1  # the pong's turn, or the kong's replacement turn
    st.n_melds[taker] = j + 1
    if taken == PONG:
        st.hands[taker, t] -= 2
        st.melds[taker, j, 0] = MELD_PONG
        st.turn += 1
        st.phase = PH_TURN
        st.to_act = taker
        st.drawn = 0
        st.drawn_tile = -1
        st.replacement = 0
        st.heavenly = 0
        st.earthly = 0
    else:
        st.hands[taker, t] -= 3
        st.melds[taker, j, 0] = MELD_KONG
        kong_payment(st, taker, MELD_KONG, d, rules)
        begin_turn(st, taker, 1, rules, flags, waits)


@njit
def answer(st, action: int, rules, flags, waits) -> None:
    """One seat's answer in a claim or robbing window; resolves after the last one."""
    i = st.claim_pos
    s = st.claim_seats[i]
    st.claim_ans[i] = action
    if st.claim_opts[i] & OPT_HU and action != HU and rules[R_PASS_WIN_RULE]:
        st.passed_fan[s] = max(st.passed_fan[s], st.claim_fan[i])  # 过胡
    st.claim_pos = i + 1
    if i + 1 < st.n_claim:
        st.to_act = st.claim_seats[i + 1]
        return
    any_hu = False
    taker = -1
    taken = -1
    for j in range(st.n_claim):
        a = st.claim_ans[j]
        if a == HU:
            any_hu = True
        elif a == PONG or a == KONG:
            taker = st.claim_seats[j]
            taken = a
    if any_hu:
        _window_wins(st, rules, flags, waits)
    elif st.phase == PH_ROB:
        complete_added_kong(st, st.claim_from, st.claim_tile, rules, flags, waits)
    elif taker >= 0:
        _take(st, taker, taken, rules, flags, waits)
    else:
        begin_turn(st, next_active(st, st.claim_from), 0, rules, flags, waits)
