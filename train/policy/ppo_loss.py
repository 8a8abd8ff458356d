"""The PPO update (``ppo_update``) over the stored decisions of one rollout.

Clipped policy loss, value loss, entropy bonus and the KL penalty toward a
reference policy.

``sichuan_env.train.policy.ppo`` drives it (and re-exports it); the buffer and the
advantages are ``sichuan_env.train.policy.rollout``'s.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from sichuan_env.agents.nn.policy import PolicyNet, masked_logits
from sichuan_env.train.policy.rollout import Buffer

__all__ = ["ppo_update"]


def ppo_update(
    net: PolicyNet,
    opt: torch.optim.Optimizer,
    buf: Buffer,
    args: argparse.Namespace,
    ref: PolicyNet | None,
    policy_on: bool,
    rng: np.random.Generator,
) -> dict[str, float]:
    """PPO epochs over the buffer; returns the mean losses and diagnostics.

    The rollout moves to the network's device (``ref`` must be there too); the forward
    passes autocast to ``args.cast`` when set (``--amp``), else bfloat16 with ``args.bf16``.
    """
    adv_np, ret_np = buf.advantages(args.gamma, args.lam)
    n = buf.n
    dev = next(net.parameters()).device

    def t(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(x).to(dev)

    obs = t(buf.obs[:n])
    oracle = t(buf.oracle[:n]) if buf.oracle is not None else None
    aux = t(buf.aux[:n]) if buf.aux is not None else net.aux_of(obs)
    masks = t(buf.masks[:n])
    # the heuristic's choices, once per rollout: stored by the collector for a prior learner,
    # computed here when only the KL reference reads them (networks without a prior ignore them)
    prior = None
    if net.config.prior:
        prior = t(buf.prior[:n])
    elif ref is not None and ref.config.prior:
        prior = ref.prior_of(obs, masks)
    dtype = args.cast if hasattr(args, "cast") else (torch.bfloat16 if args.bf16 else None)
    cast = torch.autocast(dev.type, dtype or torch.bfloat16, enabled=dtype is not None)
    actions = t(buf.actions[:n])
    old_logp = t(buf.logp[:n])
    adv = t(adv_np)
    ret = t(ret_np)
    sums: dict[str, torch.Tensor] = {}  # on the device: one download after the epochs
    count = 0
    net.train()
    for _ in range(args.epochs):
        order = t(rng.permutation(n))
        for lo in range(0, n, args.minibatch):
            idx = order[lo : lo + args.minibatch]
            aux_b = None if aux is None else aux[idx]
            prior_b = None if prior is None else prior[idx]
            with cast:
                logits, value = net(obs[idx], aux_b, masks[idx], prior_b)
                if oracle is not None:
                    value = net.oracle_value(oracle[idx])
            logits, value = logits.float(), value.float()
            legal = masks[idx] != 0
            # stored decisions had a legal action (no check here: it would sync the device)
            logp_all = torch.log_softmax(logits.masked_fill(~legal, float("-inf")), dim=1)
            p_all = logp_all.exp()
            logp = logp_all.gather(1, actions[idx, None]).squeeze(1)
            # -inf at illegal actions: zero them before any product (0 * -inf is nan)
            logp_all = logp_all.masked_fill(~legal, 0.0)
            entropy = -(p_all * logp_all).sum(1).mean()
            ratio = (logp - old_logp[idx]).exp()
            a = adv[idx]
            a = (a - a.mean()) / (a.std() + 1e-8) if len(idx) > 1 else a
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
            v_loss = 0.5 * (value - ret[idx]).pow(2).mean()
            kl_ref = torch.zeros((), device=dev)
            if ref is not None:
                with torch.no_grad(), cast:
                    ref_aux = aux_b if ref.config.aux else None
                    ref_logits = ref.logits(obs[idx], ref_aux, masks[idx], prior_b)
                    ref_logits = masked_logits(ref_logits.float(), masks[idx])
                    ref_logp = torch.log_softmax(ref_logits, 1).masked_fill(~legal, 0.0)
                kl_ref = (p_all * (logp_all - ref_logp)).sum(1).mean()
            loss = args.vf_coef * v_loss
            if policy_on:
                loss = loss + pg - args.ent_coef * entropy + args.kl_coef * kl_ref
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            opt.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - (logp - old_logp[idx])).mean()
                clipfrac = ((ratio - 1).abs() > args.clip).float().mean()
            for key, val in (
                ("pg_loss", pg), ("v_loss", v_loss), ("entropy", entropy), ("kl_ref", kl_ref),
                ("approx_kl", approx_kl), ("clipfrac", clipfrac),
            ):  # fmt: skip
                total = sums.get(key)
                v64 = val.detach().double()
                sums[key] = v64 if total is None else total + v64
            count += 1
    out = {k: float(v) / max(count, 1) for k, v in sums.items()}
    out["adv_mean"] = float(adv_np.mean()) if n else 0.0
    out["return_mean"] = float(ret_np.mean()) if n else 0.0
    return out
