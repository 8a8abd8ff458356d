"""Several policy networks as one: the greedy action of their mean logits.

The networks of issue #40's rounds regress rollout labels whose noise (2.5-2.8
points² a row) is far above the gains they look for. Fits from other labels, inits
and rounds make partly independent errors, and the mean of their logits (each a
prior plus a fitted gain per action) averages them, as a bagged regression does.
``ensemble6`` averages the six networks confirmed or screened above ``distill``;
under ``distill-guard``'s deal-in guard it is ``ensemble6-guard`` (``strongest-net``),
confirmed +0.020 ± 0.009 points a hand above ``exit-valueleaf-guard`` on 10,000
fresh walls (``research/ensemble/README.md``)::

    from sichuan_env.agents.nn.ensemble import EnsembleAgent
    from sichuan_env.agents.nn.torch_agent import TorchAgent

from sichuan_env.tiles import InputTypeError, echo

    agent = EnsembleAgent([TorchAgent.load("distill"), TorchAgent.load("run/best.pt")])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.base import BaseAgent
from sichuan_env.agents.device import autocast
from sichuan_env.agents.nn.policy import masked_logits
from sichuan_env.agents.nn.torch_agent import TorchAgent

from sichuan_env.tiles import InputTypeError, echo

ENSEMBLE6 = (
    "exit_valueleaf",
    "oracle_r1",
    "oracle_r2_agg",
    "oracle_r2",
    "oracle_r3",
    "oracle_after_win",
)
"""``ensemble6``'s shipped checkpoints: ``exit-valueleaf`` and the five networks fitted to
true-state rollout labels (``research/oracle_labels``: round 1, round 2 on both rounds'
rows, rounds 2 and 3 on their own rows, the after-win round)."""


class EnsembleAgent(BaseAgent):
    """The greedy action of the mean logits of several ``TorchAgent`` networks.

    Args:
        members: at least two ``TorchAgent``s reading the same observation version
            (their own ``greedy`` settings are not used: the ensemble is greedy).
        name: the agent's name in tables.

    Raises:
        ValueError: fewer than two members, or members reading different observation
            versions or batching differently (``batch_size``).
        InputTypeError: ``members`` not a sequence, or a member that is not a
            ``TorchAgent`` (a ``TypeError`` and a ``ValueError``).
    """

    def __init__(self, members: Sequence[TorchAgent], name: str = "ensemble") -> None:
        if isinstance(members, (str, bytes)) or not isinstance(members, Sequence):
            raise InputTypeError(f"members must be a sequence of TorchAgents, got {echo(members)}")
        members = list(members)
        for m in members:
            if not isinstance(m, TorchAgent):
                raise InputTypeError(f"members must be TorchAgents, got {type(m).__name__}")
        if len({m.batch_size for m in members}) > 1:
            raise ValueError("members must share one batch_size (their logits are batched alike)")
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least two networks, got {len(members)}")
        versions = {m.obs_version for m in members}
        if len(versions) != 1:
            raise ValueError(f"members read different observation versions: {sorted(versions)}")
        self.members = members
        self.obs_version = versions.pop()
        self.name = name

    def to(self, device: str | torch.device) -> EnsembleAgent:
        """Run every member on ``device`` (``sichuan_env.agents.device``); returns self.

        Raises:
            DeviceError: a device this machine does not have (a ``ValueError``).
        """
        for m in self.members:
            m.to(device)
        return self

    @torch.no_grad()
    def mean_logits(self, obs: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        """The members' mean logits, ``-inf`` where ``masks`` is 0 (``float32[N, 88]``, CPU).

        ``obs`` and ``masks`` are taken as checked (``act_batch`` checks them). Each
        member's logits are what its own ``TorchAgent`` computes, in the same batches;
        the inputs every member reads beside the observation (``aux_features``, the
        heuristic's choice) are computed once per batch instead of once per member.
        """
        legal = torch.from_numpy(masks) != 0
        total = torch.zeros(masks.shape, dtype=torch.float32)
        step = self.members[0].batch_size
        aux_net = next((m.net for m in self.members if m.net.config.aux), None)
        prior_net = next((m.net for m in self.members if m.net.config.prior), None)
        for lo in range(0, len(obs), step):
            o = torch.from_numpy(obs[lo : lo + step])
            m = torch.from_numpy(masks[lo : lo + step])
            inputs: dict[str, tuple[Any, ...]] = {}  # per device: obs, mask, aux, prior
            for member in self.members:
                net, dev = member.net, member.device
                if str(dev) not in inputs:
                    od, md = o.to(dev), m.to(dev)
                    aux = aux_net.aux_of(od) if aux_net is not None else None
                    prior = prior_net.prior_of(od, md) if prior_net is not None else None
                    inputs[str(dev)] = (od, md, aux, prior)
                od, md, aux, prior = inputs[str(dev)]
                with autocast(dev, member._cast):
                    lg = net.logits(
                        od,
                        aux=aux if net.config.aux else None,
                        mask=md,
                        prior=prior if net.config.prior else None,
                    )
                lg = masked_logits(lg.float(), md).cpu()
                total[lo : lo + step] += lg.masked_fill(~legal[lo : lo + step], 0.0)
        return masked_logits(total / len(self.members), legal.to(torch.int8))

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.mean_logits(obs, masks).argmax(dim=1).numpy().astype(np.int64)


def load_ensemble(
    names: Sequence[str | os.PathLike[str]], seed: int | None = None, name: str = "ensemble"
) -> EnsembleAgent:
    """An ensemble of checkpoints, each a shipped name or a ``.pt`` path (``TorchAgent.load``).

    Raises:
        ValueError: an unknown name, a missing or damaged checkpoint, fewer than two, or
            members reading different observation versions.
        InputTypeError: ``names`` a single string or not a sequence.
    """
    if isinstance(names, (str, bytes, os.PathLike)) or not isinstance(names, Sequence):
        raise InputTypeError(f"names must be a sequence of checkpoints, got {echo(names)}")
    return EnsembleAgent([TorchAgent.load(n, seed) for n in names], name=name)


def load_ensemble6(seed: int | None = None) -> EnsembleAgent:
    """The registered ``ensemble6``: the mean logits of the six ``ENSEMBLE6`` networks.

    Raises:
        ValueError: a shipped checkpoint missing or damaged.
    """
    return load_ensemble(ENSEMBLE6, seed, name="ensemble6")
