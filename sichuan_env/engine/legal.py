"""The legal actions of the seat to act (numba), docs/rules.md §4 and §10.

``legal_mask`` fills ``int8[ACTION_SPACE]``; the engine never applies an
action this mask does not allow (``step.apply`` trusts its caller, and every
caller checks against a mask it computed itself).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.layout import CTX_SELF_DRAW, MELD_PONG, R_MUST_WIN_LAST_FOUR
from .actions import DISCARD, EXCHANGE, HU, KONG, PASS, PONG, SELF_KONG, VOID
from .core import OPT_FORCED, OPT_HU, OPT_KONG, OPT_PONG, tiles_left, void_of, win_score
from .state import PH_CLAIM, PH_EXCHANGE, PH_OVER, PH_ROB, PH_VOID


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
def _exchange_mask(st, seat: int, out) -> int:
    """换三张 picks: three tiles of one suit, one at a time (the first fixes the suit)."""
    h = st.hands[seat]
    k = st.n_picks[seat]
    n = 0
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


@njit
def _window_mask(st, out) -> int:
    """Claim and robbing windows: the options fixed when the window opened."""
    opts = st.claim_opts[st.claim_pos]
    n = 0
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


@njit
def legal_mask(st, rules: np.ndarray, flags: np.ndarray, out: np.ndarray) -> int:
    """Fill ``out`` (``int8[ACTION_SPACE]``) with the seat-to-act's legal actions; return their count."""
    out[:] = 0
    seat = st.to_act
    phase = st.phase
    if phase == PH_OVER or seat < 0:
        return 0
    if phase == PH_EXCHANGE:
        return _exchange_mask(st, seat, out)
    if phase == PH_VOID:
        for s in range(3):
            out[VOID + s] = 1
        return 3
    if phase == PH_CLAIM or phase == PH_ROB:
        return _window_mask(st, out)
    # own turn
    n = 0
    h = st.hands[seat]
    v = void_of(st, seat, rules)
    if st.drawn:
        fan, _, _, _ = win_score(st, seat, -1, CTX_SELF_DRAW, rules, flags)  # context: no legality
        if fan >= 0:
            out[HU] = 1
            n += 1
            if rules[R_MUST_WIN_LAST_FOUR] and tiles_left(st) <= 4:
                return n  # 最后四张必须胡
        if tiles_left(st) > 0:
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
    for t in range(27):
        if h[t] and (not must_void or t // 9 == v):
            out[DISCARD + t] = 1
            n += 1
    return n
