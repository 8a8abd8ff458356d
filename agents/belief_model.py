"""``BeliefModel``: what a seat's opponents hold, wait on and would win on, from its observation.

A belief network reads one seat's public observation (version 2 planes) and
predicts, for the three opponents in relative order (next, opposite,
previous), the exact labels of ``sichuan_env.engine.labels``:

- ``tenpai`` ``float[N, 3]``: P(the opponent is tenpai); an opponent who has
  won is never tenpai.
- ``waits`` ``float[N, 3, 27]``: P(tile t is one of its wait tiles | it is
  tenpai). Multiply by ``tenpai`` for the unconditional probability.
- ``hand`` ``float[N, 3, 27]``: P(it holds at least one concealed copy of t).
- ``deal_in`` ``float[N, 27]``: P(discarding t now pays some opponent), i.e.
  any opponent's ``deal_in[:, t] > 0``.

The network (``BeliefNet``): an MLP trunk over the flattened planes gives a
context vector (with ``seq_hidden > 0``, plus a projection of a GRU's state
after the seat's public event tokens, ``sichuan_env.encoding.events``, which
also adds a linear correction to every logit; ``predict`` then needs
``tokens`` too); a per-tile branch (a 1x1 convolution over the 27 tile
columns, then two rank convolutions of width 3 inside each suit) reads each
tile's own column and its neighbours; the context is added to every tile's
features; per-tile heads give the wait, hand and deal-in logits and a linear
head the tenpai logits. Every output is a sigmoid (trained with binary
cross-entropy on the exact labels, ``train/belief.py``).

A checkpoint is two files side by side, like the agents' (``agents/torch_agent.py``)::

    belief.pt    the state_dict (torch.save; loaded with weights_only=True)
    belief.json  {"format": "sichuan-belief/1", "arch", "obs_version",
                  "weights_dtype", "rules", "command", "commit",
                  "wall_clock_s", "created", "sha256", ...}

and nothing read from disk is trusted: the JSON is checked key by key, the
weights must hash to its ``sha256`` and hold exactly the architecture's
tensors, shaped, finite (``ValueError`` otherwise). The shipped checkpoint
stores its weights as float16 (half the size; the model computes in float32).
``BeliefModel.load("belief")`` loads ``agents/checkpoints/belief.pt``;
``BeliefModel.load("run/best.pt")`` a file.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from sichuan_env.encoding import observation as O
from sichuan_env.encoding.events import VOCAB_SIZE
from sichuan_env.tiles import InputTypeError

from .base import check_observations
from .torch_agent import (
    MAX_JSON_BYTES,
    SHIPPED_DIR,
    _sha256,
    check_state_dict,
    config_path,
    load_trusted_weights,
)

FORMAT = "sichuan-belief/1"
"""The ``format`` field of every belief checkpoint's JSON."""
HEADS = ("tenpai", "waits", "hand", "deal_in")
"""The predictions, in the order of ``predict``'s dict."""
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
OPTIONAL_ARCH = {"seq_hidden", "seq_embed"}
"""Architecture fields added later: checkpoints written before them take the defaults."""


@dataclass(frozen=True)
class BeliefConfig:
    """The architecture of a ``BeliefNet`` (stored in every checkpoint's JSON).

    Attributes:
        obs_version: the observation version it reads (2: the hand-reading planes).
        hidden: width of the MLP trunk.
        layers: layers of the MLP trunk.
        tile_channels: features per tile column in the per-tile branch.
        dropout: dropout rate in the trunk and the tile branch while training.
        tenpai_pool: the tenpai head also reads the tile features, max- and mean-pooled.
        seq_hidden: width of the GRU over the event tokens, added to the trunk's context
            (0: no sequence branch, the model reads the planes only).
        seq_embed: width of the event-token embedding (with ``seq_hidden > 0``).
    """

    obs_version: int = 2
    hidden: int = 256
    layers: int = 2
    tile_channels: int = 64
    dropout: float = 0.0
    tenpai_pool: bool = False
    seq_hidden: int = 0
    seq_embed: int = 32

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "dropout":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
                    raise ValueError(f"BeliefConfig.dropout must be in [0, 1), got {v!r}")
            elif f.name == "tenpai_pool":
                if not isinstance(v, bool):
                    raise ValueError(f"BeliefConfig.tenpai_pool must be a bool, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"BeliefConfig.{f.name} must be an integer, got {v!r}")
        ranges = (("hidden", 8, 4096), ("layers", 1, 8), ("tile_channels", 4, 512),
                  ("seq_embed", 4, 512))  # fmt: skip
        if self.seq_hidden:
            ranges += (("seq_hidden", 8, 1024),)
        for name, lo, hi in ranges:
            if not lo <= getattr(self, name) <= hi:
                raise ValueError(
                    f"BeliefConfig.{name} must be in [{lo}, {hi}], got {getattr(self, name)}"
                )
        if self.obs_version not in O.versions():
            raise ValueError(
                f"BeliefConfig.obs_version {self.obs_version} is not registered; "
                f"known: {O.versions()}"
            )

    @property
    def rows(self) -> int:
        """Rows of the public view the network reads."""
        return O.obs_rows(self.obs_version, False)

    def to_dict(self) -> dict[str, Any]:
        """Every field by name (JSON-serialisable)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> BeliefConfig:
        """Build from a checkpoint's ``arch`` object.

        Raises:
            ValueError: not a dict, unknown or missing fields, bad values.
        """
        if not isinstance(data, dict):
            raise ValueError(f"the architecture must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in set(data) - known)
        missing = sorted(known - set(data) - OPTIONAL_ARCH)
        if unknown or missing:
            raise ValueError(f"architecture fields unknown {unknown}, missing {missing}")
        return cls(**data)


class BeliefNet(nn.Module):
    """Multi-head belief network over observation planes (logits; see the module docstring).

    Args:
        config: the architecture.
    """

    def __init__(self, config: BeliefConfig | None = None) -> None:
        super().__init__()
        self.config = c = config or BeliefConfig()
        drop = [nn.Dropout(c.dropout)] if c.dropout > 0 else []  # (no module: old layouts load)
        mods: list[nn.Module] = [nn.Linear(c.rows * 27, c.hidden), nn.ReLU(), *drop]
        for _ in range(c.layers - 1):
            mods += [nn.Linear(c.hidden, c.hidden), nn.ReLU(), *drop]
        self.trunk = nn.Sequential(*mods)
        ch = c.tile_channels
        self.column = nn.Conv1d(c.rows, ch, 1)
        self.ranks = nn.Sequential(
            nn.Conv2d(ch, ch, (1, 3), padding=(0, 1)),
            nn.ReLU(),
            nn.Conv2d(ch, ch, (1, 3), padding=(0, 1)),
        )
        self.context = nn.Linear(c.hidden, ch)
        self.tile_embed = nn.Parameter(torch.zeros(ch, 27))
        self.tile_head = nn.Sequential(nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, 7, 1))
        self.drop = nn.Dropout(c.dropout)
        self.tenpai_head = nn.Linear(c.hidden + (2 * ch if c.tenpai_pool else 0), 3)
        if c.seq_hidden:
            self.embed = nn.Embedding(VOCAB_SIZE, c.seq_embed, padding_idx=0)
            self.gru = nn.GRU(c.seq_embed, c.seq_hidden, batch_first=True)
            self.seq_proj = nn.Linear(c.seq_hidden, c.hidden)
            self.seq_out = nn.Linear(c.seq_hidden, 3 + 7 * 27)  # a direct correction of the logits
            for m in (self.seq_proj, self.seq_out):  # starts as the planes-only network
                nn.init.zeros_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(
        self,
        obs: torch.Tensor,
        tokens: torch.Tensor | None = None,
        ends: torch.Tensor | None = None,
        seq: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """Logits ``{"tenpai": [B, 3], "waits": [B, 3, 27], "hand": [B, 3, 27], "deal_in": [B, 27]}``.

        Args:
            obs: ``[B, rows, 27]`` planes.
            tokens: (sequence models) ``long[S, L]`` event tokens, right-padded with 0.
            ends: ``long[B]``: row b has seen the first ``ends[b] >= 1`` tokens of its sequence.
            seq: ``long[B]``: row b's sequence in ``tokens`` (default: sequence b). The GRU is
                causal, so rows at different points of one hand share one pass.
        """
        x = obs[:, : self.config.rows].float()
        g = self.trunk(x.flatten(1))
        extra = None
        if self.config.seq_hidden:
            if tokens is None or ends is None:
                raise ValueError("a sequence belief network needs tokens and ends")
            h, _ = self.gru(self.embed(tokens.long()))  # [S, L, H]
            rows = torch.arange(len(ends)) if seq is None else seq
            state = h[rows, ends.long() - 1]
            g = g + self.seq_proj(state)
            extra = self.seq_out(state)  # [B, 3 + 7 * 27]
        col = torch.relu(self.column(x))  # [B, ch, 27]
        b, ch = col.shape[:2]
        col = col + self.ranks(col.view(b, ch, 3, 9)).view(b, ch, 27)
        z = self.drop(torch.relu(col + self.context(g)[:, :, None] + self.tile_embed))
        t = self.tile_head(z)  # [B, 7, 27]
        if self.config.tenpai_pool:
            g = torch.cat([g, z.amax(dim=2), z.mean(dim=2)], dim=1)
        ten = self.tenpai_head(g)
        if extra is not None:
            ten = ten + extra[:, :3]
            t = t + extra[:, 3:].view(-1, 7, 27)
        return {
            "tenpai": ten,
            "waits": t[:, 0:3],
            "hand": t[:, 3:6],
            "deal_in": t[:, 6],
        }


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
    path = Path(path)
    if path.suffix != ".pt":
        raise ValueError(f"a checkpoint path ends in .pt, got {str(path)!r}")
    if dtype not in WEIGHT_DTYPES:
        raise ValueError(f"dtype must be one of {sorted(WEIGHT_DTYPES)}, got {dtype!r}")
    doc = {
        "format": FORMAT,
        "arch": net.config.to_dict(),
        "obs_version": net.config.obs_version,
        "weights_dtype": dtype,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **meta,
    }
    missing = [k for k in REQUIRED if k not in doc and k != "sha256"]
    if missing:
        raise ValueError(f"checkpoint metadata misses {missing}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".pt.tmp")
    want = WEIGHT_DTYPES[dtype]
    torch.save({k: v.detach().cpu().to(want) for k, v in net.state_dict().items()}, tmp)
    doc["sha256"] = _sha256(tmp)
    os.replace(tmp, path)
    config_path(path).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def read_belief_config(path: str | os.PathLike) -> dict[str, Any]:
    """The validated JSON config of belief checkpoint ``path`` (the ``.pt`` or the ``.json``).

    Raises:
        ValueError: missing or oversized file, not JSON, a missing or mistyped key,
            an unknown format, dtype or architecture.
    """
    cfg = config_path(Path(path))
    if not cfg.is_file():
        raise ValueError(f"checkpoint config {str(cfg)!r} is missing")
    if cfg.stat().st_size > MAX_JSON_BYTES:
        raise ValueError(f"checkpoint config {str(cfg)!r} is larger than {MAX_JSON_BYTES} bytes")
    try:
        doc = json.loads(cfg.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
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
    if doc["weights_dtype"] not in WEIGHT_DTYPES:
        raise ValueError(
            f"checkpoint weights_dtype {doc['weights_dtype']!r} is not one of {sorted(WEIGHT_DTYPES)}"
        )
    arch = BeliefConfig.from_dict(doc["arch"])
    if arch.obs_version != doc["obs_version"]:
        raise ValueError("checkpoint config: obs_version differs from the architecture's")
    return doc


def load_belief_network(path: str | os.PathLike) -> tuple[BeliefNet, dict[str, Any]]:
    """``(network in float32 eval mode, config)`` of belief checkpoint ``path``, validated.

    Raises:
        ValueError: see ``read_belief_config``; weights that are missing, too large,
            altered (hash), not a state_dict, with missing, extra, mis-shaped or
            mis-typed tensors, or non-finite values.
    """
    path = Path(path)
    doc = read_belief_config(path)
    state = load_trusted_weights(path, doc["sha256"])
    net = BeliefNet(BeliefConfig.from_dict(doc["arch"])).to(WEIGHT_DTYPES[doc["weights_dtype"]])
    check_state_dict(state, net, str(path))
    net.load_state_dict(state, strict=True)
    return net.float().eval(), doc


class BeliefModel:
    """A trained ``BeliefNet`` behind a numpy ``predict``.

    Args:
        net: the network (put in eval mode).
        meta: the checkpoint's config, when loaded from one.
        batch_size: rows per forward pass.
    """

    def __init__(
        self, net: BeliefNet, meta: dict[str, Any] | None = None, *, batch_size: int = 4096
    ) -> None:
        if not isinstance(net, BeliefNet):
            raise ValueError(f"net must be a BeliefNet, got {type(net).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.net = net.eval()
        self.meta = meta or {}
        self.batch_size = batch_size

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
        path = Path(spec)
        if isinstance(spec, str) and path.suffix != ".pt" and os.sep not in spec:
            path = SHIPPED_DIR / f"{spec}.pt"
            if not path.is_file():
                shipped = sorted(p.stem for p in SHIPPED_DIR.glob("*.pt"))
                raise ValueError(f"no shipped checkpoint {spec!r}; shipped: {shipped}")
        net, doc = load_belief_network(path)
        return cls(net, doc)

    @property
    def needs_tokens(self) -> bool:
        """Whether ``predict`` needs the event tokens (a sequence model)."""
        return self.net.config.seq_hidden > 0

    @torch.no_grad()
    def _run(self, obs: np.ndarray, tokens: object, probs: bool) -> dict[str, np.ndarray]:
        o = check_observations(obs, self.obs_version, batch=True)
        tok = check_tokens(tokens, len(o)) if self.needs_tokens else None
        parts: dict[str, list[np.ndarray]] = {k: [] for k in HEADS}
        for lo in range(0, max(len(o), 1), self.batch_size):
            extra = {}
            if tok is not None:
                ends = (tok[lo : lo + self.batch_size] != 0).sum(axis=1)
                t = tok[lo : lo + self.batch_size, : max(1, int(ends.max(initial=1)))]
                extra = {"tokens": torch.from_numpy(t), "ends": torch.from_numpy(ends)}
            out = self.net(torch.from_numpy(o[lo : lo + self.batch_size]), **extra)
            for k in HEADS:
                parts[k].append((torch.sigmoid(out[k]) if probs else out[k]).numpy())
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
            ``{"tenpai": float32[N, 3], "waits": float32[N, 3, 27] (given tenpai),
            "hand": float32[N, 3, 27] (holds >= 1), "deal_in": float32[N, 27]}``.

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
