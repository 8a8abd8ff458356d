"""Dealing, legal-action masks and the transition function (numba), RULES.md §3, §4, §10.

``deal(st, wall, dealer, offset, rules)`` starts a hand; ``legal_mask`` fills
``int8[ACTION_SPACE]`` for the seat to act; ``apply`` takes one legal
decision and advances to the next decision point (draws, window openings,
payments and the end of the hand happen inside). ``step`` checks legality
first and leaves the state untouched when the action is illegal.

``make_deal(seed)`` draws the wall, the dealer and the 换三张 direction from a
seed with splitmix64, so every path (``Game``, the batched engine, replays)
deals the same hand from the same seed.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.layout import MELD_PONG, R_DECLARE_VOID, R_EXCHANGE_THREE, R_MUST_WIN_LAST_FOUR
from .actions import ACTION_SPACE, DISCARD, EXCHANGE, HU, KONG, PASS, PONG, SELF_KONG, VOID
from .core import (
    OPT_FORCED,
    OPT_HU,
    OPT_KONG,
    OPT_PONG,
    answer,
    apply_exchange,
    discard,
    self_draw_win,
    self_kong,
    start_play,
    tiles_left,
    void_of,
    win_score,
)
from .state import END_NONE, MAX_LOG, PH_CLAIM, PH_EXCHANGE, PH_OVER, PH_ROB, PH_VOID

OK = 0
ILLEGAL = 1
OVER = 2


@njit
def splitmix64(state: np.uint64) -> tuple:
    """One splitmix64 step: ``(new state, 64 random bits)``."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@njit
def make_deal(seed: np.uint64, wall: np.ndarray) -> tuple:
    """Shuffle the 108 tiles into ``wall`` (Fisher-Yates); return ``(dealer, offset)``."""
    for k in range(108):
        wall[k] = k // 4
    state = np.uint64(seed)
    for k in range(107, 0, -1):
        state, r = splitmix64(state)
        j = np.int64(r % np.uint64(k + 1))
        tmp = wall[k]
        wall[k] = wall[j]
        wall[j] = tmp
    state, r = splitmix64(state)
    dealer = np.int64(r % np.uint64(4))
    state, r = splitmix64(state)
    offset = 1 + np.int64(r % np.uint64(3))
    return dealer, offset


@njit
def deal(st, wall: np.ndarray, dealer: int, offset: int, rules: np.ndarray) -> None:
    """Reset the record and deal: 13 tiles each from the dealer on, the dealer's 14th."""
    st.wall[:] = wall
    st.dealer = dealer
    st.exchange_offset = offset if rules[R_EXCHANGE_THREE] else 0
    st.hands[:] = 0
    st.melds[:] = 0
    st.n_melds[:] = 0
    st.river[:] = -1
    st.river_flag[:] = 0
    st.n_river[:] = 0
    st.picks[:] = -1
    st.n_picks[:] = 0
    st.void[:] = -1
    st.n_declared = 0
    st.won[:] = 0
    st.n_won = 0
    st.n_win_events = 0
    st.win_order[:] = -1
    st.win_tile[:] = -1
    st.win_from[:] = -1
    st.win_fan[:] = 0
    st.win_base[:] = -1
    st.win_roots[:] = 0
    st.win_extras[:] = 0
    st.win_points[:] = 0
    st.scores[:] = 0
    st.kong_paid[:] = 0
    st.last_kong_seat = -1
    st.last_kong_from = -1
    st.last_kong_pay[:] = 0
    st.settle_pig[:] = 0
    st.settle_tenpai[:] = 0
    st.settle_delta[:] = 0
    st.drawn = 0
    st.drawn_tile = -1
    st.replacement = 0
    st.heavenly = 0
    st.earthly = 0
    st.draws[:] = 0
    st.claimed = 0
    st.passed_fan[:] = -1
    st.claim_tile = -1
    st.claim_from = -1
    st.claim_after_kong = 0
    st.claim_last = 0
    st.claim_seats[:] = -1
    st.claim_opts[:] = 0
    st.claim_fan[:] = -1
    st.claim_ans[:] = -1
    st.n_claim = 0
    st.claim_pos = 0
    st.end_reason = END_NONE
    st.next_dealer = -1
    st.n_log = 0
    st.log[:] = 0
    for k in range(52):
        seat = (dealer + k // 13) % 4
        st.hands[seat, wall[k]] += 1
    st.hands[dealer, wall[52]] += 1
    st.draws[dealer] = 1
    st.head = 53
    st.tail = 107
    if rules[R_EXCHANGE_THREE]:
        st.phase = PH_EXCHANGE
        st.to_act = dealer
    elif rules[R_DECLARE_VOID]:
        st.phase = PH_VOID
        st.to_act = dealer
    else:
        start_play(st)


@njit
def _holds_void(st, seat: int, rules) -> bool:
    v = void_of(st, seat, rules)
    if v < 0:
        return False
    for r in range(9):
        if st.hands[seat, 9 * v + r]:
            return True
    return False


@njit
def legal_mask(st, rules: np.ndarray, flags: np.ndarray, out: np.ndarray) -> int:
    """Fill ``out`` (``int8[ACTION_SPACE]``) with the seat-to-act's legal actions; return their count."""
    out[:] = 0
    seat = st.to_act
    phase = st.phase
    if phase == PH_OVER or seat < 0:
        return 0
    n = 0
    h = st.hands[seat]
    if phase == PH_EXCHANGE:
        k = st.n_picks[seat]
        for t in range(27):
            if h[t] == 0:
                continue
            s = t // 9
            if k == 0:
                ok = h[9 * s : 9 * s + 9].sum() >= 3
            else:
                ok = s == st.picks[seat, 0] // 9
            if ok:
                out[EXCHANGE + t] = 1
                n += 1
        return n
    if phase == PH_VOID:
        for s in range(3):
            out[VOID + s] = 1
        return 3
    if phase == PH_CLAIM or phase == PH_ROB:
        opts = st.claim_opts[st.claim_pos]
        if opts & OPT_HU:
            out[HU] = 1
            n += 1
        if opts & OPT_PONG:
            out[PONG] = 1
            n += 1
        if opts & OPT_KONG:
            out[KONG] = 1
            n += 1
        if not opts & OPT_FORCED:
            out[PASS] = 1
            n += 1
        return n
    # own turn
    if st.drawn:
        ctx = 1  # CTX_SELF_DRAW (the context does not change legality)
        fan, _, _, _ = win_score(st, seat, -1, ctx, rules, flags)
        if fan >= 0:
            out[HU] = 1
            n += 1
            if rules[R_MUST_WIN_LAST_FOUR] and tiles_left(st) <= 4:
                return n  # 最后四张必须胡
        if tiles_left(st) > 0:
            v = void_of(st, seat, rules)
            for t in range(27):
                if t // 9 == v or h[t] == 0:
                    continue
                if h[t] == 4:
                    out[SELF_KONG + t] = 1
                    n += 1
                    continue
                for j in range(st.n_melds[seat]):
                    if st.melds[seat, j, 0] == MELD_PONG and st.melds[seat, j, 1] == t:
                        out[SELF_KONG + t] = 1
                        n += 1
    must_void = _holds_void(st, seat, rules)
    v = void_of(st, seat, rules)
    for t in range(27):
        if h[t] and (not must_void or t // 9 == v):
            out[DISCARD + t] = 1
            n += 1
    return n


@njit
def apply(st, action: int, rules: np.ndarray, flags: np.ndarray, waits: np.ndarray) -> None:
    """Take one legal decision of the seat to act and advance to the next decision."""
    seat = st.to_act
    if st.n_log < MAX_LOG:
        st.log[st.n_log] = seat * 128 + action
        st.n_log += 1
    phase = st.phase
    if phase == PH_EXCHANGE:
        t = action - EXCHANGE
        k = st.n_picks[seat]
        st.picks[seat, k] = t
        st.hands[seat, t] -= 1
        st.n_picks[seat] = k + 1
        if k + 1 == 3:
            st.n_declared += 1
            if st.n_declared == 4:
                apply_exchange(st, rules)
            else:
                st.to_act = (seat + 1) % 4
        return
    if phase == PH_VOID:
        st.void[seat] = action - VOID
        st.n_declared += 1
        if st.n_declared == 4:
            start_play(st)
        else:
            st.to_act = (seat + 1) % 4
        return
    if phase == PH_CLAIM or phase == PH_ROB:
        answer(st, action, rules, flags, waits)
        return
    if action == HU:
        self_draw_win(st, seat, rules, flags, waits)
    elif action >= SELF_KONG and action < PONG:
        self_kong(st, seat, action - SELF_KONG, rules, flags, waits)
    else:
        discard(st, seat, action - DISCARD, rules, flags, waits)


@njit
def step(st, action: int, rules, flags, waits, scratch: np.ndarray) -> int:
    """``apply`` after checking legality: ``OK``, ``ILLEGAL`` (state untouched) or ``OVER``."""
    if st.phase == PH_OVER:
        return OVER
    if action < 0 or action >= ACTION_SPACE:
        return ILLEGAL
    legal_mask(st, rules, flags, scratch)
    if not scratch[action]:
        return ILLEGAL
    apply(st, action, rules, flags, waits)
    return OK


# Entry points taking (records, index): numba types an array of records much
# faster than a single record at dispatch, which matters for per-decision calls.


@njit
def legal_mask_at(states, i: int, rules, flags, out) -> int:
    """``legal_mask`` of ``states[i]``."""
    return legal_mask(states[i], rules, flags, out)


@njit
def apply_at(states, i: int, action: int, rules, flags, waits) -> None:
    """``apply`` on ``states[i]``."""
    apply(states[i], action, rules, flags, waits)
