"""All-numba self-play with simple built-in policies, for benchmarks and soak tests.

Policies: ``RANDOM`` (uniform over the legal actions), ``HU_FIRST`` (random,
but a legal win is always taken) and ``GREEDY`` (takes wins, discards a tile
that leaves the lowest void-aware shanten, random otherwise): the last plays
enough real hands to reach wins, multiple winners, robbed kongs and
settlements often. Decisions are drawn from a per-hand splitmix64 stream, so
a run is reproducible from its seeds on any number of cores.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from ..kernels.shanten import shanten
from .actions import ACTION_SPACE, DISCARD, HU
from .core import void_of
from .deal import deal_seed, splitmix64
from .legal import legal_mask
from .state import PH_OVER, PH_TURN
from .step import apply

RANDOM = 0
HU_FIRST = 1
GREEDY = 2


@njit
def choose(st, mask, n: int, rng: np.uint64, policy: int, rules, dist) -> tuple:
    """``(action, new rng state)`` for the seat to act under ``policy``."""
    rng, r = splitmix64(rng)
    if policy != RANDOM and mask[HU]:
        return HU, rng
    if policy == GREEDY and st.phase == PH_TURN:
        seat = st.to_act
        h = st.hands[seat]
        v = void_of(st, seat, rules)
        best = 99
        n_best = 0
        for t in range(27):
            if mask[DISCARD + t]:
                h[t] -= 1
                s = shanten(h, v, dist)
                h[t] += 1
                if s < best:
                    best = s
                    n_best = 1
                elif s == best:
                    n_best += 1
        if n_best > 0:
            pick = np.int64(r % np.uint64(n_best))
            for t in range(27):
                if mask[DISCARD + t]:
                    h[t] -= 1
                    s = shanten(h, v, dist)
                    h[t] += 1
                    if s == best:
                        if pick == 0:
                            return DISCARD + t, rng
                        pick -= 1
    pick = np.int64(r % np.uint64(n))
    for a in range(ACTION_SPACE):
        if mask[a]:
            if pick == 0:
                return a, rng
            pick -= 1
    return -1, rng


@njit
def play(states, i: int, seed: np.uint64, policy: int, rules, flags, waits, dist) -> int:
    """Deal ``states[i]`` from ``seed`` and play the hand to the end; return the decisions taken."""
    deal_seed(states, i, seed, rules)
    st = states[i]
    mask = np.zeros(ACTION_SPACE, dtype=np.int8)
    rng = seed ^ np.uint64(0xD1B54A32D192ED03)
    decisions = 0
    while st.phase != PH_OVER:
        n = legal_mask(st, rules, flags, mask)
        a, rng = choose(st, mask, n, rng, policy, rules, dist)
        apply(st, a, rules, flags, waits)
        decisions += 1
    return decisions


@njit(parallel=True)
def play_batch(states, seeds, policy: int, rules, flags, waits, dist) -> np.ndarray:
    """``play`` for every (state, seed) pair, parallel over the cores."""
    n = states.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in numba.prange(n):
        out[i] = play(states, np.int64(i), seeds[i], policy, rules, flags, waits, dist)
    return out
