"""The policy network of the learning agents: masked logits over the 88 actions and a value.

``PolicyNet`` reads observation planes (``uint8[B, rows, 27]``, only the
``public_rows`` of its version, so public and oracle views both work), runs
them through an MLP trunk and returns the 88 action logits and a value. With
``oracle_critic=True`` it also holds a centralised critic that reads the
oracle view (the hidden hands and the wall order); that critic is used in
training only, the acting policy never reads hidden information.

Why an MLP: on this 2-core CPU an MLP trains faster per sample than a conv1d
trunk over the 27 tile columns (measured: 2.8k vs 1.2k samples/s for a 1.2M
MLP and a 64-channel conv trunk, on a CPU shared with other jobs), and the
shipped width (3 x 256, about 0.7M parameters) is what a two-hour CPU budget
can train; ``python -m benchmarks.train`` measures the shipped one.

``masked_logits`` sets illegal actions to ``-inf`` (an all-zero mask row is
a ``ValueError``: there would be nothing to choose).
"""

from __future__ import annotations

import math

# numba's OpenMP threads spin after each parallel region and starve torch's (measured: 10x
# slower training); passive waiting must be set before either library loads OpenMP.
from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from sichuan_env.agents.nn.features import AUX_SIZE, aux_features, heuristic_choices
from torch import nn

from sichuan_env.encoding import observation as O
from sichuan_env.engine.actions import ACTION_SPACE

__all__ = [
    "ARCHS", "AUX_SIZE", "PolicyConfig", "PolicyNet", "aux_features", "count_parameters",
    "heuristic_choices", "masked_logits",
]  # fmt: skip

ARCHS = ("mlp", "conv")
"""Trunk kinds: ``mlp`` (the shipped one) and ``conv`` (conv1d over the 27 tile columns)."""


@dataclass(frozen=True)
class PolicyConfig:
    """The architecture of a ``PolicyNet`` (stored in every checkpoint's JSON).

    Attributes:
        obs_version: the observation version the policy reads.
        arch: ``"mlp"`` or ``"conv"``.
        hidden: trunk width (MLP units, or conv channels).
        layers: trunk layers.
        oracle_critic: add a critic over the oracle view (training only).
        critic_hidden: width of the oracle critic's two hidden layers.
        aux: also read ``aux_features`` (shanten / ukeire analysis; observation v1 only).
        prior: add ``prior_gain`` (a learned scalar) to the logit of the action
            ``HeuristicAgent`` would take (``heuristic_choices``; observation v1
            only): the network learns where to leave the heuristic, not how to
            rebuild it. Needs the mask (or the precomputed choice) to act.
    """

    obs_version: int = 1
    arch: str = "mlp"
    hidden: int = 256
    layers: int = 3
    oracle_critic: bool = False
    critic_hidden: int = 256
    aux: bool = False
    prior: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type in ("int", int) and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"PolicyConfig.{f.name} must be an integer, got {v!r}")
        if self.arch not in ARCHS:
            raise ValueError(f"PolicyConfig.arch must be one of {ARCHS}, got {self.arch!r}")
        for name in ("oracle_critic", "aux", "prior"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"PolicyConfig.{name} must be a bool, got {getattr(self, name)!r}")
        for name, lo, hi in (("hidden", 8, 4096), ("layers", 1, 16), ("critic_hidden", 8, 4096)):
            if not lo <= getattr(self, name) <= hi:
                raise ValueError(
                    f"PolicyConfig.{name} must be in [{lo}, {hi}], got {getattr(self, name)}"
                )
        if self.obs_version not in O.versions():
            raise ValueError(
                f"PolicyConfig.obs_version {self.obs_version} is not registered; known: {O.versions()}"
            )
        if self.prior and self.obs_version != 1:
            raise ValueError(
                "PolicyConfig.prior reads the heuristic's choice: obs_version must be 1"
            )

    @property
    def public_rows(self) -> int:
        """Rows of the public view the policy reads."""
        return O.obs_rows(self.obs_version, False)

    @property
    def oracle_rows(self) -> int:
        """Rows of the oracle view the oracle critic reads."""
        return O.obs_rows(self.obs_version, True)

    def to_dict(self) -> dict[str, Any]:
        """Every field by name (JSON-serialisable)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> PolicyConfig:
        """Build from a checkpoint's ``arch`` object.

        Raises:
            ValueError: not a dict, unknown or missing fields, bad values.
        """
        if not isinstance(data, dict):
            raise ValueError(f"the architecture must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in set(data) - known)
        if unknown:
            raise ValueError(f"unknown architecture fields {unknown}; known: {sorted(known)}")
        missing = sorted(known - set(data) - {"aux", "prior"})  # later fields: default False
        if missing:
            raise ValueError(f"architecture fields missing: {missing}")
        return cls(**data)


class _ConvTrunk(nn.Module):
    """conv1d over the 27 tile columns (rows are channels), then a linear layer."""

    def __init__(self, rows: int, hidden: int, layers: int) -> None:
        super().__init__()
        convs: list[nn.Module] = [nn.Conv1d(rows, hidden, 3, padding=1), nn.ReLU()]
        for _ in range(layers - 1):
            convs += [nn.Conv1d(hidden, hidden, 3, padding=1), nn.ReLU()]
        self.convs = nn.Sequential(*convs)
        self.out = nn.Sequential(nn.Linear(hidden * 27, hidden), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.convs(x).flatten(1))


def _mlp(inputs: int, hidden: int, layers: int) -> nn.Sequential:
    mods: list[nn.Module] = [nn.Linear(inputs, hidden), nn.ReLU()]
    for _ in range(layers - 1):
        mods += [nn.Linear(hidden, hidden), nn.ReLU()]
    return nn.Sequential(*mods)


def _init(module: nn.Module) -> None:
    if isinstance(module, (nn.Linear, nn.Conv1d)):
        nn.init.orthogonal_(module.weight, math.sqrt(2))
        if module.bias is not None:  # every layer here has one
            nn.init.zeros_(module.bias)


class PolicyNet(nn.Module):
    """Masked-policy + value network over observation planes.

    Args:
        config: the architecture.
    """

    def __init__(self, config: PolicyConfig | None = None) -> None:
        super().__init__()
        self.config = config or PolicyConfig()
        c = self.config
        rows = c.public_rows
        if c.arch == "mlp":
            self.trunk: nn.Module = _mlp(rows * 27 + (AUX_SIZE if c.aux else 0), c.hidden, c.layers)
        else:
            self.trunk = _ConvTrunk(rows, c.hidden, c.layers)
        self.aux_in = nn.Linear(AUX_SIZE, c.hidden) if c.aux and c.arch == "conv" else None
        self.policy = nn.Linear(c.hidden, ACTION_SPACE)
        self.value = nn.Linear(c.hidden, 1)
        self.prior_gain = nn.Parameter(torch.zeros(())) if c.prior else None
        self.critic: nn.Module | None = None
        if c.oracle_critic:
            self.critic = nn.Sequential(
                _mlp(c.oracle_rows * 27, c.critic_hidden, 2), nn.Linear(c.critic_hidden, 1)
            )
        self.apply(_init)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.orthogonal_(self.value.weight, 1.0)

    def aux_of(self, obs: torch.Tensor) -> torch.Tensor | None:
        """The ``aux_features`` of ``obs`` when the architecture reads them, else None."""
        if not self.config.aux:
            return None
        o = obs[:, : self.config.public_rows].cpu().numpy()  # numba kernels: on the CPU
        return torch.from_numpy(aux_features(o)).to(obs.device)

    def _features(self, obs: torch.Tensor, aux: torch.Tensor | None) -> torch.Tensor:
        x = obs[:, : self.config.public_rows].float()
        if self.config.aux and aux is None:
            aux = self.aux_of(obs)
        if self.config.arch == "mlp":
            x = x.flatten(1)
            if aux is not None:
                x = torch.cat([x, aux], dim=1)
            return self.trunk(x)
        h = self.trunk(x)
        return h + self.aux_in(aux) if self.aux_in is not None and aux is not None else h

    def prior_of(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        """The heuristic's action per row (``int64[B]``) when the network reads it, else None."""
        if not self.config.prior:
            return None
        o = obs[:, : self.config.public_rows].cpu().numpy()  # numba kernels: on the CPU
        return torch.from_numpy(heuristic_choices(o, mask.cpu().numpy())).to(obs.device)

    def _logits(
        self,
        h: torch.Tensor,
        obs: torch.Tensor,
        mask: torch.Tensor | None,
        prior: torch.Tensor | None,
    ) -> torch.Tensor:
        logits = self.policy(h)
        if self.prior_gain is None:
            return logits
        if prior is None:
            if mask is None:
                raise ValueError(
                    "this network adds the heuristic's choice to its logits: pass mask"
                )
            prior = self.prior_of(obs, mask)
            if prior is None:
                raise RuntimeError("the network has a prior gain but config.prior is off")
        hot = torch.zeros_like(logits)
        ok = prior >= 0
        hot[ok.nonzero().squeeze(1), prior[ok]] = 1.0
        return logits + self.prior_gain * hot

    def forward(
        self,
        obs: torch.Tensor,
        aux: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        prior: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits float[B, 88], value float[B])`` of public or oracle observations.

        ``aux``: precomputed ``aux_features`` (computed here when needed and not
        given). ``mask`` / ``prior``: a ``prior`` network needs the mask or the
        precomputed ``prior_of`` (``ValueError`` otherwise); others ignore them.
        """
        h = self._features(obs, aux)
        return self._logits(h, obs, mask, prior), self.value(h).squeeze(-1)

    def logits(
        self,
        obs: torch.Tensor,
        aux: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        prior: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Action logits only (no value): what acting needs (arguments as ``forward``)."""
        return self._logits(self._features(obs, aux), obs, mask, prior)

    def state_value(self, obs: torch.Tensor, aux: torch.Tensor | None = None) -> torch.Tensor:
        """The value head alone (``float[B]``): needs no mask."""
        return self.value(self._features(obs, aux)).squeeze(-1)

    def oracle_value(self, oracle_obs: torch.Tensor) -> torch.Tensor:
        """The centralised critic's value of oracle observations ``uint8[B, oracle_rows, 27]``.

        Raises:
            ValueError: the network has no oracle critic, or the rows are not the oracle view.
        """
        if self.critic is None:
            raise ValueError("this network has no oracle critic (PolicyConfig.oracle_critic=False)")
        if oracle_obs.shape[1:] != (self.config.oracle_rows, 27):
            raise ValueError(
                f"oracle_obs must have shape (B, {self.config.oracle_rows}, 27), "
                f"got {tuple(oracle_obs.shape)}"
            )
        return self.critic(oracle_obs.float().flatten(1)).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with illegal actions (``mask == 0``) set to ``-inf``.

    Raises:
        ValueError: shapes differ, or a mask row has no legal action.
    """
    if logits.shape != mask.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and mask {tuple(mask.shape)} differ")
    legal = mask != 0
    empty = ~legal.any(dim=-1)
    if bool(empty.any()):
        row = int(torch.nonzero(empty.reshape(-1))[0])
        raise ValueError(f"mask row {row} has no legal action (all zeros)")
    return logits.masked_fill(~legal, float("-inf"))


def count_parameters(net: nn.Module, *, acting_only: bool = True) -> int:
    """Parameters of ``net`` (without the oracle critic when ``acting_only``)."""
    return sum(
        p.numel()
        for name, p in net.named_parameters()
        if not (acting_only and name.startswith("critic."))
    )
