"""Turns (numba): draws, self-draw wins, the 换三张 exchange, what follows a win (docs/rules.md §3-§4).

``begin_turn`` is where every turn starts: a draw from the head (or the tail
for a kong replacement), or the end of the hand when the wall is empty.
"""

from __future__ import annotations

from .._jit import njit
from ..kernels.layout import (
    CTX_AFTER_KONG,
    CTX_EARTHLY,
    CTX_HEAVENLY,
    CTX_LAST_TILE,
    CTX_SELF_DRAW,
    MELD_KONG,
    MELD_PONG,
    R_DECLARE_VOID,
    R_END_ON_FIRST_WIN,
)
from .core import next_active, tiles_left, win_score
from .deal import start_play
from .settlement import end_hand, kong_payment, pay_self_draw, record_win, settle_draw
from .state import END_FIRST_WIN, END_THREE_WON, END_WALL, PH_TURN, PH_VOID


@njit
def begin_turn(st, seat: int, replacement: int, rules, flags, waits) -> None:
    """``seat`` draws (from the tail for a kong replacement) and owes a turn decision.

    With the wall empty the hand ends instead (流局).
    """
    if tiles_left(st) <= 0:
        if not rules[R_END_ON_FIRST_WIN] or st.n_won == 0:
            settle_draw(st, rules, flags, waits)
        end_hand(st, END_WALL)
        return
    if replacement:
        t = st.wall[st.tail]
        st.tail -= 1
    else:
        t = st.wall[st.head]
        st.head += 1
    st.hands[seat, t] += 1
    st.draws[seat] += 1
    st.drawn_tile = t
    st.passed_fan[seat] = -1  # 过胡 ends at one's next draw of any kind
    st.drawn = 1
    st.replacement = replacement
    st.heavenly = 0
    st.earthly = seat != st.dealer and st.draws[seat] == 1 and not replacement and not st.claimed
    st.turn += 1
    st.phase = PH_TURN
    st.to_act = seat


@njit
def after_win(st, last_winner: int, rules, flags, waits) -> None:
    """End the hand or give the next turn after a win event."""
    st.claimed = 1
    if rules[R_END_ON_FIRST_WIN]:
        end_hand(st, END_FIRST_WIN)
    elif st.n_won >= 3:
        end_hand(st, END_THREE_WON)
    else:
        begin_turn(st, next_active(st, last_winner), 0, rules, flags, waits)


@njit
def apply_exchange(st, rules) -> None:
    """换三张: every seat's three picks go to ``(seat + offset) % 4``; then 定缺 or play."""
    for s in range(4):
        r = (s + st.exchange_offset) % 4
        for k in range(3):
            st.hands[r, st.picks[s, k]] += 1
    st.n_declared = 0
    if rules[R_DECLARE_VOID]:
        st.phase = PH_VOID
        st.to_act = st.dealer
    else:
        start_play(st)


@njit
def self_draw_win(st, seat: int, rules, flags, waits) -> None:
    """自摸 (and 天胡/地胡/杠上花): score, collect, continue (docs/rules.md §7.1)."""
    ctx = CTX_SELF_DRAW
    if st.replacement:
        ctx |= CTX_AFTER_KONG
    if st.heavenly:
        ctx |= CTX_HEAVENLY
    if st.earthly:
        ctx |= CTX_EARTHLY
    if tiles_left(st) == 0:
        ctx |= CTX_LAST_TILE
    fan, base, roots, extras = win_score(st, seat, -1, ctx, rules, flags)
    st.n_win_events += 1
    tile = -1 if st.heavenly else st.drawn_tile
    pts = record_win(st, seat, tile, -1, fan, base, roots, extras, rules)
    pay_self_draw(st, seat, pts, rules)
    st.heavenly = 0
    after_win(st, seat, rules, flags, waits)


@njit
def complete_added_kong(st, konger: int, tile: int, rules, flags, waits) -> None:
    """加杠 nobody robbed: the pong becomes a kong, it is paid for, the konger draws a replacement."""
    for j in range(st.n_melds[konger]):
        if st.melds[konger, j, 0] == MELD_PONG and st.melds[konger, j, 1] == tile:
            st.melds[konger, j, 0] = MELD_KONG
    st.hands[konger, tile] -= 1
    kong_payment(st, konger, MELD_KONG, -1, rules)
    begin_turn(st, konger, 1, rules, flags, waits)
