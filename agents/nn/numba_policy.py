"""A policy network's greedy action inside numba kernels: rollouts played by the network.

A rollout search whose rollouts play a network needs one forward pass per
rollout decision; from numba, one call into PyTorch per decision would cost
far more than the decision itself. ``export`` copies an MLP ``PolicyNet``'s
weights into arrays and ``net_action`` computes its greedy action for the
seat to act of an engine state, all in numba (the kernels are
``sichuan_env.agents.nn.mlp_kernels``, which imports no torch, and
``sichuan_env.agents.nn.net_cache`` for rollouts).
``tests/test_numba_policy.py`` checks the logits and the actions against
PyTorch.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.nn.mlp_kernels import (
    OBS_ROWS,
    net_action,
    net_logits,
    no_weights,
    scratch,
)
from sichuan_env.agents.nn.policy import PolicyNet

__all__ = ["OBS_ROWS", "export", "net_action", "net_logits", "no_weights", "scratch"]


def export(net: PolicyNet) -> tuple:
    """``(first float32[in, H], first_bias, hidden float32[L-1, H, H], hidden_bias, policy float32[88, H], policy_bias, gain float64[1], flags int64[2])``.

    Copies: the network stays where it is (a GPU network is read back, not moved).
    ``flags``: (reads the aux features, adds the heuristic's prior).

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
        first = linears[0].weight.detach().float().cpu().T.contiguous().numpy()
        hid = [m.weight.detach().float().cpu().numpy() for m in linears[1:]]
        hb = [m.bias.detach().float().cpu().numpy() for m in linears[1:]]
        h = first.shape[1]
        hidden = np.ascontiguousarray(np.stack(hid) if hid else np.zeros((0, h, h), np.float32))
        hidden_b = np.ascontiguousarray(np.stack(hb) if hb else np.zeros((0, h), np.float32))
        gain = float(net.prior_gain.detach()) if net.prior_gain is not None else 0.0
        return (
            np.ascontiguousarray(first), linears[0].bias.detach().float().cpu().numpy().copy(), hidden,
            hidden_b, net.policy.weight.detach().float().cpu().contiguous().numpy().copy(),
            net.policy.bias.detach().float().cpu().numpy().copy(), np.array([gain]),
            np.array([1 if c.aux else 0, 1 if c.prior else 0], np.int64),
        )  # fmt: skip
