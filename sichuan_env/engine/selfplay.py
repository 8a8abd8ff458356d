"""All-numba random self-play: whole hands with uniformly random legal decisions.

Used by the engine benchmark and the soak tests. Decisions are drawn with a
per-hand splitmix64 stream, so a run is reproducible from its seed on any
number of cores.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from .actions import ACTION_SPACE
from .state import PH_OVER, STATE_DTYPE
from .step import apply, deal, legal_mask, make_deal, splitmix64


@njit
def play_random(st, seed: np.uint64, rules, flags, waits) -> int:
    """Deal from ``seed`` and play the hand to the end at random; return the decisions taken."""
    wall = np.empty(108, dtype=np.uint8)
    dealer, offset = make_deal(seed, wall)
    deal(st, wall, dealer, offset, rules)
    mask = np.zeros(ACTION_SPACE, dtype=np.int8)
    rng = seed ^ np.uint64(0xD1B54A32D192ED03)
    decisions = 0
    while st.phase != PH_OVER:
        n = legal_mask(st, rules, flags, mask)
        rng, r = splitmix64(rng)
        pick = np.int64(r % np.uint64(n))
        for a in range(ACTION_SPACE):
            if mask[a]:
                if pick == 0:
                    apply(st, a, rules, flags, waits)
                    break
                pick -= 1
        decisions += 1
    return decisions


@njit(parallel=True)
def play_random_batch(states, seeds, rules, flags, waits) -> np.ndarray:
    """``play_random`` for every (state, seed) pair, parallel over the cores."""
    n = states.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in numba.prange(n):
        out[i] = play_random(states[i], seeds[i], rules, flags, waits)
    return out


def new_states(n: int) -> np.ndarray:
    """``n`` zeroed hand records."""
    return np.zeros(n, dtype=STATE_DTYPE)
