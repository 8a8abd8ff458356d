"""A network seat's decisions in a rollout at a fraction of the cost: the first layer kept up to date.

A rollout asks the same seats of one hand for a decision again and again,
and between two decisions of a seat its observation changes in a few dozen
of its 2,241 entries (its hand, the discards since, the wall count) out of
the 150 or so that are set. The first layer of an MLP over a binary
observation is the sum of the weight rows of the set entries, so a cache
keeps, per seat, the last observation that seat saw and that sum, and the
next decision adds the rows of the entries that were set and subtracts
those that were cleared (the accumulator of efficiently updatable networks
in board-game engines). The heuristic's choice and the aux features share
one pass over the hand (``features.decide_aux``). The answer is
``numba_policy.net_action``'s up to float32 rounding (sums in another
order): ``tests/test_net_cache.py`` checks the actions against PyTorch.

A cache belongs to one thread and one network; ``forget`` empties it (every
rollout starts from an empty cache, so its answers depend on nothing played
before it).
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.nn.features import AUX_SIZE
from sichuan_env.agents.nn.mlp_kernels import OBS_ROWS, _greedy, _head, _prior_and_aux

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask

OBS_ENTRIES = OBS_ROWS * 27
"""Entries of the observation the first layer reads (2,241)."""
PAD_ROWS = 88
"""Rows of the cache's observation buffers: 88 x 27 bytes is a whole number of 8-byte words."""


@njit
def new_cache(weights: tuple) -> tuple:
    """An empty cache for ``cached_action`` with ``weights`` (``numba_policy.export``).

    ``(obs uint8[88, 27], seen uint8[4, 88, 27], acc float32[4, H], valid bool[4],
    mask int8[88], aux float32[AUX_SIZE], h0, h1 float32[H], logits float32[88])``.
    """
    h = weights[0].shape[1]
    return (np.zeros((PAD_ROWS, 27), np.uint8), np.zeros((4, PAD_ROWS, 27), np.uint8),
            np.zeros((4, h), np.float32), np.zeros(4, np.bool_), np.zeros(88, np.int8),
            np.zeros(AUX_SIZE, np.float32), np.zeros(h, np.float32), np.zeros(h, np.float32),
            np.zeros(88, np.float32))  # fmt: skip


@njit
def forget(cache) -> None:
    """Empty ``cache``: the next decision of each seat sums its first layer in full."""
    cache[3][:] = False


@njit(fastmath=True)
def _first_sum(cur, seen, acc, first, valid: bool) -> int:
    """``acc`` := the sum of ``first``'s rows over ``cur``'s set entries, from ``seen``'s; returns rows touched.

    ``cur``/``seen``: ``uint8[88, 27]`` observations (rows past ``OBS_ROWS``
    zero); ``acc`` holds ``seen``'s sum when ``valid``. ``seen`` := ``cur``.
    """
    n_hidden = first.shape[1]
    c = cur.reshape(PAD_ROWS * 27)
    s = seen.reshape(PAD_ROWS * 27)
    touched = 0
    if not valid:
        acc[:] = 0.0
        for j in range(OBS_ENTRIES):
            if c[j]:
                row = first[j]
                for i in range(n_hidden):
                    acc[i] += row[i]
                touched += 1
    else:
        cw = c.view(np.uint64)
        sw = s.view(np.uint64)
        for w in range(cw.shape[0]):
            if cw[w] == sw[w]:
                continue
            for j in range(8 * w, min(8 * w + 8, OBS_ENTRIES)):
                now = c[j] != 0
                if now == (s[j] != 0):
                    continue
                row = first[j]
                if now:
                    for i in range(n_hidden):
                        acc[i] += row[i]
                else:
                    for i in range(n_hidden):
                        acc[i] -= row[i]
                touched += 1
    s[:] = c
    return touched


@njit
def cached_action(st, weights, rules, flags, dist, cache) -> int:
    """The network's greedy action for the seat to act in ``st`` (-1: no legal action), using ``cache``.

    ``net_action``'s answer (its logits up to rounding), its first layer
    updated from the seat's last observation in ``cache`` (``new_cache``).
    """
    obs, seen, acc, valid, mask, aux, h0, h1, logits = cache
    me = st.to_act
    legal_mask(st, rules, flags, mask)
    encode_v1(st, me, False, rules, obs)
    prior = _prior_and_aux(weights[7], obs, mask, dist, aux)
    _first_sum(obs, seen[me], acc[me], weights[0], valid[me])
    valid[me] = True
    h0[:] = acc[me]
    _head(h0, aux, weights, mask, h1, logits)
    return _greedy(weights, mask, prior, logits)
