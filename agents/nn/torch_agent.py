"""``TorchAgent``: a ``PolicyNet`` behind the Agent protocol, and its checkpoint files.

A checkpoint is two files side by side::

    run/best.pt     the network's state_dict (torch.save; loaded with weights_only=True)
    run/best.json   {"format", "arch", "obs_version", "rules", "method", "command",
                     "commit", "wall_clock_s", "created", "sha256", ...}

Nothing read from disk is trusted: the JSON is checked key by key, the
weights file must hash to the JSON's ``sha256``, hold exactly the tensors of
the architecture with the right shapes, all finite. Anything else is a
``ValueError`` naming the problem. ``TorchAgent.load("ppo")`` loads a shipped
checkpoint (``agents/checkpoints/``), ``TorchAgent.load("run/best.pt")`` a
file; the registry resolves both (``make_agent("ppo")``, ``make_agent("x.pt")``).

Acting is greedy (the most probable legal action) unless ``greedy=False``,
which samples from the masked softmax with the agent's own seeded generator.
Inference runs in batches of ``batch_size`` rows without autograd.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.base import BaseAgent, check_masks, check_observations, check_seed
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet, masked_logits

FORMAT = "sichuan-torch-agent/1"
"""The ``format`` field of every checkpoint's JSON."""
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "checkpoints"
"""Where shipped checkpoints live (``<name>.pt`` + ``<name>.json``)."""
MAX_JSON_BYTES = 1 << 20
MAX_WEIGHTS_BYTES = 256 << 20
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


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def config_path(weights: Path) -> Path:
    """The JSON next to a ``.pt`` file."""
    return Path(weights).with_suffix(".json")


def save_checkpoint(path: str | os.PathLike, net: PolicyNet, meta: dict[str, Any]) -> Path:
    """Write ``path`` (the state_dict) and its JSON config; returns the ``.pt`` path.

    Args:
        path: where the weights go (a ``.pt`` name); the JSON takes the same stem.
        net: the network.
        meta: ``rules`` (a dict), ``method``, ``command``, ``commit``,
            ``wall_clock_s`` and any extra JSON-serialisable fields (metrics).

    Raises:
        ValueError: a path that does not end in ``.pt``, or a required field missing.
    """
    path = Path(path)
    if path.suffix != ".pt":
        raise ValueError(f"a checkpoint path ends in .pt, got {str(path)!r}")
    doc = {
        "format": FORMAT,
        "arch": net.config.to_dict(),
        "obs_version": net.config.obs_version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **meta,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".pt.tmp")
    torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, tmp)
    doc["sha256"] = _sha256(tmp)
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        tmp.unlink()
        raise ValueError(f"checkpoint metadata misses {missing}")
    os.replace(tmp, path)
    config_path(path).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """The validated JSON config of checkpoint ``path`` (the ``.pt`` or the ``.json``).

    Raises:
        ValueError: missing or oversized file, not JSON, a missing or mistyped key,
            an unknown format or architecture.
    """
    cfg = config_path(Path(path))
    if not cfg.is_file():
        raise ValueError(f"checkpoint config {str(cfg)!r} is missing")
    if cfg.stat().st_size > MAX_JSON_BYTES:
        raise ValueError(f"checkpoint config {str(cfg)!r} is larger than {MAX_JSON_BYTES} bytes")
    try:
        doc = json.loads(cfg.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"checkpoint config {str(cfg)!r} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"checkpoint config {str(cfg)!r} must be a JSON object")
    for key, kind in REQUIRED.items():
        if key not in doc:
            raise ValueError(f"checkpoint config {str(cfg)!r} misses the key {key!r}")
        if isinstance(doc[key], bool) or not isinstance(doc[key], kind):
            raise ValueError(f"checkpoint config key {key!r} has the wrong type: {doc[key]!r}")
    if doc["format"] != FORMAT:
        raise ValueError(f"checkpoint format {doc['format']!r} is not {FORMAT!r}")
    arch = PolicyConfig.from_dict(doc["arch"])
    if arch.obs_version != doc["obs_version"]:
        raise ValueError("checkpoint config: obs_version differs from the architecture's")
    return doc


def load_trusted_weights(path: Path, sha256: str) -> dict:
    """A checkpoint's tensors, read only after the file's size and SHA-256 check out.

    Raises:
        ValueError: missing, larger than ``MAX_WEIGHTS_BYTES``, not the file its config
            hashed, or unreadable by ``torch.load(weights_only=True)``.
    """
    if not path.is_file():
        raise ValueError(f"checkpoint weights {str(path)!r} are missing")
    if path.stat().st_size > MAX_WEIGHTS_BYTES:
        raise ValueError(f"checkpoint weights {str(path)!r} are larger than {MAX_WEIGHTS_BYTES}")
    if _sha256(path) != sha256:
        raise ValueError(
            f"checkpoint weights {str(path)!r} do not match the sha256 of their config"
        )
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        raise ValueError(f"checkpoint weights {str(path)!r} cannot be read: {exc}") from None


def load_network(path: str | os.PathLike) -> tuple[PolicyNet, dict[str, Any]]:
    """``(network, config)`` of checkpoint ``path``, every part validated.

    Raises:
        ValueError: see ``read_config``; a weights file that is missing, too
            large, altered (hash), not a state_dict, with missing, extra or
            mis-shaped tensors, or non-finite values.
    """
    path = Path(path)
    doc = read_config(path)
    state = load_trusted_weights(path, doc["sha256"])
    net = PolicyNet(PolicyConfig.from_dict(doc["arch"]))
    check_state_dict(state, net, str(path))
    net.load_state_dict(state, strict=True)
    net.eval()
    return net, doc


def check_state_dict(state: object, net: torch.nn.Module, what: str) -> None:
    """Raise ``ValueError`` unless ``state`` holds exactly ``net``'s tensors, shaped, finite."""
    if not isinstance(state, dict):
        raise ValueError(f"{what}: expected a state_dict, got {type(state).__name__}")
    want = net.state_dict()
    missing = sorted(set(want) - set(state))
    extra = sorted(str(k) for k in set(state) - set(want))
    if missing or extra:
        raise ValueError(f"{what}: tensors missing {missing[:5]}, unexpected {extra[:5]}")
    for key, ref in want.items():
        t = state[key]
        if not isinstance(t, torch.Tensor) or t.shape != ref.shape or t.dtype != ref.dtype:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{what}: tensor {key!r} should be {tuple(ref.shape)}, got {got}")
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"{what}: tensor {key!r} has non-finite values")


class TorchAgent(BaseAgent):
    """An agent that acts with a ``PolicyNet``.

    Args:
        net: the network (put in eval mode).
        name: the agent's name in tables.
        greedy: pick the most probable legal action (else sample).
        seed: seeds the sampling generator.
        batch_size: rows per forward pass.
        meta: the checkpoint's config, when loaded from one.
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
    ) -> None:
        if not isinstance(net, PolicyNet):
            raise ValueError(f"net must be a PolicyNet, got {type(net).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.net = net.eval()
        self.name = name
        self.obs_version = net.config.obs_version
        self.greedy = bool(greedy)
        self.batch_size = batch_size
        self.meta = meta or {}
        self._gen = torch.Generator()
        self.reset(seed)

    @classmethod
    def load(
        cls, spec: str | os.PathLike, seed: int | None = None, *, greedy: bool = True
    ) -> TorchAgent:
        """A shipped checkpoint by name (``"ppo"``, ``"bc"``) or a ``.pt`` path.

        Raises:
            ValueError: an unknown name or an invalid checkpoint (see ``load_network``).
        """
        path = Path(spec)
        if isinstance(spec, str) and path.suffix != ".pt" and os.sep not in spec:
            path = SHIPPED_DIR / f"{spec}.pt"
            if not path.is_file():
                shipped = sorted(p.stem for p in SHIPPED_DIR.glob("*.pt"))
                raise ValueError(f"no shipped checkpoint {spec!r}; shipped: {shipped}")
        net, doc = load_network(path)
        name = str(spec) if path.parent != SHIPPED_DIR else path.stem
        return cls(net, name=name, greedy=greedy, seed=seed, meta=doc)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (the policy has no per-hand memory)."""
        seed = check_seed(seed)
        self._gen.manual_seed(seed if seed is not None else int(torch.seed() % 2**63))

    @torch.no_grad()
    def _logits(self, obs: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        out = []
        for lo in range(0, len(obs), self.batch_size):
            o = torch.from_numpy(obs[lo : lo + self.batch_size])
            m = torch.from_numpy(masks[lo : lo + self.batch_size])
            out.append(masked_logits(self.net.logits(o, mask=m), m))
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
