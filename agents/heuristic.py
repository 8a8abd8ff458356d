"""``HeuristicAgent``: a strong rule-based 血战 player that acts from (observation, mask).

Rules of thumb, in order:
- 定缺: declare the suit with the fewest tiles (ties: the lower suit).
- 换三张: pass three tiles of the shortest suit that has three.
- always win (自摸, 点炮, 抢杠) when the mask allows it;
- discard: void tiles first (the mask enforces it), then the tile that leaves
  the lowest void-aware shanten, then the most useful tiles (ukeire: unseen
  copies of the tiles that would lower the shanten), then the highest index;
- pong / kong only when the hand's shanten does not get worse.

It reads its own hand, void suit, visible tiles and the claimable tile from
observation v1 (``sichuan_env.encoding.observation``). The decision is one
numba kernel over a batch, so the same code serves the AEC env (a batch of
one) and ``VectorEnv`` (all slots at once).
"""

from __future__ import annotations

import numba
import numpy as np

from sichuan_env.encoding import observation as O
from sichuan_env.engine.actions import (
    ACTION_SPACE,
    DISCARD,
    EXCHANGE,
    HU,
    KONG,
    PASS,
    PONG,
    SELF_KONG,
    VOID,
)
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables


@numba.njit(cache=True)
def _hand_of(obs, hand) -> None:
    for t in range(27):
        hand[t] = obs[O.HAND, t] + obs[O.HAND + 1, t] + obs[O.HAND + 2, t] + obs[O.HAND + 3, t]


@numba.njit(cache=True)
def _void_of(obs) -> int:
    for s in range(3):
        if obs[O.VOIDS, 9 * s]:
            return s
    return -1


@numba.njit(cache=True)
def _ukeire(hand, void, unseen, dist) -> tuple:
    """(shanten, useful unseen tiles) of a 3k+1 hand."""
    base = shanten(hand, void, dist)
    useful = 0
    for t in range(27):
        if unseen[t] <= 0 or hand[t] >= 4 or t // 9 == void:
            continue
        hand[t] += 1
        if shanten(hand, void, dist) < base:
            useful += unseen[t]
        hand[t] -= 1
    return base, useful


@numba.njit(cache=True)
def decide(obs, mask, dist) -> int:
    """The heuristic's action for one (observation, mask)."""
    if mask[HU]:
        return HU
    hand = np.zeros(27, dtype=np.uint8)
    _hand_of(obs, hand)
    void = _void_of(obs)
    unseen = np.zeros(27, dtype=np.int64)
    for t in range(27):
        seen = obs[O.VISIBLE, t] + obs[O.VISIBLE + 1, t] + obs[O.VISIBLE + 2, t]
        unseen[t] = 4 - seen - obs[O.VISIBLE + 3, t]
    # 定缺: the shortest suit
    if mask[VOID]:
        best, best_n = 0, 99
        for s in range(3):
            n = 0
            for r in range(9):
                n += hand[9 * s + r]
            if n < best_n:
                best, best_n = s, n
        return VOID + best
    # 换三张: tiles of the shortest legal suit, the most isolated first
    if mask[EXCHANGE : EXCHANGE + 27].any():
        best_t, best_key = -1, 1 << 30
        for t in range(27):
            if not mask[EXCHANGE + t]:
                continue
            s = t // 9
            n = 0
            for r in range(9):
                n += hand[9 * s + r]
            neighbours = 0
            for d in (-2, -1, 1, 2):
                u = t + d
                if u // 9 == s and 0 <= u < 27:
                    neighbours += hand[u]
            key = n * 100 + neighbours * 10 + hand[t]
            if key < best_key:
                best_t, best_key = t, key
        return EXCHANGE + best_t
    # claims: pong / kong only if the shanten does not get worse
    if mask[PONG] or mask[KONG]:
        t = -1
        for u in range(27):
            if obs[O.CLAIM, u]:
                t = u
        now = shanten(hand, void, dist)
        if mask[KONG]:
            hand[t] -= 3
            after = shanten(hand, void, dist)
            hand[t] += 3
            if after <= now:
                return KONG
        if mask[PONG]:
            hand[t] -= 2
            after = 99
            for d in range(27):  # the discard that follows the pong
                if hand[d] > 0 and (void < 0 or d // 9 == void or not _holds(hand, void)):
                    hand[d] -= 1
                    s = shanten(hand, void, dist)
                    hand[d] += 1
                    after = min(after, s)
            hand[t] += 2
            if after <= now:
                return PONG
        return PASS
    if mask[PASS]:
        return PASS
    # own turn: discard (or kong) for the lowest shanten, then the most ukeire
    best_a, best_sh, best_uk = -1, 99, -1
    for d in range(27):
        if not mask[DISCARD + d]:
            continue
        hand[d] -= 1
        sh, uk = _ukeire(hand, void, unseen, dist)
        hand[d] += 1
        if sh < best_sh or (sh == best_sh and uk >= best_uk):
            best_a, best_sh, best_uk = DISCARD + d, sh, uk
    for t in range(27):
        if mask[SELF_KONG + t]:
            k = 4 if hand[t] == 4 else 1
            hand[t] -= k
            sh = shanten(hand, void, dist)
            hand[t] += k
            if sh <= best_sh:
                return SELF_KONG + t
    if best_a < 0:
        for a in range(ACTION_SPACE):
            if mask[a]:
                return a
    return best_a


@numba.njit(cache=True)
def _holds(hand, void) -> bool:
    for r in range(9):
        if hand[9 * void + r]:
            return True
    return False


@numba.njit(cache=True, parallel=True)
def decide_batch(obs, masks, dist, out) -> None:
    """``decide`` for every row, parallel over the cores."""
    for i in numba.prange(obs.shape[0]):
        out[i] = decide(obs[i], masks[i], dist)


class HeuristicAgent:
    """Rule-based player; ``act`` for one decision, ``act_batch`` for many."""

    name = "heuristic"

    def __init__(self) -> None:
        self._dist = get_tables()["DIST"]

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The action for one observation (``uint8[rows, 27]``) and mask (``int8[88]``)."""
        return int(decide(np.ascontiguousarray(observation), np.asarray(mask), self._dist))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for ``uint8[N, rows, 27]`` observations and ``int8[N, 88]`` masks."""
        out = np.zeros(len(masks), dtype=np.int64)
        decide_batch(
            np.ascontiguousarray(observations), np.ascontiguousarray(masks), self._dist, out
        )
        return out
