"""Cross-fitted fine-tuning of the whole-table value model on a match's own hands.

For a lineup the shipped model does not know (a checkpoint path, a plugin, a new
network), ``cross_fitted_corrections`` splits the match's walls in two halves, fine-tunes
a copy of ``V`` on the states of one half (the points still to come as targets), and
computes the corrections of the *other* half with it, and the other way round. A
half's corrections then come from a value function that never saw its hands: at every
draw the correction still has zero mean given everything before the draw, so the
adjusted estimate stays unbiased, while ``V`` has learned how this lineup plays. Both
halves hold whole walls (all four rotations), so the deal's corrections still cancel.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.eval.luck import Corrections
from sichuan_env.agents.eval.luck_events import CHUNK, extract
from sichuan_env.agents.eval.table_rows import UNKNOWN, rows_of
from sichuan_env.agents.eval.table_value import TableModel

MIN_WALLS = 4
"""Walls a match needs for cross-fitting (two in each half)."""


def _rows(model: TableModel, records: Sequence[Any], lineups: np.ndarray) -> dict:
    parts = []
    for first in range(0, len(records), CHUNK):
        chunk = records[first : first + CHUNK]
        ev = extract(chunk, model.rules, first=first)
        parts.append(rows_of(ev, lineups[first : first + len(chunk)]))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def fine_tune(
    model: TableModel, rows: dict, epochs: int, lr: float = 3e-4, seed: int = 0,
    batch: int = 2048, lineup_dropout: float = 0.3,
) -> TableModel:  # fmt: skip
    """A copy of ``model`` trained ``epochs`` passes over ``rows`` (mean squared error)."""
    net = copy.deepcopy(model.net).train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    dev = model.device
    data = {k: torch.from_numpy(np.ascontiguousarray(v)).to(dev) for k, v in rows.items()}
    n = len(rows["y"])
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, batch):
            idx = perm[i : i + batch].to(dev)
            b = {k: v[idx] for k, v in data.items()}
            drop = (torch.rand((len(idx), 4), generator=gen) < lineup_dropout).to(dev)
            b["lineup"] = torch.where(drop, UNKNOWN, b["lineup"].long())
            loss = ((net(b) - b["y"]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    out = copy.copy(model)
    out.net = net.eval()
    return out


def cross_fitted_corrections(
    model: TableModel,
    records: Sequence[tuple[int, int, dict]],
    lineups: np.ndarray,
    epochs: int = 2,
    seed: int = 0,
    progress: Callable[[int], Any] | None = None,
) -> Corrections:
    """The corrections of a duplicate match's ``records`` (``(wall, rotation, record)``).

    Args:
        model: the starting ``V`` (the shipped model).
        records: the match, every wall under its four rotations.
        lineups: ``int8[len(records), 4]``: each hand's policy ids (``adjust.lineup_ids``).
        epochs: fine-tuning passes over a half's states.
        seed: seeds the halves' fine-tuning.
        progress: called with the number of hands whose corrections are done.

    Raises:
        ValueError: fewer than ``MIN_WALLS`` walls, or what ``TableModel.corrections`` raises.
    """
    walls = np.array([w for w, _, _ in records], dtype=np.int64)
    if len(np.unique(walls)) < MIN_WALLS:
        raise ValueError(f"cross-fitting needs at least {MIN_WALLS} walls")
    recs = [r for _, _, r in records]
    half = (walls % 2).astype(bool)
    deal = np.zeros((len(recs), 4))
    draw = np.zeros((len(recs), 4))
    for side in (False, True):
        train = np.flatnonzero(half != side)
        test = np.flatnonzero(half == side)
        tuned = fine_tune(model, _rows(model, [recs[i] for i in train], lineups[train]), epochs,
                          seed=seed * 2 + int(side))  # fmt: skip
        c = tuned.corrections([recs[i] for i in test], lineups[test], progress=progress)
        deal[test], draw[test] = c.deal, c.draw
    return Corrections(deal=deal, draw=draw)
