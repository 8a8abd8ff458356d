"""The belief heads: one table that the network, the model, training, baselines and report read.

Each ``Head`` names one prediction of ``BeliefModel.predict`` for the three
opponents in relative order (next, opposite, previous), its shape per
observation, the dataset column its label comes from
(``sichuan_env.train.data.dataset``, i.e. ``sichuan_env.engine.labels``), how
the label derives from that column, which cells the training loss reads and
which the report scores, and the loss:

| head | shape | label | loss cells | scored cells |
| --- | --- | --- | --- | --- |
| tenpai | [3] | ``tenpai`` | opponents not yet won | the same |
| waits | [3, 27] | ``waits > 0`` (given tenpai) | the 27 tiles of tenpai opponents | the same |
| hand | [3, 27] | ``hand > 0`` | the 27 tiles of opponents not yet won | the same |
| deal_in | [27] | any opponent's ``deal_in > 0`` | own-turn decisions, every tile | legal discards |

Adding a head is one ``Head`` line in ``HEADS`` (and its label column in the
dataset): the network grows an output (a per-opponent scalar for shape
``(3,)``, a tile channel per opponent for ``(3, 27)``, one for ``(27,)``),
and training, evaluation, baselines (if any) and the report follow. A
checkpoint stores the heads it was trained with (``BeliefConfig.heads``);
checkpoints that predate the field hold ``FIRST_HEADS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from sichuan_env.engine.actions import DISCARD

__all__ = ["FIRST_HEADS", "HEADS", "LABELS", "LOSSES", "NAMES", "SCOPES", "SHAPES", "Head",
           "get", "legal_discards", "select", "targets"]  # fmt: skip

SCOPES: dict[str, str] = {
    "active": "opponents not yet won (the dataset's active[3])",
    "tenpai": "tenpai opponents (the dataset's tenpai[3])",
    "own_turn": "own-turn decisions (some discard is legal), every tile",
    "legal": "own-turn decisions, each legal discard tile",
}
"""Which cells of a head are read, by name; a per-opponent scope covers all 27 tiles of a
tile head."""
LABELS: dict[str, str] = {
    "nonzero": "the column > 0, in the head's shape",
    "any_opponent": "any opponent's column > 0: a [3, 27] column gives a [27] label",
}
"""How a head's label derives from its dataset column."""
LOSSES = ("bce",)
"""Loss kinds: ``bce`` is the masked mean binary cross-entropy on the logits."""
SHAPES = ((3,), (3, 27), (27,))
"""Head shapes: a probability per opponent, per opponent and tile, or per tile."""


@dataclass(frozen=True)
class Head:
    """One belief prediction (see the module table).

    Attributes:
        name: the key in ``predict``'s dict, the report and the metrics (``val_auc_<name>``).
        shape: per observation, one of ``SHAPES``.
        column: the dataset column holding its label.
        label: how the label derives from the column (``LABELS``).
        scope: the cells the training loss reads (``SCOPES``).
        scored: the cells the report and the validation AUC score (``SCOPES``).
        loss: the loss kind (``LOSSES``).
        top1: also report the top-1 accuracy (per opponent in scope, the most probable tile
            is a label); shape ``(3, 27)`` with a per-opponent ``scored`` scope only.
        doc: what the probability means.
    """

    name: str
    shape: tuple[int, ...]
    column: str
    label: str
    scope: str
    scored: str
    loss: str = "bce"
    top1: bool = False
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a head name must be an identifier, got {self.name!r}")
        if self.shape not in SHAPES:
            raise ValueError(f"head {self.name}: shape must be one of {SHAPES}, got {self.shape}")
        if self.label not in LABELS:
            raise ValueError(f"head {self.name}: label must be one of {sorted(LABELS)}")
        for field in ("scope", "scored"):
            if getattr(self, field) not in SCOPES:
                raise ValueError(f"head {self.name}: {field} must be one of {sorted(SCOPES)}")
        if self.loss not in LOSSES:
            raise ValueError(f"head {self.name}: loss must be one of {LOSSES}")
        if self.label == "any_opponent" and self.shape != (27,):
            raise ValueError(f"head {self.name}: an any_opponent label has shape (27,)")
        for field in ("scope", "scored"):
            scope = getattr(self, field)
            if scope in ("active", "tenpai") and self.shape[0] != 3:
                raise ValueError(f"head {self.name}: a per-opponent {field} needs 3 opponents")
            if scope == "legal" and not self.per_tile:
                raise ValueError(f"head {self.name}: a per-tile {field} needs a tile head")
        if self.top1 and (self.shape != (3, 27) or self.scored not in ("active", "tenpai")):
            raise ValueError(f"head {self.name}: top1 needs shape (3, 27), scored per opponent")

    @property
    def per_tile(self) -> bool:
        """Whether the network's per-tile layer gives it (else the per-opponent layer)."""
        return self.shape[-1] == 27

    @property
    def width(self) -> int:
        """Its outputs in its layer: tile channels (per-tile) or scalars (per-opponent)."""
        size = int(np.prod(self.shape))
        return size // 27 if self.per_tile else size

    def label_of(self, column: np.ndarray) -> np.ndarray:
        """``bool[N, *shape]``: the label from the dataset column ``column`` (``[N, ...]``).

        Raises:
            ValueError: a column of the wrong shape.
        """
        col = np.asarray(column)
        want = (3, 27) if self.label == "any_opponent" else self.shape
        if col.shape[1:] != want:
            raise ValueError(f"head {self.name}: column {self.column} must be [N, {want}]")
        if self.label == "any_opponent":
            return np.asarray((col > 0).any(axis=1))  # (numpy types any(axis=1) as maybe a scalar)
        return col > 0

    def mask_of(self, batch: Mapping[str, np.ndarray], scored: bool = True) -> np.ndarray:
        """``bool[N, *shape]``: the cells the report scores (``scored``) or the loss reads.

        Args:
            batch: ``active`` and ``tenpai`` ``[N, 3]`` and ``legal`` ``bool[N, 27]``
                (``legal_discards``).
            scored: the report's cells (``scored``) rather than the loss's (``scope``).
        """
        scope = self.scored if scored else self.scope
        n = len(batch["legal"])
        if scope == "own_turn":  # per row
            cells = np.asarray(batch["legal"], dtype=bool).any(axis=1).reshape(n, 1, 1)
        elif scope == "legal":  # per tile
            cells = np.asarray(batch["legal"], dtype=bool).reshape(n, 1, 27)
        else:  # per opponent
            cells = np.asarray(batch[scope], dtype=bool).reshape(n, 3, 1)
        if len(self.shape) == 1:
            cells = cells[:, :, 0] if self.shape == (3,) else cells[:, 0, :]
        return np.broadcast_to(cells, (n, *self.shape))


HEADS: tuple[Head, ...] = (
    Head("tenpai", (3,), "tenpai", "nonzero", "active", "active",
         doc="P(the opponent is tenpai); an opponent who has won is never tenpai"),
    Head("waits", (3, 27), "waits", "nonzero", "tenpai", "tenpai", top1=True,
         doc="P(tile t is one of its waits | it is tenpai); times tenpai: unconditional"),
    Head("hand", (3, 27), "hand", "nonzero", "active", "active",
         doc="P(it holds at least one concealed copy of t)"),
    Head("deal_in", (27,), "deal_in", "any_opponent", "own_turn", "legal",
         doc="P(discarding t now pays some opponent)"),
)  # fmt: skip
"""Every belief head, in the order of the network's outputs and of ``predict``'s dict."""
NAMES: tuple[str, ...] = tuple(h.name for h in HEADS)
"""The heads' names, in table order."""
FIRST_HEADS: tuple[str, ...] = ("tenpai", "waits", "hand", "deal_in")
"""The heads of checkpoints written before ``BeliefConfig.heads`` existed."""
_BY_NAME = {h.name: h for h in HEADS}
if len(_BY_NAME) != len(HEADS):
    raise ValueError("belief head names must be unique")


def get(name: str) -> Head:
    """The head called ``name``.

    Raises:
        ValueError: no such head.
    """
    if name not in _BY_NAME:
        raise ValueError(f"unknown belief head {name!r}; known: {list(NAMES)}")
    return _BY_NAME[name]


def select(names: Iterable[str]) -> tuple[Head, ...]:
    """The heads named in ``names``, in table order.

    Raises:
        ValueError: an unknown or repeated name.
    """
    names = list(names)
    if len(set(names)) != len(names):
        raise ValueError(f"belief heads are repeated: {names}")
    wanted = {get(n).name for n in names}
    return tuple(h for h in HEADS if h.name in wanted)


def legal_discards(mask: np.ndarray) -> np.ndarray:
    """``bool[N, 27]``: the legal discard tiles of legal masks ``int8[N, 88]``."""
    return np.asarray(mask)[:, DISCARD : DISCARD + 27] == 1


def targets(
    batch: Mapping[str, np.ndarray], heads: Iterable[Head] = HEADS, scored: bool = True
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{head: (label, cells)}`` boolean arrays in the heads' shapes, for a batch of rows.

    Args:
        batch: a decoded dataset batch (``sichuan_env.train.data.dataset.decode_batch``):
            each head's column, ``active``, ``tenpai`` and ``legal`` (``legal_discards``).
        heads: the heads wanted.
        scored: the report's cells; ``False``: the training loss's cells.
    """
    return {h.name: (h.label_of(batch[h.column]), h.mask_of(batch, scored)) for h in heads}
