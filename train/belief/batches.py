"""Mini-batches for belief training: decision shards as compact arrays, in rows or in sequences.

``load_shard`` reads a decisions shard (``sichuan_env.train.data.dataset``) into
compact arrays: the packed observations (unpacked per mini-batch), each head's
label (``y:<head>``, ``sichuan_env.agents.belief.heads``) and what the heads'
scopes read (``active``, ``tenpai``, ``legal``); with the folder's event table,
also each row's (folder, hand, seat) ``key`` and the number of tokens it has
seen (``end``).

Two ways to batch (``batch_indices``): rows in a seeded permutation (the
planes-only network), or whole (hand, seat) sequences (a sequence network:
the GRU is causal, so one pass over a seat's tokens serves every decision of
that seat in the hand, each read at its own offset). ``take`` turns a batch
into tensors, with each head's label (``y:<head>``), loss cells (``m:<head>``)
and scored cells (``s:<head>``, numpy).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.belief.heads import Head, legal_discards
from sichuan_env.agents.belief.net import BeliefNet
from sichuan_env.train.data.dataset import LABEL_SHAPES, EventTable, read_shard

MAX_FOLDERS = 64
"""Dataset folders one run may read (the folder is part of a row's sequence key)."""


def load_shard(
    path: Path, heads: Sequence[Head], events: EventTable | None = None, folder: int = 0
) -> dict[str, np.ndarray]:
    """A decisions shard as compact arrays (see the module docstring).

    Args:
        path: the shard.
        heads: the heads whose labels are read.
        events: the folder's event tokens (a sequence network), or None.
        folder: the folder's index among the run's folders (``< MAX_FOLDERS``).

    Raises:
        ValueError: an unreadable shard, one that does not match its folder's
            ``dataset.json`` (``sichuan_env.train.data.dataset.read_shard``), or a folder
            index out of range.
    """
    if not 0 <= folder < MAX_FOLDERS:
        raise ValueError(f"folder index must be in [0, {MAX_FOLDERS}), got {folder}")
    columns = {h.column for h in heads} | {"active", "tenpai"}
    names = ["game_id", "obs", "mask", *sorted(columns)]
    if events is not None:
        names += ["decision", "seat"]
    table = read_shard(path, names)  # checked against the folder's dataset.json
    n = table.num_rows

    def fixed(name: str) -> np.ndarray:
        flat = table.column(name).combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return flat.reshape(n, *LABEL_SHAPES[name])

    def packed(name: str) -> np.ndarray:
        arr = table.column(name).combine_chunks()
        width = arr.type.byte_width
        return np.frombuffer(arr.buffers()[1], dtype=np.uint8)[: n * width].reshape(n, width)

    mask = np.unpackbits(packed("mask"), axis=1, count=88)
    raw = {name: fixed(name) for name in sorted(columns)}
    out = {
        "game_id": table.column("game_id").to_numpy(),
        "obs": packed("obs").copy(),
        "active": raw["active"].astype(bool),
        "tenpai": raw["tenpai"].astype(bool),
        "legal": legal_discards(mask),
    }
    for h in heads:
        out[f"y:{h.name}"] = h.label_of(raw[h.column])
    if events is not None:
        seat = table.column("seat").to_numpy().astype(np.int64)
        out["key"] = (out["game_id"].astype(np.int64) * 4 + seat) * MAX_FOLDERS + folder
        out["end"] = events.ends(out["game_id"], table.column("decision").to_numpy(), seat)
    return out


def select_rows(data: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``keep`` (a boolean mask or indices) of every array of ``data``."""
    return {k: v[keep] for k, v in data.items()}


def concat_rows(parts: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``load_shard`` arrays of several shards, one after another.

    Raises:
        ValueError: no parts.
    """
    if not parts:
        raise ValueError("no rows to concatenate")
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _groups(d: dict[str, np.ndarray], rows: int, rng: np.random.Generator | None) -> list:
    keys, inv = np.unique(d["key"], return_inverse=True)
    order = np.argsort(inv, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(inv, minlength=len(keys)))]
    per = max(1, round(rows * len(keys) / max(1, len(inv))))
    seqs = rng.permutation(len(keys)) if rng is not None else np.arange(len(keys))
    return [
        np.concatenate([order[bounds[k] : bounds[k + 1]] for k in seqs[lo : lo + per]])
        for lo in range(0, len(keys), per)
    ]


def batch_indices(
    d: dict[str, np.ndarray], size: int, rng: np.random.Generator | None, sequences: bool
) -> list[np.ndarray]:
    """Row index arrays of the mini-batches of ``d``.

    Args:
        d: ``load_shard`` arrays (with ``key`` for ``sequences``).
        size: rows per batch (about, for sequences).
        rng: shuffle with it (rows: full batches only); None: every row in order.
        sequences: batch whole (hand, seat) sequences rather than rows.

    Raises:
        ValueError: ``size < 1``, or ``sequences`` without keys.
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    if sequences:
        if "key" not in d:
            raise ValueError("sequence batches need rows loaded with their events")
        return _groups(d, size, rng)
    n = len(d["game_id"])
    if rng is None:
        return [np.arange(lo, min(n, lo + size)) for lo in range(0, n, size)]
    perm = rng.permutation(n)
    return [perm[lo : lo + size] for lo in range(0, (n // size) * size, size)]


def take(
    d: dict[str, np.ndarray],
    idx: np.ndarray,
    rows: int,
    heads: Sequence[Head],
    events: Sequence[EventTable] | None = None,
) -> dict[str, Any]:
    """Mini-batch ``idx`` of ``load_shard`` arrays as tensors (see the module docstring).

    With ``events`` (one table per folder index), also ``tokens [S, L]`` (each
    (hand, seat) sequence of the batch once), ``ends [B]`` and ``seq [B]`` (row b reads
    the first ``ends[b]`` tokens of sequence ``seq[b]``).
    """
    obs = np.unpackbits(d["obs"][idx], axis=1, count=rows * 27).reshape(len(idx), rows, 27)
    out: dict[str, Any] = {"obs": torch.from_numpy(obs)}
    sources = {k: d[k][idx] for k in ("active", "tenpai", "legal")}
    for h in heads:
        out[f"y:{h.name}"] = torch.from_numpy(d[f"y:{h.name}"][idx])
        out[f"m:{h.name}"] = torch.from_numpy(h.mask_of(sources, False).copy())
        out[f"s:{h.name}"] = h.mask_of(sources, True)
    if events is None:
        return out
    keys, seq = np.unique(d["key"][idx], return_inverse=True)
    ends = d["end"][idx]
    tok = np.zeros((len(keys), int(ends.max())), dtype=np.int64)
    for j, key in enumerate(keys):
        folder, hand_seat = int(key % MAX_FOLDERS), int(key // MAX_FOLDERS)
        t = events[folder].tokens(hand_seat // 4, hand_seat % 4)[: tok.shape[1]]
        tok[j, : len(t)] = t
    out.update(tokens=torch.from_numpy(tok), ends=torch.from_numpy(ends), seq=torch.from_numpy(seq))
    return out


def forward(net: BeliefNet, b: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The network's logits on a ``take`` batch (with its tokens for a sequence network).

    The inputs move to the network's device; the logits stay there.
    """
    dev = next(net.parameters()).device
    if not net.config.seq_hidden:
        return net(b["obs"].to(dev))
    x = {k: b[k].to(dev) for k in ("obs", "tokens", "ends", "seq")}
    return net(x["obs"], tokens=x["tokens"], ends=x["ends"], seq=x["seq"])
