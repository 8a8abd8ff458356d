"""Determinizations: everything a seat cannot see, dealt again (kernels for the rollout search).

A determinization of a state for seat ``me`` keeps ``me``'s hand, every meld,
river, score and the public counts (each opponent's number of concealed
tiles, the tiles left in the wall) and deals the unseen tiles (the active
opponents' concealed tiles and the undrawn wall, pooled) again: shuffled,
each opponent refilled to its count, the rest becoming the wall in a new
order (``determinize``). One visible constraint is kept: an opponent whose
last discard was outside its declared void suit holds no tile of that suit
(RULES: void tiles go first). Opponents' 过胡 memory is cleared (it is not
public). Nothing of a draw depends on hidden information: its pool is the
multiset of unseen tiles, which ``me`` can count.

Uniform deals give opponents far weaker hands than real ones, who have been
building all along. ``determinize_best`` draws ``draws`` deals and keeps one:

- without beliefs (``bel`` has 0 rows), the deal whose opponents are closest
  to ready (lowest summed void-aware shanten, ``closest_to_ready``);
- with beliefs (``bel`` ``float64[4, 28]``, row ``s`` for seat ``s``: columns
  0-26 the probability that ``s`` holds at least one concealed copy of tile
  ``t``, column 27 the probability that ``s`` is tenpai, e.g. the belief
  model's ``hand`` and ``tenpai`` heads), one deal drawn with probability
  proportional to its likelihood ratio (sampling importance resampling,
  ``belief_resample``): the uniform deal is the proposal and every
  (opponent, tile) "holds it or not" and every opponent's "tenpai or not"
  is an independent factor ``p / q`` (held) or ``(1 - p) / (1 - q)`` (not),
  ``q`` being its probability under uniform deals (exact for holdings, the
  share of the drawn deals for tenpai).
"""

from __future__ import annotations

import math

import numpy as np

from sichuan_env._jit import njit
from sichuan_env.engine.core import void_of
from sichuan_env.engine.deal import splitmix64
from sichuan_env.kernels.shanten import shanten

BELIEF_COLUMNS = 28
"""Columns of a belief row: 27 holding probabilities and the tenpai probability."""
P_CLIP = 1e-3
"""Belief probabilities are clipped to ``[P_CLIP, 1 - P_CLIP]`` (no factor is ever 0 or infinite)."""


def no_belief() -> np.ndarray:
    """The ``bel`` argument that asks for no beliefs: ``float64[0, 28]``."""
    return np.zeros((0, BELIEF_COLUMNS), dtype=np.float64)


@njit
def _void_clear(st, s: int) -> bool:
    """True when seat ``s`` visibly holds no tile of its void suit (its last discard was outside it)."""
    v = st.void[s]
    n = st.n_river[s]
    if v < 0 or n == 0:
        return False
    return st.river[s, n - 1] // 9 != v


@njit
def _assign(st, me: int, pool, n_pool: int, constrained: bool, newhands, taken) -> bool:
    """Refill the active opponents' hands from ``pool``; False if a constraint cannot be met."""
    taken[:n_pool] = False
    newhands[:, :] = 0
    for first in (True, False):
        for s in range(4):
            if s == me or st.won[s] != 0:
                continue
            clear = constrained and _void_clear(st, s)
            if clear != first:
                continue
            need = 0
            for t in range(27):
                need += st.hands[s, t]
            j = 0
            while need > 0 and j < n_pool:
                t = pool[j]
                if not taken[j] and not (clear and t // 9 == st.void[s]):
                    newhands[s, t] += 1
                    taken[j] = True
                    need -= 1
                j += 1
            if need > 0:
                return False
    return True


@njit
def _opponent_shanten(st, me: int, rules, dist) -> int:
    total = 0
    for s in range(4):
        if s != me and st.won[s] == 0:
            total += shanten(st.hands[s], void_of(st, s, rules), dist)
    return total


@njit
def closest_to_ready(st, me: int, rng: np.uint64, draws: int, rules, dist) -> np.uint64:
    """``determinize`` ``draws`` times and keep the draw whose opponents are closest to ready.

    Real opponents have been building their hands all along; uniformly drawn
    hands are far weaker. Keeping the draw with the lowest summed void-aware
    shanten of the active opponents is a cheap stand-in for the posterior.
    """
    if draws <= 1:
        return determinize(st, me, rng)
    hands = st.hands.copy()
    wall = st.wall.copy()
    best_h = st.hands.copy()
    best_w = st.wall.copy()
    best = 1 << 30
    for _ in range(draws):
        st.hands[:, :] = hands
        st.wall[:] = wall
        rng = determinize(st, me, rng)
        sh = _opponent_shanten(st, me, rules, dist)
        if sh < best:
            best = sh
            best_h[:, :] = st.hands
            best_w[:] = st.wall
    st.hands[:, :] = best_h
    st.wall[:] = best_w
    return rng


@njit
def _unseen(st, me: int, counts) -> int:
    """The multiset of tiles ``me`` cannot see into ``counts[27]``; returns its size."""
    counts[:] = 0
    for s in range(4):
        if s != me and st.won[s] == 0:
            for t in range(27):
                counts[t] += st.hands[s, t]
    for j in range(st.head, st.tail + 1):
        counts[st.wall[j]] += 1
    return int(counts.sum())


@njit
def determinize(st, me: int, rng: np.uint64) -> np.uint64:
    """Deal everything ``me`` cannot see in ``st`` again (see the module docstring); return the rng."""
    counts = np.zeros(27, dtype=np.int64)  # the unseen multiset: all a seat can know of it
    _unseen(st, me, counts)
    pool = np.empty(108, dtype=np.uint8)
    n_pool = 0
    for t in range(27):  # in tile order, so the sample depends on the multiset alone
        for _ in range(counts[t]):
            pool[n_pool] = t
            n_pool += 1
    for j in range(n_pool - 1, 0, -1):  # Fisher-Yates
        rng, r = splitmix64(rng)
        k = np.int64(r % np.uint64(j + 1))
        pool[j], pool[k] = pool[k], pool[j]
    newhands = np.zeros((4, 27), dtype=np.uint8)
    taken = np.zeros(108, dtype=np.bool_)
    if not _assign(st, me, pool, n_pool, True, newhands, taken):
        _assign(st, me, pool, n_pool, False, newhands, taken)
    w = st.head
    for j in range(n_pool):
        if not taken[j]:
            st.wall[w] = pool[j]
            w += 1
    for s in range(4):
        if s == me or st.won[s] != 0:
            continue
        st.passed_fan[s] = -1
        for t in range(27):
            st.hands[s, t] = newhands[s, t]
    return rng


@njit
def shuffle_undrawn(st, rng: np.uint64) -> np.uint64:
    """Put the undrawn wall of ``st`` in a uniformly random order, nothing else; return the rng.

    The order of the wall is the one thing no seat can know: a rollout from the true state
    with its wall shuffled samples the true posterior of a decision's outcome (``oracle``
    labels), where ``determinize`` samples a uniform one of everything ``me`` cannot see.
    """
    for j in range(st.tail, st.head, -1):  # Fisher-Yates over wall[head..tail]
        rng, r = splitmix64(rng)
        k = st.head + np.int64(r % np.uint64(j - st.head + 1))
        st.wall[j], st.wall[k] = st.wall[k], st.wall[j]
    return rng


@njit
def determinize_at(states, i: int, me: int, rng: np.uint64) -> np.uint64:
    """``determinize`` on ``states[i]``."""
    return determinize(states[i], me, rng)


@njit
def holding_log_ratios(st, me: int, bel, l1, l0) -> None:
    """``l1[s, t]`` = log(p / q) and ``l0[s, t]`` = log((1 - p) / (1 - q)) for every active opponent.

    ``p`` = ``bel[s, t]`` (clipped), ``q`` = the probability that a uniform deal
    of the unseen tiles gives ``s`` at least one copy of ``t``: ``s`` holds
    ``n`` of the ``N`` unseen tiles, ``c`` of them copies of ``t``, so
    ``q = 1 - C(N - c, n) / C(N, n)``. Tiles with no unseen copy are 0 (a factor
    every deal shares).
    """
    counts = np.zeros(27, dtype=np.int64)
    total = _unseen(st, me, counts)
    l1[:, :] = 0.0
    l0[:, :] = 0.0
    for s in range(4):
        if s == me or st.won[s] != 0:
            continue
        n = 0
        for t in range(27):
            n += st.hands[s, t]
        for t in range(27):
            c = counts[t]
            if c == 0 or n == 0:
                continue
            none = 1.0
            for i in range(n):
                if total - c - i <= 0:
                    none = 0.0
                    break
                none *= (total - c - i) / (total - i)
            q = min(max(1.0 - none, 1e-12), 1.0 - 1e-12)
            p = min(max(bel[s, t], P_CLIP), 1.0 - P_CLIP)
            l1[s, t] = math.log(p / q)
            l0[s, t] = math.log((1.0 - p) / (1.0 - q))


@njit
def belief_resample(st, me: int, rng: np.uint64, draws: int, bel, rules, dist) -> np.uint64:
    """``draws`` uniform deals, one kept with probability proportional to its belief likelihood ratio.

    See the module docstring. The choice is a Gumbel-max over the log weights
    (with the rng), and the kept deal is dealt again from its own rng, so
    nothing but the rngs is stored.
    """
    l1 = np.zeros((4, 27), dtype=np.float64)
    l0 = np.zeros((4, 27), dtype=np.float64)
    holding_log_ratios(st, me, bel, l1, l0)
    hands = st.hands.copy()
    wall = st.wall.copy()
    starts = np.zeros(draws, dtype=np.uint64)
    logw = np.zeros(draws, dtype=np.float64)
    tenpai = np.zeros((draws, 4), dtype=np.bool_)
    for k in range(draws):
        st.hands[:, :] = hands
        st.wall[:] = wall
        starts[k] = rng
        rng = determinize(st, me, rng)
        for s in range(4):
            if s == me or st.won[s] != 0:
                continue
            for t in range(27):
                logw[k] += l1[s, t] if st.hands[s, t] > 0 else l0[s, t]
            tenpai[k, s] = shanten(st.hands[s], void_of(st, s, rules), dist) <= 0
    for s in range(4):
        if s == me or st.won[s] != 0:
            continue
        n_ten = 0
        for k in range(draws):
            n_ten += tenpai[k, s]
        q = (n_ten + 0.5) / (draws + 1.0)
        p = min(max(bel[s, 27], P_CLIP), 1.0 - P_CLIP)
        for k in range(draws):
            logw[k] += math.log(p / q) if tenpai[k, s] else math.log((1.0 - p) / (1.0 - q))
    best, best_key = 0, -np.inf
    for k in range(draws):
        rng, r = splitmix64(rng)
        u = (np.float64(r >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)
        key = logw[k] - math.log(-math.log(u))
        if key > best_key:
            best, best_key = k, key
    st.hands[:, :] = hands
    st.wall[:] = wall
    determinize(st, me, starts[best])
    return rng


@njit
def determinize_best(st, me: int, rng: np.uint64, draws: int, bel, rules, dist) -> np.uint64:
    """One determinization from ``draws`` draws: ``belief_resample`` with beliefs, else ``closest_to_ready``."""
    if bel.shape[0] == 0 or draws <= 1:
        return closest_to_ready(st, me, rng, draws, rules, dist)
    return belief_resample(st, me, rng, draws, bel, rules, dist)
