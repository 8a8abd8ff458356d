"""Exact hidden-state labels for opponent modelling (numba), from the engine's own state.

For a seat ``me`` and its three opponents in relative order (next, opposite,
previous), ``opponent_labels`` writes, at any decision:

- ``tenpai`` (bool[3]): docs/rules.md §5 tenpai, some tile makes a legal win (shape,
  at most two suits, no void tile, fewer than 4 copies in its own hand and
  melds: an exposed kong of 7p makes 7p no wait);
- ``waits`` (uint8[3, 27]): 1 for each such tile;
- ``shanten`` (int8[3]): void-aware shanten of the concealed part (-2 while a
  hand's size is not 3k+1 or 3k+2, i.e. mid-换三张);
- ``hand`` (uint8[3, 27]): concealed counts;
- ``deal_in`` (int64[3, 27]): the points the opponent would be paid for a win
  on ``me`` discarding tile ``t`` now: the win's own ``base_points * 2 **
  (fan - 1)`` in this discard's context (杠上炮 when ``me`` is on its own turn
  after a kong replacement draw, 海底 when the wall is empty), without
  呼叫转移 transfers; 0 where the opponent has won, cannot win on ``t``, or may
  not (过胡);
- ``active`` (bool[3]): the opponent has not won.

Opponents who have won: ``tenpai`` False, ``waits`` and ``deal_in`` zero
(their ``hand`` and ``shanten`` still describe the frozen hand).
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from ..kernels.layout import CTX_KONG_DISCARD, CTX_LAST_TILE, R_BASE_POINTS
from ..kernels.shanten import shanten
from .core import offered_win, tiles_left, void_of, win_score
from .state import PH_TURN

LABEL_FIELDS = ("tenpai", "waits", "shanten", "hand", "deal_in", "active")
"""The label arrays, in the order of ``label_arrays``."""


def label_arrays(n: int | None = None) -> dict[str, np.ndarray]:
    """Zeroed label arrays for one decision (``n=None``) or ``n`` decisions (leading dimension)."""
    lead = () if n is None else (n,)
    return {
        "tenpai": np.zeros((*lead, 3), dtype=np.bool_),
        "waits": np.zeros((*lead, 3, 27), dtype=np.uint8),
        "shanten": np.zeros((*lead, 3), dtype=np.int8),
        "hand": np.zeros((*lead, 3, 27), dtype=np.uint8),
        "deal_in": np.zeros((*lead, 3, 27), dtype=np.int64),
        "active": np.zeros((*lead, 3), dtype=np.bool_),
    }


@njit
def opponent_labels(
    st, me: int, rules, flags, dist, tenpai, waits, shan, hand, deal_in, active
) -> None:
    """Write the labels of ``me``'s three opponents (see the module docstring)."""
    ctx = 0
    if st.phase == PH_TURN and st.to_act == me and st.replacement:
        ctx |= CTX_KONG_DISCARD
    if tiles_left(st) <= 0:
        ctx |= CTX_LAST_TILE
    base = rules[R_BASE_POINTS]
    for r in range(3):
        o = (me + 1 + r) % 4
        h = st.hands[o]
        size = 0
        for t in range(27):
            hand[r, t] = h[t]
            size += h[t]
            waits[r, t] = 0
            deal_in[r, t] = 0
        active[r] = st.won[o] == 0
        v = void_of(st, o, rules)
        shan[r] = shanten(h, v, dist) if size % 3 != 0 else -2
        tenpai[r] = False
        if not active[r]:
            continue
        for t in range(27):
            fan, _, _, _ = win_score(st, o, t, 0, rules, flags)
            if fan >= 0:
                waits[r, t] = 1
                tenpai[r] = True
                fan = offered_win(st, o, t, ctx, rules, flags)
                if fan >= 1:
                    deal_in[r, t] = base << (fan - 1)


@njit
def opponent_labels_at(
    states, i, me, rules, flags, dist, tenpai, waits, shan, hand, deal_in, active
) -> None:
    """``opponent_labels`` of ``states[i]``."""
    opponent_labels(states[i], me, rules, flags, dist, tenpai, waits, shan, hand, deal_in, active)


@njit(parallel=True)
def opponent_labels_batch(
    states, rules, flags, dist, tenpai, waits, shan, hand, deal_in, active
) -> None:
    """Labels for the seat to act of every hand (leading dimension N), parallel over hands."""
    for i in numba.prange(states.shape[0]):
        opponent_labels(
            states[i], states[i].to_act, rules, flags, dist,
            tenpai[i], waits[i], shan[i], hand[i], deal_in[i], active[i],
        )  # fmt: skip
