"""The network a PPO run starts from: a fresh one, or the ``--init`` checkpoint's, its logits scaled.

``initial_net`` builds it (a new critic's weights from ``--seed`` alone) and
``scale_logits`` sharpens a network fitted to gains in points for sampling.
``sichuan_env.train.policy.ppo`` re-exports both.
"""

from __future__ import annotations

import argparse
import math

import torch
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.common import seeded_build


def initial_net(args: argparse.Namespace) -> PolicyNet:
    """A fresh network, or the ``--init`` checkpoint's (with a fresh oracle critic if asked)."""
    if args.init is None:
        cfg = PolicyConfig(
            hidden=args.hidden, layers=args.layers, oracle_critic=args.oracle_critic, aux=args.aux,
            prior=args.prior,
        )  # fmt: skip
        return seeded_build(args.seed, lambda: PolicyNet(cfg))  # from --seed alone
    src, _ = load_network(args.init)
    prior = src.config.prior or args.prior
    cfg = PolicyConfig(**{**src.config.to_dict(), "oracle_critic": args.oracle_critic, "prior": prior})  # fmt: skip
    net = seeded_build(args.seed, lambda: PolicyNet(cfg))  # a new critic: from --seed alone
    state = {k: v for k, v in src.state_dict().items() if not k.startswith("critic.")}
    missing, _ = net.load_state_dict(state, strict=False)
    if any(not (k.startswith("critic.") or k == "prior_gain") for k in missing):
        raise ValueError(f"--init {args.init}: tensors missing {missing[:5]}")
    if args.prior_gain is not None:
        if net.prior_gain is None:
            raise ValueError("--prior-gain: the network has no prior (add --prior)")
        with torch.no_grad():
            net.prior_gain.fill_(args.prior_gain)
    if args.logit_scale is not None:
        scale_logits(net, args.logit_scale)
    return net.train()


def scale_logits(net: PolicyNet, k: float) -> None:
    """Multiply every logit of ``net`` by ``k`` > 0 (the policy layer and the prior gain), in place.

    The greedy action is unchanged; the softmax is sharper for ``k`` > 1. A network
    fitted to gains in points (``distill``, ``exit``) has logits in points, a spread
    far too flat to sample from at temperature 1.
    """
    if not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
        raise ValueError(f"the logit scale must be a finite number > 0, got {k!r}")
    with torch.no_grad():
        net.policy.weight.mul_(k)
        net.policy.bias.mul_(k)
        if net.prior_gain is not None:
            net.prior_gain.mul_(k)
