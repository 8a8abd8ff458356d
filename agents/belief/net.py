"""``BeliefNet``: the belief network's architecture (``BeliefConfig``) and its forward pass.

The network: an MLP trunk over the flattened planes gives a context vector
(with ``seq_hidden > 0``, plus a projection of a GRU's state after the seat's
public event tokens, ``sichuan_env.encoding.events``, which also adds a linear
correction to every logit; ``predict`` then needs ``tokens`` too); a per-tile
branch (a 1x1 convolution over the 27 tile columns, then two rank convolutions
of width 3 inside each suit) reads each tile's own column and its neighbours;
the context is added to every tile's features. The output layers follow the
head table (``sichuan_env.agents.belief.heads``, the heads in ``config.heads``):
a 1x1 convolution gives each per-tile head's channels (``waits``, ``hand``,
``deal_in``) and a linear layer each per-opponent head's scalars
(``tenpai``), in table order. Every output is a sigmoid (trained with binary
cross-entropy on the exact labels, ``sichuan_env.train.belief.train``).

Checkpoints and the numpy ``BeliefModel`` are ``sichuan_env.agents.belief.model``
(which imports this module, never the reverse).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from sichuan_env.agents.belief import heads as H
from torch import nn

from sichuan_env.encoding import observation as O
from sichuan_env.encoding.events import VOCAB_SIZE

OPTIONAL_ARCH = {"seq_hidden": 0, "seq_embed": 32, "heads": H.FIRST_HEADS}
"""Architecture fields added later, with the value of checkpoints written before them."""


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
        heads: the heads it predicts (``sichuan_env.agents.belief.heads``), kept in table
            order; at least one per-opponent and one per-tile head.
    """

    obs_version: int = 2
    hidden: int = 256
    layers: int = 2
    tile_channels: int = 64
    dropout: float = 0.0
    tenpai_pool: bool = False
    seq_hidden: int = 0
    seq_embed: int = 32
    heads: tuple[str, ...] = H.NAMES

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "heads":
                if isinstance(v, str) or not isinstance(v, (list, tuple)):
                    raise ValueError(f"BeliefConfig.heads must be a list of names, got {v!r}")
                if not all(isinstance(x, str) for x in v):
                    raise ValueError(f"BeliefConfig.heads must be a list of names, got {v!r}")
                chosen = H.select(v)
                if not any(h.per_tile for h in chosen) or all(h.per_tile for h in chosen):
                    raise ValueError(
                        "BeliefConfig.heads needs a per-opponent and a per-tile head, "
                        f"got {list(v)}"
                    )
                object.__setattr__(self, "heads", tuple(h.name for h in chosen))
            elif f.name == "dropout":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
                    raise ValueError(f"BeliefConfig.dropout must be in [0, 1), got {v!r}")
            elif f.name == "tenpai_pool":
                if not isinstance(v, bool):
                    raise ValueError(f"BeliefConfig.tenpai_pool must be a bool, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"BeliefConfig.{f.name} must be an integer, got {v!r}")
        ranges: tuple[tuple[str, int, int], ...] = (
            ("hidden", 8, 4096), ("layers", 1, 8), ("tile_channels", 4, 512), ("seq_embed", 4, 512),
        )  # fmt: skip
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

    @property
    def head_specs(self) -> tuple[H.Head, ...]:
        """Its heads' table entries, in table order."""
        return H.select(self.heads)

    def to_dict(self) -> dict[str, Any]:
        """Every field by name (JSON-serialisable)."""
        return {**asdict(self), "heads": list(self.heads)}

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
        missing = sorted(known - set(data) - set(OPTIONAL_ARCH))
        if unknown or missing:
            raise ValueError(f"architecture fields unknown {unknown}, missing {missing}")
        return cls(**{**OPTIONAL_ARCH, **data})


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
        specs = c.head_specs
        self.n_tile = sum(h.width for h in specs if h.per_tile)  # tile channels
        self.n_seat = sum(h.width for h in specs if not h.per_tile)  # per-opponent scalars
        self.tile_head = nn.Sequential(
            nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, self.n_tile, 1)
        )
        self.drop = nn.Dropout(c.dropout)
        # the per-opponent layer keeps the name of its first head (checkpoints' tensor names)
        self.tenpai_head = nn.Linear(c.hidden + (2 * ch if c.tenpai_pool else 0), self.n_seat)
        if c.seq_hidden:
            self.embed = nn.Embedding(VOCAB_SIZE, c.seq_embed, padding_idx=0)
            self.gru = nn.GRU(c.seq_embed, c.seq_hidden, batch_first=True)
            self.seq_proj = nn.Linear(c.seq_hidden, c.hidden)
            # a direct correction of every logit
            self.seq_out = nn.Linear(c.seq_hidden, self.n_seat + self.n_tile * 27)
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
        """Logits ``{head: [B, *shape]}`` of ``config.heads`` (``tenpai [B, 3]``, ``waits [B, 3, 27]``).

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
            rows = torch.arange(len(ends), device=ends.device) if seq is None else seq
            state = h[rows, ends.long() - 1]
            g = g + self.seq_proj(state)
            extra = self.seq_out(state)  # [B, n_seat + n_tile * 27]
        col = torch.relu(self.column(x))  # [B, ch, 27]
        b, ch = col.shape[:2]
        col = col + self.ranks(col.view(b, ch, 3, 9)).view(b, ch, 27)
        z = self.drop(torch.relu(col + self.context(g)[:, :, None] + self.tile_embed))
        t = self.tile_head(z)  # [B, n_tile, 27]
        if self.config.tenpai_pool:
            g = torch.cat([g, z.amax(dim=2), z.mean(dim=2)], dim=1)
        ten = self.tenpai_head(g)
        if extra is not None:
            ten = ten + extra[:, : self.n_seat]
            t = t + extra[:, self.n_seat :].view(-1, self.n_tile, 27)
        out, seat, tile = {}, 0, 0
        for h in self.config.head_specs:
            if h.per_tile:
                out[h.name] = t[:, tile : tile + h.width].reshape(-1, *h.shape)
                tile += h.width
            else:
                out[h.name] = ten[:, seat : seat + h.width].reshape(-1, *h.shape)
                seat += h.width
        return out
