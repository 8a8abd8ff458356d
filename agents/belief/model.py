"""``BeliefModel``: what a seat's opponents hold, wait on and would win on, from its observation.

A belief network reads one seat's public observation (version 2 planes) and
predicts, for the three opponents in relative order (next, opposite,
previous), the exact labels of ``sichuan_env.engine.labels``, one head per
entry of the head table (``sichuan_env.agents.belief.heads``, which says what
each means and which rows count), e.g.:

- ``tenpai`` ``float[N, 3]``: P(the opponent is tenpai); an opponent who has
  won is never tenpai.
- ``waits`` ``float[N, 3, 27]``: P(tile t is one of its wait tiles | it is
  tenpai). Multiply by ``tenpai`` for the unconditional probability.
- ``hand`` ``float[N, 3, 27]``: P(it holds at least one concealed copy of t).
- ``deal_in`` ``float[N, 27]``: P(discarding t now pays some opponent), i.e.
  any opponent's ``deal_in[:, t] > 0``.

The network is ``BeliefNet`` (``sichuan_env.agents.belief.net``, which describes its
architecture; ``BeliefConfig`` and ``BeliefNet`` are re-exported here). Every
output is a sigmoid; with ``seq_hidden > 0`` ``predict`` also needs the seat's
event tokens (``sichuan_env.encoding.events``).

A checkpoint is two files side by side, like the agents' (``sichuan_env.agents.nn.torch_agent``)::

    belief.pt    the state_dict (torch.save; loaded with weights_only=True)
    belief.json  {"format": "sichuan-belief/1", "arch", "obs_version",
                  "weights_dtype", "rules", "command", "commit",
                  "wall_clock_s", "created", "sha256", ...}

and nothing read from disk is trusted: the JSON is checked key by key, the
weights and the JSON must hash to its ``sha256`` (``sichuan_env.agents.checkpoint``) and
hold exactly the architecture's
tensors, shaped, finite (``ValueError`` otherwise). The shipped checkpoint
stores its weights as float16 (half the size; the model computes in float32).
``BeliefModel.load("belief")`` loads ``agents/checkpoints/belief.pt``;
``BeliefModel.load("run/best.pt")`` a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.base import check_observations
from sichuan_env.agents.belief.heads import NAMES
from sichuan_env.agents.belief.net import BeliefConfig, BeliefNet
from sichuan_env.agents.device import amp_dtype, autocast, resolve_device

from sichuan_env.encoding.events import VOCAB_SIZE
from sichuan_env.tiles import InputTypeError

# BeliefConfig and BeliefNet live in .net; they are re-exported so that
# ``from sichuan_env.agents.belief.model import BeliefConfig, BeliefNet`` keeps working.
__all__ = ["FORMAT", "HEADS", "REQUIRED", "WEIGHT_DTYPES", "BeliefConfig", "BeliefModel",
           "BeliefNet", "check_tokens", "load_belief_network", "read_belief_config",
           "save_belief"]  # fmt: skip

FORMAT = "sichuan-belief/1"
"""The ``format`` field of every belief checkpoint's JSON."""
HEADS = NAMES
"""Every head's name (``sichuan_env.agents.belief.heads``), in the order of ``predict``'s dict;
a model predicts those of its ``heads``."""
WEIGHT_DTYPES = {"float32": torch.float32, "float16": torch.float16}
REQUIRED = {
    "format": str,
    "arch": dict,
    "obs_version": int,
    "weights_dtype": str,
    "rules": dict,
    "command": str,
    "commit": str,
    "wall_clock_s": (int, float),
    "created": str,
    "sha256": str,
}
"""Keys every belief checkpoint JSON holds, with their JSON types."""
KIND = checkpoint.Kind(FORMAT, REQUIRED, BeliefConfig.from_dict, BeliefNet, WEIGHT_DTYPES)
"""Belief checkpoints, read and written by ``sichuan_env.agents.checkpoint``."""


def save_belief(
    path: str | os.PathLike, net: BeliefNet, meta: dict[str, Any], *, dtype: str = "float32"
) -> Path:
    """Write ``path`` (the state_dict, in ``dtype``) and its JSON config; returns the ``.pt`` path.

    Args:
        path: where the weights go (a ``.pt`` name); the JSON takes the same stem.
        net: the network.
        meta: ``rules`` (a dict), ``command``, ``commit``, ``wall_clock_s`` and any
            extra JSON-serialisable fields (data, metrics).
        dtype: ``"float32"`` or ``"float16"`` (half the file; the model still runs in float32).

    Raises:
        ValueError: a path that does not end in ``.pt``, an unknown dtype, a required field missing.
    """
    return checkpoint.save(path, KIND, net, meta, dtype=dtype)


def read_belief_config(path: str | os.PathLike) -> dict[str, Any]:
    """The validated JSON config of belief checkpoint ``path`` (the ``.pt`` or the ``.json``).

    Raises:
        ValueError: missing or oversized file, not JSON, a missing or mistyped key,
            an unknown format, dtype or architecture.
    """
    return checkpoint.read_config(path, KIND)


def load_belief_network(path: str | os.PathLike) -> tuple[BeliefNet, dict[str, Any]]:
    """``(network in float32 eval mode, config)`` of belief checkpoint ``path``, validated.

    Raises:
        ValueError: see ``read_belief_config``; weights that are missing, too large,
            altered (hash), not a state_dict, with missing, extra, mis-shaped or
            mis-typed tensors, or non-finite values.
    """
    net, doc = checkpoint.load(Path(path), KIND)
    return net.float().eval(), doc  # type: ignore[return-value]


class BeliefModel:
    """A trained ``BeliefNet`` behind a numpy ``predict``.

    Args:
        net: the network (put in eval mode).
        meta: the checkpoint's config, when loaded from one.
        batch_size: rows per forward pass.
        device: where the network runs (``sichuan_env.agents.device``); None keeps it
            where it is.
        amp: autocast of the forward passes (``auto``: bfloat16 on CUDA GPUs that have it).
    """

    def __init__(
        self,
        net: BeliefNet,
        meta: dict[str, Any] | None = None,
        *,
        batch_size: int = 4096,
        device: str | torch.device | None = None,
        amp: str = "auto",
    ) -> None:
        if not isinstance(net, BeliefNet):
            raise ValueError(f"net must be a BeliefNet, got {type(net).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.net = net.eval()
        self.meta = meta or {}
        self.batch_size = batch_size
        self.amp = amp
        self.to(next(net.parameters()).device if device is None else device)

    def to(self, device: str | torch.device) -> BeliefModel:
        """Run the network on ``device`` from now on; returns self.

        Raises:
            DeviceError: a device this machine does not have (a ``ValueError``).
        """
        self.device = resolve_device(device)
        self._cast = amp_dtype(self.device, self.amp)
        self.net.to(self.device)
        return self

    @property
    def obs_version(self) -> int:
        """The observation version ``predict`` reads."""
        return self.net.config.obs_version

    @classmethod
    def load(cls, spec: str | os.PathLike = "belief") -> BeliefModel:
        """A shipped checkpoint by name (``"belief"``) or a ``.pt`` path.

        Raises:
            ValueError: an unknown name or an invalid checkpoint (see ``load_belief_network``).
        """
        path = checkpoint.resolve(spec)
        net, doc = load_belief_network(path)
        return cls(net, doc)

    @property
    def heads(self) -> tuple[str, ...]:
        """The heads ``predict`` returns (the checkpoint's, in table order)."""
        return self.net.config.heads

    @property
    def needs_tokens(self) -> bool:
        """Whether ``predict`` needs the event tokens (a sequence model)."""
        return self.net.config.seq_hidden > 0

    @torch.no_grad()
    def _run(self, obs: np.ndarray, tokens: object, probs: bool) -> dict[str, np.ndarray]:
        o = check_observations(obs, self.obs_version, batch=True)
        tok = check_tokens(tokens, len(o)) if self.needs_tokens else None
        parts: dict[str, list[np.ndarray]] = {k: [] for k in self.heads}
        for lo in range(0, max(len(o), 1), self.batch_size):
            extra = {}
            if tok is not None:
                ends = (tok[lo : lo + self.batch_size] != 0).sum(axis=1)
                t = tok[lo : lo + self.batch_size, : max(1, int(ends.max(initial=1)))]
                extra = {
                    "tokens": torch.from_numpy(t).to(self.device),
                    "ends": torch.from_numpy(ends).to(self.device),
                }
            x = torch.from_numpy(o[lo : lo + self.batch_size]).to(self.device)
            with autocast(self.device, self._cast):
                out = self.net(x, **extra)
            for k in self.heads:
                y = out[k].float()
                parts[k].append((torch.sigmoid(y) if probs else y).cpu().numpy())
        return {k: np.concatenate(v).astype(np.float32) for k, v in parts.items()}

    def logits(self, obs: np.ndarray, tokens: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The raw logits of ``predict``'s heads (same input and shapes as ``predict``)."""
        return self._run(obs, tokens, False)

    def predict(self, obs: np.ndarray, tokens: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Probabilities for a batch of observations ``uint8[N, rows, 27]`` (public or oracle rows).

        Args:
            obs: the observations.
            tokens: sequence models only (``needs_tokens``): ``int[N, L]``, row n's event
                tokens so far (``sichuan_env.encoding.events``), right-padded with 0.

        Returns:
            ``{head: float32[N, *shape]}`` for each of ``heads`` (the module docstring):
            ``"tenpai": [N, 3], "waits": [N, 3, 27] (given tenpai), "hand": [N, 3, 27]
            (holds >= 1), "deal_in": [N, 27]``.

        Raises:
            ValueError: ``obs`` is not a batch of this model's observation version, or
                a sequence model's ``tokens`` are missing or malformed.
        """
        return self._run(obs, tokens, True)


def check_tokens(tokens: object, n: int) -> np.ndarray:
    """``tokens`` as ``int64[n, L]`` after checking: ids in the vocabulary, right-padded, non-empty.

    Raises:
        InputTypeError: not an integer numpy array.
        ValueError: missing, wrong shape, ids outside ``[0, VOCAB_SIZE)``, a pad before a
            token, or a row without tokens.
    """
    if tokens is None:
        raise ValueError("this belief model reads event tokens: pass tokens=int[N, L]")
    if not isinstance(tokens, np.ndarray) or tokens.dtype.kind not in "iu":
        raise InputTypeError(f"tokens must be an integer numpy array, got {type(tokens).__name__}")
    if tokens.ndim != 2 or len(tokens) != n or (n and tokens.shape[1] == 0):
        raise ValueError(f"tokens must have shape ({n}, L >= 1), got {tokens.shape}")
    t = tokens.astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= VOCAB_SIZE):
        raise ValueError(f"token ids must lie in [0, {VOCAB_SIZE})")
    if n and ((t[:, 1:] != 0) & (t[:, :-1] == 0)).any():
        raise ValueError("tokens must be right-padded: no 0 before a token")
    if n and (t[:, 0] == 0).any():
        raise ValueError("every row needs at least one token")
    return np.ascontiguousarray(t)
