"""The belief model's training losses and its validation (loss and AUC per head).

``losses`` scores a ``take`` batch (``sichuan_env.train.belief.batches``) head by
head, masked to each head's loss cells; ``evaluate`` runs the network over the
validation rows (on its device) and reports each head's loss and AUC on the
report's scored cells. ``sichuan_env.train.belief.train`` trains with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from sichuan_env.agents.belief.heads import Head
from sichuan_env.agents.belief.model import BeliefNet
from sichuan_env.agents.eval.metrics import auc
from sichuan_env.train.belief.batches import batch_indices, forward, take
from sichuan_env.train.data.dataset import EventTable


def _bce(logits: torch.Tensor, y: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    bce = F.binary_cross_entropy_with_logits(logits, y.float(), reduction="none")
    m = m.float()
    return (bce * m).sum() / m.sum().clamp_min(1.0)


LOSSES = {"bce": _bce}
"""Each head's loss kind (``Head.loss``): ``(logits, labels, cells) -> scalar``."""


def losses(
    logits: dict[str, torch.Tensor], b: dict[str, Any], heads: tuple[Head, ...]
) -> dict[str, torch.Tensor]:
    """Each head's loss on a ``take`` batch (masked to its loss cells), in table order."""
    return {
        h.name: LOSSES[h.loss](logits[h.name], b[f"y:{h.name}"], b[f"m:{h.name}"]) for h in heads
    }


@torch.no_grad()
def evaluate(
    net: BeliefNet,
    val: dict[str, np.ndarray],
    rows: int,
    events: list[EventTable] | None = None,
    batch: int = 2048,
) -> dict[str, float]:
    """Validation loss and AUC per head (AUC on the report's scored cells).

    Args:
        net: the network (put back in training mode afterwards).
        val: ``load_shard`` arrays of the validation rows.
        rows: observation rows.
        events: the folders' event tables (sequence batches), or None (rows in order).
        batch: rows per batch (about, for sequences).
    """
    net.eval()
    heads = net.config.head_specs
    ys: dict[str, list] = {h.name: [] for h in heads}
    ps: dict[str, list] = {h.name: [] for h in heads}
    loss = {h.name: 0.0 for h in heads}
    n = len(val["game_id"])
    for idx in batch_indices(val, batch, None, events is not None):
        b = take(val, idx, rows, heads, events)
        out = {k: v.float().cpu() for k, v in forward(net, b).items()}  # the net's device
        for h, v in losses(out, b, heads).items():
            loss[h] += float(v) * len(idx) / n
        for h in heads:
            sel = b[f"s:{h.name}"]
            ys[h.name].append(b[f"y:{h.name}"].numpy()[sel])
            ps[h.name].append(out[h.name].numpy()[sel])
    net.train()
    res = {f"val_loss_{h}": v for h, v in loss.items()}
    res["val_loss"] = sum(loss.values())
    for h in loss:
        y, p = np.concatenate(ys[h]), np.concatenate(ps[h])
        res[f"val_auc_{h}"] = auc(y, p) if 0 < y.sum() < y.size else float("nan")
    return res


__all__ = ["LOSSES", "evaluate", "losses"]
