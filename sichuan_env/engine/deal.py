"""Dealing a hand (numba): the blank record, the seeded shuffle, the deal (docs/rules.md §3).

A hand starts from ``BLANK``, a template record in which every field holds
its value before the deal (0, or -1 where the field names a seat, tile or
action that does not exist yet: ``BLANK_VALUES``). ``deal`` copies the
template over the slot and then deals, so a field added to ``STATE_DTYPE``
can never leak from one hand into the next (auto-reset reuses slots).

``make_deal(seed)`` draws the wall, the dealer and the 换三张 direction from a
seed with splitmix64, so every path (``Game``, the batched engine, replays)
deals the same hand from the same seed.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.layout import R_DECLARE_VOID, R_EXCHANGE_THREE
from .state import PH_EXCHANGE, PH_TURN, PH_VOID, STATE_DTYPE

BLANK_VALUES = {
    "river": -1,
    "picks": -1,
    "void": -1,
    "win_order": -1,
    "win_tile": -1,
    "win_from": -1,
    "win_base": -1,
    "last_kong_seat": -1,
    "last_kong_from": -1,
    "drawn_tile": -1,
    "passed_fan": -1,
    "claim_tile": -1,
    "claim_from": -1,
    "claim_seats": -1,
    "claim_fan": -1,
    "claim_ans": -1,
    "to_act": -1,
    "next_dealer": -1,
}
"""Fields whose value before the deal is not 0 (every other field starts at 0)."""


def _blank() -> np.ndarray:
    blank = np.zeros(1, dtype=STATE_DTYPE)
    for name, value in BLANK_VALUES.items():
        blank[0][name] = value
    blank.flags.writeable = False
    return blank


BLANK = _blank()
"""``STATE_DTYPE[1]``: the record before a deal (read-only; a compile-time constant of ``deal``)."""


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
def start_play(st) -> None:
    """The dealer's first turn: 14 tiles, no draw (天胡 possible)."""
    st.turn = 1
    st.phase = PH_TURN
    st.to_act = st.dealer
    st.drawn = 1
    st.drawn_tile = -1
    st.replacement = 0
    st.heavenly = 1
    st.earthly = 0


@njit
def deal(states, i: int, wall: np.ndarray, dealer: int, offset: int, rules: np.ndarray) -> None:
    """Reset ``states[i]`` to ``BLANK`` and deal: 13 tiles each from the dealer on, the dealer's 14th."""
    states[i] = BLANK[0]
    st = states[i]
    for k in range(108):  # not st.wall[:] = wall: its shape check compiles string formatting
        st.wall[k] = wall[k]
    st.dealer = dealer
    st.exchange_offset = offset if rules[R_EXCHANGE_THREE] else 0
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
def deal_seed(states, i: int, seed: np.uint64, rules) -> None:
    """Deal the hand of ``seed`` into ``states[i]`` (the same deal as ``Game(seed=...)``)."""
    wall = np.empty(108, dtype=np.uint8)
    dealer, offset = make_deal(seed, wall)
    deal(states, i, wall, dealer, offset, rules)
