"""``TorchAgent``: a ``PolicyNet`` behind the Agent protocol, and its checkpoint files.

A checkpoint is two files side by side::

    run/best.pt     the network's state_dict (torch.save; loaded with weights_only=True)
    run/best.json   {"format", "arch", "obs_version", "rules", "method", "command",
                     "commit", "wall_clock_s", "created", "sha256", ...}

Nothing read from disk is trusted (``sichuan_env.agents.checkpoint``, shared with
the belief models): the JSON is bounded and checked key by key, the weights file
and the JSON must hash to the JSON's ``sha256``, the architecture's tensor shapes
are checked against the file's before anything is built, and the tensors must be
exactly the architecture's, dense CPU floats with the right shapes, all finite.
Anything else is a ``ValueError`` naming the problem. ``TorchAgent.load("ppo")`` loads a shipped
checkpoint (``agents/checkpoints/``), ``TorchAgent.load("run/best.pt")`` a
file; the registry resolves both (``make_agent("ppo")``, ``make_agent("x.pt")``).

Acting is greedy (the most probable legal action) unless ``greedy=False``,
which samples from the masked softmax with the agent's own seeded generator.
Inference runs in batches of ``batch_size`` rows without autograd, on the agent's
``device`` (``TorchAgent(net, device="cuda")``, ``make_agent(spec, device=...)``,
``agent.to(device)``; ``sichuan_env.agents.device``) with ``amp``'s autocast; the
logits come back to the CPU, where the actions are picked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.base import BaseAgent, check_masks, check_observations, check_seed
from sichuan_env.agents.device import amp_dtype, autocast, resolve_device
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet, masked_logits

FORMAT = "sichuan-torch-agent/1"
"""The ``format`` field of every checkpoint's JSON."""
REQUIRED = {
    "format": str,
    "arch": dict,
    "obs_version": int,
    "rules": dict,
    "method": str,
    "command": str,
    "commit": str,
    "wall_clock_s": (int, float),
    "created": str,
    "sha256": str,
}
"""Keys every checkpoint JSON holds, with their JSON types."""
KIND = checkpoint.Kind(FORMAT, REQUIRED, PolicyConfig.from_dict, PolicyNet)
"""Policy checkpoints, for ``sichuan_env.agents.checkpoint``."""

# kept for callers of the names this module used to define (the checks live in .checkpoint)
SHIPPED_DIR = checkpoint.SHIPPED_DIR
MAX_JSON_BYTES = checkpoint.MAX_JSON_BYTES
MAX_WEIGHTS_BYTES = checkpoint.MAX_WEIGHTS_BYTES
config_path = checkpoint.config_path
_sha256 = checkpoint.file_sha256


def save_checkpoint(path: str | os.PathLike, net: PolicyNet, meta: dict[str, Any]) -> Path:
    """Write ``path`` (the state_dict) and its JSON config; returns the ``.pt`` path.

    Args:
        path: where the weights go (a ``.pt`` name); the JSON takes the same stem.
        net: the network.
        meta: ``rules`` (a dict), ``method``, ``command``, ``commit``,
            ``wall_clock_s`` and any extra JSON-serialisable fields (metrics).

    Raises:
        ValueError: a path that does not end in ``.pt``, a required field missing, or
            non-finite weights (nothing is written: ``sichuan_env.agents.checkpoint.save``).
    """
    return checkpoint.save(path, KIND, net, meta)


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """The validated JSON config of checkpoint ``path`` (the ``.pt`` or the ``.json``).

    Raises:
        ValueError: missing, oversized or too deeply nested file, not JSON, a missing or
            mistyped key, an unknown format or an invalid architecture.
    """
    return checkpoint.read_config(path, KIND)


def load_network(path: str | os.PathLike) -> tuple[PolicyNet, dict[str, Any]]:
    """``(network, config)`` of checkpoint ``path``, every part validated.

    Raises:
        ValueError: see ``sichuan_env.agents.checkpoint.load``: a bad config, a weights
            file that is missing, too large, altered (hash of the weights and the config),
            not a state_dict, with missing, extra, mis-shaped, non-dense or non-finite
            tensors.
    """
    net, doc = checkpoint.load(Path(path), KIND)
    assert isinstance(net, PolicyNet)
    return net, doc


def check_state_dict(state: object, net: torch.nn.Module, what: str) -> None:
    """Raise ``ValueError`` unless ``state`` holds exactly ``net``'s tensors, shaped, finite."""
    expected = {k: (tuple(v.shape), v.dtype) for k, v in net.state_dict().items()}
    checkpoint.check_tensors(state, expected, what)


class TorchAgent(BaseAgent):
    """An agent that acts with a ``PolicyNet``.

    Args:
        net: the network (put in eval mode).
        name: the agent's name in tables.
        greedy: pick the most probable legal action (else sample).
        seed: seeds the sampling generator.
        batch_size: rows per forward pass.
        meta: the checkpoint's config, when loaded from one.
        device: where the network runs (``sichuan_env.agents.device``: ``auto``, ``cpu``,
            ``cuda[:N]``, ``mps`` or a ``torch.device``); None keeps the network where it is.
        amp: autocast of the forward passes: ``auto`` (bfloat16 on CUDA GPUs that have
            it), ``bf16`` or ``off``.

    Raises:
        DeviceError: a device this machine does not have (a ``ValueError``).
    """

    def __init__(
        self,
        net: PolicyNet,
        *,
        name: str = "torch",
        greedy: bool = True,
        seed: int | None = None,
        batch_size: int = 4096,
        meta: dict[str, Any] | None = None,
        device: str | torch.device | None = None,
        amp: str = "auto",
    ) -> None:
        if not isinstance(net, PolicyNet):
            raise ValueError(f"net must be a PolicyNet, got {type(net).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.net = net.eval()
        self.name = name
        self.obs_version = net.config.obs_version
        if not isinstance(greedy, (bool, np.bool_)):
            raise TypeError(f"greedy must be True or False, got {greedy!r}")
        self.greedy = bool(greedy)
        self.batch_size = batch_size
        self.meta = meta or {}
        self._gen = torch.Generator()
        self.amp = amp
        self.to(next(net.parameters()).device if device is None else device)
        self.reset(seed)

    def to(self, device: str | torch.device) -> TorchAgent:
        """Run the network on ``device`` from now on (``sichuan_env.agents.device``); returns self.

        Raises:
            DeviceError: a device this machine does not have (a ``ValueError``).
        """
        self.device = resolve_device(device)
        self._cast = amp_dtype(self.device, self.amp)
        self.net.to(self.device)
        return self

    @classmethod
    def load(
        cls,
        spec: str | os.PathLike,
        seed: int | None = None,
        *,
        greedy: bool = True,
        device: str | torch.device | None = None,
    ) -> TorchAgent:
        """A shipped checkpoint by name (``"ppo"``, ``"bc"``) or a ``.pt`` path.

        Raises:
            ValueError: an unknown name or an invalid checkpoint (see ``load_network``).
        """
        path = checkpoint.resolve(spec)
        net, doc = load_network(path)
        name = str(spec) if path.parent != SHIPPED_DIR else path.stem
        return cls(net, name=name, greedy=greedy, seed=seed, meta=doc, device=device)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (the policy has no per-hand memory)."""
        seed = check_seed(seed)
        self._gen.manual_seed(seed if seed is not None else int(torch.seed() % 2**63))

    @torch.no_grad()
    def _logits(self, obs: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        out = []
        for lo in range(0, len(obs), self.batch_size):  # batches on the device, logits back
            o = torch.from_numpy(obs[lo : lo + self.batch_size]).to(self.device)
            m = torch.from_numpy(masks[lo : lo + self.batch_size]).to(self.device)
            with autocast(self.device, self._cast):
                logits = self.net.logits(o, mask=m)
            out.append(masked_logits(logits.float(), m).cpu())
        return torch.cat(out)

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = self._logits(obs, masks)
        if self.greedy:
            return logits.argmax(dim=1).numpy().astype(np.int64)
        probs = torch.softmax(logits, dim=1)
        return torch.multinomial(probs, 1, generator=self._gen).squeeze(1).numpy().astype(np.int64)

    def action_probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's probabilities of the 88 actions (``float64[88]``, 0 where illegal).

        Raises:
            ValueError: a bad ``obs`` or ``mask`` (an all-zero mask included).
        """
        m = check_masks(mask, batch=False, arg="mask")
        o = check_observations(obs, self.obs_version, batch=False)
        probs = torch.softmax(self._logits(o[None], m[None]).double(), dim=1)[0].numpy()
        probs[m == 0] = 0.0
        return probs


def export_acting(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Copy checkpoint ``src`` to ``dst`` without its training-only oracle critic.

    The acting weights are copied unchanged; the config keeps every field of
    the source's (metrics, command, commit) and records ``exported_from``.

    Raises:
        ValueError: an invalid source (see ``load_network``).
    """
    net, doc = load_network(src)
    cfg = PolicyConfig(**{**net.config.to_dict(), "oracle_critic": False})
    acting = PolicyNet(cfg)
    state = {k: v for k, v in net.state_dict().items() if not k.startswith("critic.")}
    acting.load_state_dict(state, strict=True)
    keep = {k: v for k, v in doc.items() if k not in ("format", "arch", "created", "sha256")}
    return save_checkpoint(dst, acting, {**keep, "exported_from": str(src)})


def load_checkpoint(path: Path, seed: int | None = None) -> TorchAgent:
    """Registry loader for ``.pt`` paths (greedy)."""
    return TorchAgent.load(Path(path), seed)


def load_bc(seed: int | None = None) -> TorchAgent:
    """The shipped behaviour-cloning agent (``agents/checkpoints/bc.pt``)."""
    return TorchAgent.load("bc", seed)


def load_ppo(seed: int | None = None) -> TorchAgent:
    """The shipped PPO agent (``agents/checkpoints/ppo.pt``)."""
    return TorchAgent.load("ppo", seed)


def load_distill(seed: int | None = None) -> TorchAgent:
    """The shipped search-distilled agent (``agents/checkpoints/distill.pt``, ``sichuan_env.train.policy.search_distill``)."""
    return TorchAgent.load("distill", seed)


def load_distill_sample(seed: int | None = None) -> TorchAgent:
    """``distill`` sampling from its masked softmax (seeded) instead of taking the argmax."""
    agent = TorchAgent.load("distill", seed, greedy=False)
    agent.name = "distill-sample"
    return agent


def load_exit(seed: int | None = None) -> TorchAgent:
    """The shipped expert-iteration agent: round 3 of ``sichuan_env.train.policy.exit`` from ``distill``."""
    return TorchAgent.load("exit", seed)


def load_exit_valueleaf(seed: int | None = None) -> TorchAgent:
    """Round 3 of expert iteration on the value-leaf search from ``distill`` (``research/leaf_rounds``)."""
    return TorchAgent.load("exit_valueleaf", seed)
