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
one) and ``VectorEnv`` (all slots at once). The kernel trusts nothing it
reads: counts are capped at 4 and never go below 0, and whatever the planes
say, the answer is an action the mask allows (the facade checks the inputs
first, ``sichuan_env.agents.base``).
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.base import BaseAgent

from sichuan_env._jit import njit
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
from sichuan_env.kernels.agari import scan
from sichuan_env.kernels.shanten import shanten, shanten_from_words
from sichuan_env.kernels.tables import get_tables
from sichuan_env.kernels.ukeire import discard_table_of

OBS_MIN_ROWS = max(O.HAND + 4, O.VOIDS + 1, O.VISIBLE + 4, O.CLAIM + 1)
"""The kernel reads only rows below this (all public v1 rows)."""


@njit
def hand_of(obs, hand) -> None:
    """Write the own concealed tile counts of observation ``obs`` into ``hand`` (``int[27]``)."""
    # any nonzero entry counts as 1, so a count is at most 4 whatever the planes hold
    for t in range(27):
        hand[t] = (
            np.uint8(obs[O.HAND, t] != 0)
            + np.uint8(obs[O.HAND + 1, t] != 0)
            + np.uint8(obs[O.HAND + 2, t] != 0)
            + np.uint8(obs[O.HAND + 3, t] != 0)
        )


@njit
def void_of(obs) -> int:
    """The own void suit (0-2) that observation ``obs`` shows, or -1 before 定缺."""
    for s in range(3):
        if obs[O.VOIDS, 9 * s]:
            return s
    return -1


POW5 = np.array([5**r for r in range(9)], dtype=np.int64)
_NO_TABLE = np.empty(0, dtype=np.int64)
"""``decide_with``'s "no table": compute each discard's (shanten, ukeire) (a numba constant)."""
"""Place values of the base-5 suit keys (``kernels.agari.scan``)."""


@njit
def ukeire(hand, void, unseen, dist) -> tuple:
    """(shanten, useful unseen tiles) of a 3k+1 hand.

    The same numbers as calling ``shanten`` on the hand and on the hand plus
    each tile, but each draw only moves one suit's base-5 key, so the hand is
    scanned once (``tests/test_agents.py`` checks it against ``shanten``).
    """
    k0, k1, k2, n0, n1, n2, _ = scan(hand)
    n = n0 + n1 + n2
    if n0 < 0:  # a count above 4: the plain path (never for the capped hands of the agents)
        return _ukeire_plain(hand, void, unseen, dist)
    base = shanten_from_words(dist[k0], dist[k1], dist[k2], n, void)
    useful = 0
    for t in range(27):
        if unseen[t] <= 0 or hand[t] >= 4 or t // 9 == void:
            continue
        s = t // 9
        p = POW5[t % 9]
        if s == 0:
            sh = shanten_from_words(dist[k0 + p], dist[k1], dist[k2], n + 1, void)
        elif s == 1:
            sh = shanten_from_words(dist[k0], dist[k1 + p], dist[k2], n + 1, void)
        else:
            sh = shanten_from_words(dist[k0], dist[k1], dist[k2 + p], n + 1, void)
        if sh < base:
            useful += unseen[t]
    return base, useful


@njit
def _ukeire_plain(hand, void, unseen, dist) -> tuple:
    """``ukeire`` by one ``shanten`` call per tile (the reference)."""
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


@njit
def unseen_of(obs, out) -> None:
    """Copies of each tile I cannot see (4 minus the ``visible`` thermometer), into ``out``."""
    for t in range(27):
        seen = (
            np.int64(obs[O.VISIBLE, t] != 0)
            + np.int64(obs[O.VISIBLE + 1, t] != 0)
            + np.int64(obs[O.VISIBLE + 2, t] != 0)
            + np.int64(obs[O.VISIBLE + 3, t] != 0)
        )
        out[t] = 4 - seen


@njit
def self_kong_within(mask, hand, void, dist, limit: int) -> int:
    """The first legal concealed or added kong that leaves shanten <= ``limit``, else -1."""
    for t in range(27):
        if mask[SELF_KONG + t]:
            k = 4 if hand[t] == 4 else 1
            if hand[t] < k:
                continue
            hand[t] -= k
            sh = shanten(hand, void, dist)
            hand[t] += k
            if sh <= limit:
                return SELF_KONG + t
    return -1


@njit
def _first_legal(mask) -> int:
    for a in range(ACTION_SPACE):
        if mask[a]:
            return a
    return -1


@njit
def _suit_size(hand, s: int) -> int:
    n = 0
    for r in range(9):
        n += hand[9 * s + r]
    return n


@njit
def _claim(obs, mask, hand, void, dist) -> int:
    """Pong / kong the claimable tile if the shanten does not get worse, else pass."""
    t = -1
    for u in range(27):
        if obs[O.CLAIM, u]:
            t = u
    if t >= 0:
        now = shanten(hand, void, dist)
        if mask[KONG] and hand[t] >= 3:
            hand[t] -= 3
            after = shanten(hand, void, dist)
            hand[t] += 3
            if after <= now:
                return KONG
        if mask[PONG] and hand[t] >= 2:
            hand[t] -= 2
            if void >= 0 and _holds(hand, void):  # the discard that follows: a void tile
                after = 99
                for d in range(9 * void, 9 * void + 9):
                    if hand[d] > 0:
                        hand[d] -= 1
                        after = min(after, shanten(hand, void, dist))
                        hand[d] += 1
            else:  # any tile: for the 3k+2 <= 14 tiles h of play, min over d of
                # shanten(h - d) is shanten(h), or 0 if h is complete
                after = max(shanten(hand, void, dist), 0)
            hand[t] += 2
            if after <= now:
                return PONG
    return PASS if mask[PASS] else -1


@njit
def decide(obs, mask, dist) -> int:
    """The heuristic's action for one (observation, mask); -1 only for a mask with no 1.

    Safe for any ``uint8`` planes of at least ``OBS_MIN_ROWS`` x 27 and any
    ``int8[88]`` mask: tile counts are capped at 4, a count is never
    decremented below 0, and the answer is an action the mask allows (the
    first legal one where the observation contradicts the mask).
    """
    return decide_with(obs, mask, dist, _NO_TABLE, _NO_TABLE)


@njit
def decide_with(obs, mask, dist, sh, uk) -> int:
    """``decide``, reading the own-turn (shanten, ukeire) after each discard from ``sh``/``uk``.

    ``sh[d]``, ``uk[d]``: ``ukeire`` of the hand less one ``d``, for every
    ``d`` the hand holds (``sichuan_env.agents.nn.features.decide_aux`` has
    them already); empty arrays: computed here. The answer is ``decide``'s.
    """
    if obs.shape[0] < OBS_MIN_ROWS or obs.shape[1] != 27 or mask.shape[0] != ACTION_SPACE:
        return -1
    if mask[HU]:
        return HU
    hand = np.zeros(27, dtype=np.uint8)
    hand_of(obs, hand)
    void = void_of(obs)
    unseen = np.zeros(27, dtype=np.int64)
    unseen_of(obs, unseen)
    # 定缺: the shortest suit among the legal ones
    best, best_n = -1, 99
    for s in range(3):
        if mask[VOID + s]:
            n = _suit_size(hand, s)
            if n < best_n:
                best, best_n = s, n
    if best >= 0:
        return VOID + best
    # 换三张: tiles of the shortest legal suit, the most isolated first
    best_t, best_key = -1, 1 << 30
    for t in range(27):
        if not mask[EXCHANGE + t]:
            continue
        s = t // 9
        n = _suit_size(hand, s)
        neighbours = 0
        for d in (-2, -1, 1, 2):
            u = t + d
            if 0 <= u < 27 and u // 9 == s:
                neighbours += hand[u]
        key = n * 100 + neighbours * 10 + hand[t]
        if key < best_key:
            best_t, best_key = t, key
    if best_t >= 0:
        return EXCHANGE + best_t
    # claims: pong / kong only if the shanten does not get worse
    if mask[PONG] or mask[KONG]:
        a = _claim(obs, mask, hand, void, dist)
        return a if a >= 0 else _first_legal(mask)
    if mask[PASS]:
        return PASS
    # own turn: discard (or kong) for the lowest shanten, then the most ukeire
    best_a, best_sh, best_uk = -1, 99, -1
    if sh.shape[0] == 0:
        sh = np.zeros(27, dtype=np.int64)
        uk = np.zeros(27, dtype=np.int64)
        discard_table_of(hand, void, unseen, dist, mask[DISCARD : DISCARD + 27], sh, uk)
    for d in range(27):
        if not mask[DISCARD + d] or hand[d] == 0:
            continue
        s, u = sh[d], uk[d]
        if s < best_sh or (s == best_sh and u >= best_uk):
            best_a, best_sh, best_uk = DISCARD + d, s, u
    kong = self_kong_within(mask, hand, void, dist, best_sh)
    if kong >= 0:
        return kong
    if best_a < 0:
        return _first_legal(mask)
    return best_a


@njit
def _holds(hand, void) -> bool:
    for r in range(9):
        if hand[9 * void + r]:
            return True
    return False


@njit(parallel=True)
def decide_batch(obs, masks, dist, out) -> None:
    """``decide`` for every row, parallel over the cores (-1 marks a row with no legal action)."""
    for i in numba.prange(obs.shape[0]):
        out[i] = decide(obs[i], masks[i], dist)


class HeuristicAgent(BaseAgent):
    """Rule-based player of observation v1; ``act`` for one decision, ``act_batch`` for many.

    Args:
        seed: accepted for the agent registry; the heuristic is deterministic.
    """

    name = "heuristic"
    obs_version = 1

    def __init__(self, seed: int | None = None) -> None:
        self._dist = get_tables()["DIST"]

    def _act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        a = int(decide(obs, mask, self._dist))
        if a < 0:  # unreachable after the checks of BaseAgent; never hand back an illegal id
            raise ValueError("mask has no legal action (all zeros)")
        return a

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.empty(len(masks), dtype=np.int64)
        decide_batch(obs, masks, self._dist, out)
        bad = np.flatnonzero(out < 0)
        if bad.size:  # unreachable after the checks of BaseAgent
            raise ValueError(f"masks row {int(bad[0])} has no legal action (all zeros)")
        return out
