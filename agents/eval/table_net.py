"""The whole-table value network ``V(state) -> float[4]``: each seat's expected points to come.

``TableValueNet`` reads a state of ``table_rows`` (every seat's concealed, melded
and discarded tiles, the undrawn wall's composition, voids, points so far, the
``luck_features`` summary of each seat, and the policy that plays each seat). It
encodes each seat with one shared MLP, then scores seat ``k`` from the four seat
codes in the order ``k, k+1, k+2, k+3`` and the wall, and subtracts the four
scores' mean: the values are zero-sum by construction, and the network does not
depend on which absolute seat is which (rotating the seats rotates the values).

The policies enter as one learned embedding per seat over ``table_rows.VOCAB``;
training replaces a seat's id by ``unknown`` with probability ``lineup_dropout``, so
``unknown`` is the value of a seat whose policy is not named (the deal's
correction always uses it, see ``table_value``).

``counterfactual_values`` evaluates the up-to-27 states that differ from an
event's state only in the tile the drawer drew, sharing the first layers' work:
the tiles' part of the first layers is computed once per event, and each
counterfactual adds two columns (the drawn tile out, the other tile in).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from sichuan_env.agents.eval.luck_features import NF
from sichuan_env.agents.eval.table_rows import VOCAB
from torch import nn

FEATURES_VERSION = 1
"""The row format (``table_rows``), stored as the checkpoint's ``obs_version``."""
MAX_WIDTH = 1024
SEAT_IN = 81 + NF + 4 + 1
"""A seat's inputs besides its policy: tiles (3 x 27), features, void one-hot, points so far."""
GLOBAL_IN = 27 + 2
"""The table's own inputs: the wall's composition, tiles left, and whether it is the deal."""


@dataclass(frozen=True)
class TableValueConfig:
    """Widths: the seat encoder (``seat``), the head (``head``), the policy embedding."""

    seat: int = 64
    head: int = 128
    embed: int = 8
    vocab: int = len(VOCAB)
    obs_version: int = FEATURES_VERSION
    planes: int = 1
    """1: the seats read their tile-count planes; 0: only their ``luck_features`` summary."""

    @classmethod
    def from_dict(cls, doc: object) -> TableValueConfig:
        """Validate an ``arch`` object (``ValueError`` on unknown, missing or bad fields)."""
        keys = {"seat", "head", "embed", "vocab", "obs_version"}
        if isinstance(doc, dict) and "planes" not in doc:  # written before the option
            doc = {**doc, "planes": 1}
        if not isinstance(doc, dict) or set(doc) != keys | {"planes"}:
            raise ValueError(f"a table-value arch has the keys {sorted(keys)}: {doc}")
        for key in ("seat", "head", "embed"):
            v = doc[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_WIDTH:
                raise ValueError(f"arch {key} must be an integer in 1..{MAX_WIDTH}, got {v!r}")
        if doc["vocab"] != len(VOCAB):
            raise ValueError(f"arch vocab {doc['vocab']!r} is not this library's {len(VOCAB)}")
        if doc["obs_version"] != FEATURES_VERSION:
            raise ValueError(f"row format {doc['obs_version']!r} is not {FEATURES_VERSION}")
        if doc["planes"] not in (0, 1) or isinstance(doc["planes"], bool):
            raise ValueError(f"arch planes must be 0 or 1, got {doc['planes']!r}")
        return cls(doc["seat"], doc["head"], doc["embed"], len(VOCAB), FEATURES_VERSION,
                   doc["planes"])  # fmt: skip

    def to_dict(self) -> dict[str, int]:
        """The ``arch`` object."""
        return asdict(self)


def seat_inputs(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``float[B, 4, SEAT_IN]``: each seat's inputs but its policy (see ``TableValueNet``)."""
    tiles = batch["tiles"].float().flatten(-2) / 4.0
    voids = torch.nn.functional.one_hot(batch["voids"].long() + 1, 4).float()
    so_far = (batch["so_far"].float() / 16.0).clamp(-8.0, 8.0).unsqueeze(-1)
    return torch.cat([tiles, batch["feats"].float(), voids, so_far], dim=-1)


def global_inputs(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``float[B, GLOBAL_IN]``: the wall's composition / 4, tiles left / 55, the deal flag."""
    wall = batch["wallc"].float()
    left = wall.sum(-1, keepdim=True) / 55.0
    return torch.cat([wall / 4.0, left, batch["deal"].float().unsqueeze(-1)], dim=-1)


ROTATIONS = torch.tensor([[(k + j) % 4 for j in range(4)] for k in range(4)])
"""Row ``k``: the seats in the order seat ``k`` sees them (itself first)."""


class TableValueNet(nn.Module):
    """Zero-sum values ``float[B, 4]`` of table states (see the module's text)."""

    def __init__(self, config: TableValueConfig | None = None) -> None:
        super().__init__()
        self.config = c = config or TableValueConfig()
        self.embed = nn.Embedding(c.vocab, c.embed)
        self.seat1 = nn.Linear(SEAT_IN + c.embed, c.seat)
        self.seat2 = nn.Linear(c.seat, c.seat)
        self.head1 = nn.Linear(4 * c.seat + GLOBAL_IN, c.head)
        self.head2 = nn.Linear(c.head, c.head)
        self.out = nn.Linear(c.head, 1)

    def seat_pre(self, x: torch.Tensor, lineup: torch.Tensor) -> torch.Tensor:
        """The seat encoder's first layer before its ReLU: ``[..., 4, seat]``."""
        return self.seat1(torch.cat([x, self.embed(lineup.long())], dim=-1))

    def head_values(self, pre: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """Seat codes from first-layer pre-activations ``[..., 4, seat]`` and globals -> values."""
        e = torch.relu(self.seat2(torch.relu(pre)))  # [..., 4, S]
        s, h_n = self.config.seat, self.config.head
        w = self.head1.weight  # [H, 4 S + GLOBAL_IN]: blocks of the seats in seen order
        # head1 of seat k's input [e_k, e_k+1, e_k+2, e_k+3, g] by linearity: each seat's
        # code through each block once, then summed in seat k's order (no gathered copies)
        blocks = e @ w[:, : 4 * s].reshape(h_n, 4, s).permute(2, 1, 0).reshape(s, 4 * h_n)
        blocks = blocks.reshape(*e.shape[:-1], 4, h_n)  # [..., seat, seen position, H]
        h1 = (g @ w[:, 4 * s :].T + self.head1.bias).unsqueeze(-2)  # [..., 1, H]
        for j in range(4):
            h1 = h1 + torch.roll(blocks[..., j, :], shifts=-j, dims=-2)
        h = torch.relu(self.head2(torch.relu(h1)))
        v = self.out(h).squeeze(-1)
        return v - v.mean(-1, keepdim=True)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Values of a batch of ``table_rows`` arrays (as tensors) -> ``float[B, 4]``."""
        x = seat_inputs(batch)
        if not self.config.planes:
            x = torch.cat([torch.zeros_like(x[..., :81]), x[..., 81:]], dim=-1)
        pre = self.seat_pre(x, batch["lineup"])
        return self.head_values(pre, global_inputs(batch))

    def counterfactual_values(
        self,
        batch: dict[str, torch.Tensor],
        cf_feats: torch.Tensor,
        drawer: torch.Tensor,
        drawn: torch.Tensor,
        slots: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Values ``float[E, 27, 4]`` of each event's state had its drawer drawn tile ``t``.

        Args:
            batch: the ``E`` events' states as they happened (post-draw).
            cf_feats: ``float[E, 27, 4, NF]``: the ``luck_features`` of each counterfactual.
            drawer: ``int[E]``: the seat that drew.
            drawn: ``int[E]``: the tile it drew.
            slots: ``bool[E, 27]``: the counterfactuals to evaluate (tiles that were in the
                wall); the others are left 0. None: all 27.

        Slot ``drawn`` is the state that happened.
        """
        e_n = drawer.shape[0]
        dev = drawer.device
        if slots is None:
            slots = torch.ones((e_n, 27), dtype=torch.bool, device=dev)
        ev, t = torch.nonzero(slots, as_tuple=True)  # the (event, tile) pairs to evaluate
        x = seat_inputs(batch)  # [E, 4, SEAT_IN]
        w = self.seat1.weight  # [S, SEAT_IN + embed]
        if not self.config.planes:
            w = torch.cat([torch.zeros_like(w[:, :81]), w[:, 81:]], dim=1)
        emb = self.embed(batch["lineup"].long())
        shared = x[..., :81] @ w[:, :81].T + x[..., 81 + NF :] @ w[:, 81 + NF : SEAT_IN].T
        shared = shared + emb @ w[:, SEAT_IN:].T + self.seat1.bias  # [E, 4, S]
        pre = shared[ev] + cf_feats[ev, t].float() @ w[:, 81 : 81 + NF].T  # [P, 4, S]
        col = w[:, :27].T / 4.0  # the drawer's concealed count of tile t: [27, S]
        d = drawer.long()[ev]
        dr = drawn.long()[ev]
        pairs = torch.arange(len(ev), device=dev)
        pre[pairs, d] += col[t] - col[dr]
        g = global_inputs(batch)[ev]  # [P, GLOBAL_IN]: the wall after the draw that happened
        g[pairs, t] -= 0.25  # tile t drawn instead ...
        g[pairs, dr] += 0.25  # ... of the drawn one
        out = torch.zeros((e_n, 27, 4), dtype=pre.dtype, device=dev)
        out[ev, t] = self.head_values(pre, g)
        return out
