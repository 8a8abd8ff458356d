"""A policy network's greedy action inside numba kernels: rollouts played by the network.

A rollout search whose rollouts play a network needs one forward pass per
rollout decision; from numba, one call into PyTorch per decision would cost
far more than the decision itself. ``export`` copies an MLP ``PolicyNet``'s
weights into arrays and ``net_action`` computes its greedy action for the
seat to act of an engine state, all in numba: the v1 observation, the aux
features, the heuristic's choice for a prior network, then the MLP. A v1
observation is binary and sparse (a few hundred of its 2,241 entries are
1), so the first layer sums the weight rows of the entries that are set
instead of multiplying a dense matrix; only legal actions' logits are
computed. ``tests/test_numba_policy.py`` checks the logits and the actions
against PyTorch.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.nn.features import AUX_SIZE, _aux_one
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.rule_based.heuristic import decide

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask

OBS_ROWS = 83
"""Rows of the public v1 observation the network reads."""


def export(net: PolicyNet) -> tuple:
    """``(first float32[in, H], first_bias, hidden float32[L-1, H, H], hidden_bias, policy float32[88, H], policy_bias, gain float64[1], aux int64[1])``.

    Raises:
        ValueError: a network numba cannot play: not an MLP over observation v1's
            public rows (a conv trunk, another version).
    """
    c = net.config
    if c.arch != "mlp" or c.obs_version != 1:
        raise ValueError(
            f"only MLP networks over observation v1 can play in numba, got {c.arch} v{c.obs_version}"
        )
    linears = [m for m in net.trunk.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        first = linears[0].weight.detach().float().T.contiguous().numpy()
        hid = [m.weight.detach().float().numpy() for m in linears[1:]]
        hb = [m.bias.detach().float().numpy() for m in linears[1:]]
        h = first.shape[1]
        hidden = np.ascontiguousarray(np.stack(hid) if hid else np.zeros((0, h, h), np.float32))
        hidden_b = np.ascontiguousarray(np.stack(hb) if hb else np.zeros((0, h), np.float32))
        gain = float(net.prior_gain.detach()) if net.prior_gain is not None else 0.0
        return (
            np.ascontiguousarray(first), linears[0].bias.detach().float().numpy().copy(), hidden,
            hidden_b, net.policy.weight.detach().float().contiguous().numpy().copy(),
            net.policy.bias.detach().float().numpy().copy(), np.array([gain]),
            np.array([1 if c.aux else 0, 1 if c.prior else 0], np.int64),
        )  # fmt: skip


@njit(fastmath=True)
def net_logits(obs, aux, weights, mask, h0, h1, out) -> None:
    """The legal actions' logits of the network (``out[a]``; -inf for illegal ``a``), without the prior.

    Compiled with ``fastmath``: the dot products vectorize (4.5x faster on a
    256-wide MLP), the sums' order differs from PyTorch's by rounding only.
    """
    first, first_b, hidden, hidden_b, pol, pol_b, _, flags = weights
    n_hidden = first.shape[1]
    h0[:] = first_b
    j = 0
    for r in range(OBS_ROWS):
        for t in range(27):
            if obs[r, t]:
                row = first[j]
                for i in range(n_hidden):
                    h0[i] += row[i]
            j += 1
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
def net_action(st, weights, rules, flags, obs, mask, dist, aux, h0, h1, logits) -> int:
    """The network's greedy action for the seat to act in ``st`` (-1: no legal action).

    Its logits plus ``prior_gain`` on the heuristic's action for a prior
    network: the rule ``TorchAgent`` acts by. The other arguments are scratch
    buffers: ``obs`` uint8[83, 27], ``mask`` int8[88], ``aux`` float32[AUX_SIZE],
    ``h0``/``h1`` float32[H], ``logits`` float32[88].
    """
    legal_mask(st, rules, flags, mask)
    encode_v1(st, st.to_act, False, rules, obs)
    wflags = weights[7]
    prior = decide(obs, mask, dist) if wflags[1] else -1
    if wflags[0]:
        aux[:] = 0.0
        _aux_one(obs, dist, aux)
    net_logits(obs, aux, weights, mask, h0, h1, logits)
    if prior >= 0:
        logits[prior] += weights[6][0]
    best, best_v = -1, -np.inf
    for a in range(mask.shape[0]):
        if mask[a] and (best < 0 or logits[a] > best_v):
            best, best_v = a, logits[a]
    return best


def scratch(weights: tuple) -> tuple:
    """Fresh buffers for ``net_action``: ``(obs, mask, aux, h0, h1, logits)``."""
    h = weights[0].shape[1]
    return (np.zeros((OBS_ROWS, 27), np.uint8), np.zeros(88, np.int8), np.zeros(AUX_SIZE, np.float32),
            np.zeros(h, np.float32), np.zeros(h, np.float32), np.zeros(88, np.float32))  # fmt: skip
