"""One decision of the seat to act (numba): ``apply`` advances the hand to its next decision point.

Draws, window openings, payments and the end of the hand happen inside.
``apply`` trusts that the action is legal: callers check it against a
``legal.legal_mask`` they computed themselves (``Game``, ``batch.step_one``).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from .actions import DISCARD, EXCHANGE, HU, PONG, SELF_KONG, VOID
from .claims import answer, discard, self_kong
from .deal import start_play
from .legal import legal_mask
from .state import MAX_LOG, PH_CLAIM, PH_EXCHANGE, PH_OVER, PH_ROB, PH_VOID
from .turn import apply_exchange, self_draw_win


@njit
def _setup_decision(st, seat: int, action: int, rules) -> None:
    """换三张 picks and 定缺, one seat at a time from the dealer."""
    if st.phase == PH_EXCHANGE:
        t = action - EXCHANGE
        k = st.n_picks[seat]
        st.picks[seat, k] = t
        st.hands[seat, t] -= 1
        st.n_picks[seat] = k + 1
        if k + 1 < 3:
            return
    else:
        st.void[seat] = action - VOID
    st.n_declared += 1
    if st.n_declared < 4:
        st.to_act = (seat + 1) % 4
    elif st.phase == PH_EXCHANGE:
        apply_exchange(st, rules)
    else:
        start_play(st)


@njit
def apply(st, action: int, rules: np.ndarray, flags: np.ndarray, waits: np.ndarray) -> None:
    """Take one legal decision of the seat to act and advance to the next decision."""
    seat = st.to_act
    if st.n_log < MAX_LOG:
        st.log[st.n_log] = seat * 128 + action
        st.n_log += 1
    phase = st.phase
    if phase == PH_EXCHANGE or phase == PH_VOID:
        _setup_decision(st, seat, action, rules)
    elif phase == PH_CLAIM or phase == PH_ROB:
        answer(st, action, rules, flags, waits)
    elif action == HU:
        self_draw_win(st, seat, rules, flags, waits)
    elif action >= SELF_KONG and action < PONG:
        self_kong(st, seat, action - SELF_KONG, rules, flags, waits)
    else:
        discard(st, seat, action - DISCARD, rules, flags, waits)


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


ILLEGAL = -2
"""``decide_at``'s answer to an action that is not legal now (nothing changed)."""


@njit
def decide_at(states, i: int, action: int, rules, flags, waits, mask, deltas) -> int:
    """One decision of ``states[i]`` in one call, for the AEC env; ``action`` -1 only refreshes.

    ``mask`` must hold the current decision's legal mask (this call and
    ``legal_mask_at`` fill it). A legal ``action`` is applied and the seats'
    point changes written into ``deltas`` (``int64[4]``); an illegal one
    changes nothing and returns ``ILLEGAL``. Then ``mask`` gets the next
    decision's legal mask. Returns the seat to act next, or -1 once the hand is over.
    """
    st = states[i]
    if action >= 0:
        if action >= mask.shape[0] or mask[action] == 0:
            return ILLEGAL
        for s in range(4):
            deltas[s] = st.scores[s]
        apply(st, action, rules, flags, waits)
        for s in range(4):
            deltas[s] = st.scores[s] - deltas[s]
    legal_mask(st, rules, flags, mask)
    return -1 if st.phase == PH_OVER else int(st.to_act)
