"""A policy network's greedy action inside numba kernels, without torch: the MLP's forward pass.

``numba_policy.export`` turns an MLP ``PolicyNet`` into the weight arrays
these kernels read (``(first float32[in, H], first_bias, hidden
float32[L-1, H, H], hidden_bias, policy float32[88, H], policy_bias, gain
float64[1], flags int64[2])``); ``net_action`` computes the network's greedy
action for the seat to act of an engine state: the v1 observation, the aux
features and the heuristic's choice for a prior network (one pass,
``features.decide_aux``), then the MLP. A v1 observation is binary and
sparse (a few hundred of its 2,241 entries are 1), so the first layer sums
the weight rows of the entries that are set instead of multiplying a dense
matrix; only legal actions' logits are computed. This module imports no
torch, so the search agents that play rollouts by a network need none to
load. ``tests/test_numba_policy.py`` checks the logits and the actions
against PyTorch.
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.nn.features import AUX_SIZE, _aux_one, decide_aux
from sichuan_env.agents.rule_based.heuristic import decide

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask

OBS_ROWS = 83
"""Rows of the public v1 observation the network reads."""


def no_weights() -> tuple:
    """Weights of ``export``'s types for kernels whose network seats are none (never read)."""
    z = np.zeros((1, 1), np.float32)
    return (z, np.zeros(1, np.float32), np.zeros((0, 1, 1), np.float32), np.zeros((0, 1), np.float32),
            np.zeros((88, 1), np.float32), np.zeros(88, np.float32), np.zeros(1), np.zeros(2, np.int64))  # fmt: skip


@njit(fastmath=True)
def net_logits(obs, aux, weights, mask, h0, h1, out) -> None:
    """The legal actions' logits of the network (``out[a]``; -inf for illegal ``a``), without the prior.

    Compiled with ``fastmath``: the dot products vectorize (4.5x faster on a
    256-wide MLP), the sums' order differs from PyTorch's by rounding only.
    """
    first = weights[0]
    n_hidden = first.shape[1]
    h0[:] = 0.0
    j = 0
    for r in range(OBS_ROWS):
        for t in range(27):
            if obs[r, t]:
                row = first[j]
                for i in range(n_hidden):
                    h0[i] += row[i]
            j += 1
    _head(h0, aux, weights, mask, h1, out)


@njit(fastmath=True)
def _head(h0, aux, weights, mask, h1, out) -> None:
    """From the first layer's sum over the observation's set entries (``h0``) to the legal logits."""
    first, first_b, hidden, hidden_b, pol, pol_b, _, flags = weights
    n_hidden = first.shape[1]
    j = OBS_ROWS * 27
    for i in range(n_hidden):
        h0[i] += first_b[i]
    if flags[0]:
        for k in range(aux.shape[0]):
            if aux[k] != 0.0:
                row = first[j + k]
                for i in range(n_hidden):
                    h0[i] += aux[k] * row[i]
    for i in range(n_hidden):
        h0[i] = max(h0[i], np.float32(0.0))
    for layer in range(hidden.shape[0]):  # loops, not np.dot: numba's dot needs SciPy's BLAS
        w = hidden[layer]
        for i in range(n_hidden):
            s = hidden_b[layer, i]
            for k in range(n_hidden):
                s += w[i, k] * h0[k]
            h1[i] = max(s, np.float32(0.0))
        h0[:] = h1
    for a in range(mask.shape[0]):
        if mask[a]:
            s = pol_b[a]
            for k in range(n_hidden):
                s += pol[a, k] * h0[k]
            out[a] = s
        else:
            out[a] = -np.inf


@njit
def _greedy(weights, mask, prior: int, logits) -> int:
    """The acting rule: the best legal logit, ``prior_gain`` added to the heuristic's action."""
    if prior >= 0:
        logits[prior] += weights[6][0]
    best, best_v = -1, -np.inf
    for a in range(mask.shape[0]):
        if mask[a] and (best < 0 or logits[a] > best_v):
            best, best_v = a, logits[a]
    return best


@njit
def net_action(st, weights, rules, flags, obs, mask, dist, aux, h0, h1, logits) -> int:
    """The network's greedy action for the seat to act in ``st`` (-1: no legal action).

    Its logits plus ``prior_gain`` on the heuristic's action for a prior
    network: the rule ``TorchAgent`` acts by. The other arguments are scratch
    buffers: ``obs`` uint8[83, 27], ``mask`` int8[88], ``aux`` float32[AUX_SIZE],
    ``h0``/``h1`` float32[H], ``logits`` float32[88].
    """
    legal_mask(st, rules, flags, mask)
    encode_v1(st, st.to_act, False, rules, obs)
    prior = _prior_and_aux(weights[7], obs, mask, dist, aux)
    net_logits(obs, aux, weights, mask, h0, h1, logits)
    return _greedy(weights, mask, prior, logits)


@njit
def _prior_and_aux(wflags, obs, mask, dist, aux) -> int:
    """The heuristic's action for a prior network (else -1) and, for an aux network, ``aux``'s features."""
    if wflags[0]:
        aux[:] = 0.0
        if wflags[1]:
            return decide_aux(obs, mask, dist, aux)
        _aux_one(obs, dist, aux)
    return decide(obs, mask, dist) if wflags[1] else -1


def scratch(weights: tuple) -> tuple:
    """Fresh buffers for ``net_action``: ``(obs, mask, aux, h0, h1, logits)``."""
    h = weights[0].shape[1]
    return (np.zeros((OBS_ROWS, 27), np.uint8), np.zeros(88, np.int8), np.zeros(AUX_SIZE, np.float32),
            np.zeros(h, np.float32), np.zeros(h, np.float32), np.zeros(88, np.float32))  # fmt: skip
