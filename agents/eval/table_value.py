"""The whole-table value model for the luck-adjusted estimate, and ``V`` as a library call.

``TableModel`` wraps a trained ``TableValueNet`` (``python -m
sichuan_env.train.table_value.fit``). It offers what ``luck.LuckModel`` offers, so
the tools take either (``corrections(records, lineups=...)``, ``covers``,
``doc``), and ``values(rows)``: ``V`` of a batch of states, on the CPU or a device.

The corrections are AIVAT's, as in ``luck``: at each draw, the value of the state
that happened minus the probability-weighted mean over the states that could have
happened (the drawer holding each tile type still in the wall instead), all 27
evaluated in one batched pass that shares the first layers
(``TableValueNet.counterfactual_values``). The deal's correction is the deal's
value with every seat's policy ``unknown`` minus ``deal_baseline``, so it does not
contain the skill being measured and cancels over a wall's four rotations; from
the first draw on the network is told which policy plays each seat (``lineups``),
which only sharpens the values: any function of the state before a draw gives a
zero-mean correction, so the estimate stays unbiased whatever the lineup input.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.luck import Corrections, load_for
from sichuan_env.agents.eval.luck_events import CHUNK, Events, extract
from sichuan_env.agents.eval.table_net import TableValueConfig, TableValueNet
from sichuan_env.agents.eval.table_rows import ROW_FIELDS, UNKNOWN, VOCAB

from sichuan_env.rules.config import RuleConfig

FORMAT = "sichuan-table-value/1"
"""The ``format`` field of every whole-table value checkpoint's JSON."""
SHIPPED = "table_value"
"""The shipped model: ``agents/checkpoints/table_value.pt``."""
REQUIRED = {
    "format": str, "arch": dict, "obs_version": int, "rules": dict, "command": str,
    "commit": str, "wall_clock_s": (int, float), "created": str, "sha256": str,
    "deal_baseline": list, "vocab": list,
}  # fmt: skip
"""Keys every whole-table value JSON holds, with their JSON types."""
KIND = checkpoint.Kind(FORMAT, REQUIRED, TableValueConfig.from_dict, TableValueNet)
"""Whole-table value checkpoints, read and written by ``sichuan_env.agents.checkpoint``."""
ROWS_PER_PASS = 1024
"""Events per batched pass in ``corrections`` (27 counterfactuals each)."""


def _tensors(rows: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(np.ascontiguousarray(rows[k])).to(device)
            for k in ROW_FIELDS if k != "y" and k in rows}  # fmt: skip


class NonFiniteValueError(ValueError):
    """A value model gave a value that is not a finite number (its weights overflow)."""


class TableModel:
    """A loaded whole-table value model (see the module's text)."""

    def __init__(self, net: TableValueNet, doc: dict[str, Any], device: str = "cpu") -> None:
        self.device = torch.device(device)
        self.net = net.float().eval().to(self.device)
        self.doc = doc
        self.rules = RuleConfig.from_dict(doc["rules"])
        if list(doc["vocab"]) != list(VOCAB):
            raise ValueError("table-value config: its vocab is not this library's VOCAB")
        base = doc["deal_baseline"]
        if len(base) != 4 or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in base
        ):
            raise ValueError("table-value config: deal_baseline must be 4 numbers")
        self.deal_baseline = np.asarray(base, dtype=np.float64)
        if not np.isfinite(self.deal_baseline).all():
            raise ValueError("table-value config: deal_baseline must be finite")

    @classmethod
    def load(cls, spec: str | os.PathLike = SHIPPED, device: str = "cpu") -> TableModel:
        """Load the shipped ``"table_value"`` or a ``.pt`` path (checked like every checkpoint).

        Raises:
            ValueError: any check of ``sichuan_env.agents.checkpoint.load`` fails.
        """
        net, doc = checkpoint.load(spec, KIND)
        assert isinstance(net, TableValueNet)
        return cls(net, doc, device)

    def check_outputs(self) -> None:
        """Raise ``NonFiniteValueError`` unless the values of a probe state are finite.

        A model whose weights pass every load check can still overflow; this finds most
        such models before a match is played (``corrections`` checks every value too).
        """
        probe: dict[str, np.ndarray] = {
            k: np.zeros((2, *shape), dtype=dt) for k, (shape, dt) in ROW_FIELDS.items()
        }
        probe["tiles"][1] = 4
        probe["wallc"][1] = 4
        probe["feats"][1] = 1
        probe["voids"][:] = -1
        self.values(probe)

    def covers(self, rules: RuleConfig) -> bool:
        """Whether the model was trained on ``rules``."""
        return rules == self.rules

    def _finite(self, v: torch.Tensor) -> np.ndarray:
        out = v.detach().to("cpu", torch.float64).numpy()
        if not np.isfinite(out).all():
            raise NonFiniteValueError(
                f"the value model {self.doc.get('sha256', '?')[:12]} gives non-finite values "
                "(its weights overflow); retrain it or pass another --value-model"
            )
        return out

    @torch.no_grad()
    def values(self, rows: dict[str, np.ndarray]) -> np.ndarray:
        """``V``: zero-sum values ``float64[B, 4]`` of ``B`` states given as ``table_rows`` arrays.

        ``rows`` holds ``tiles``, ``wallc``, ``voids``, ``feats``, ``so_far``, ``lineup`` and
        ``deal`` with a leading batch axis (``ROW_FIELDS``); ``lineup`` may be all
        ``UNKNOWN``.

        Raises:
            ValueError: a missing or mis-shaped array, or a non-finite value.
        """
        b = None
        for k, (shape, _) in ROW_FIELDS.items():
            if k == "y":
                continue
            a = rows.get(k)
            if not isinstance(a, np.ndarray) or a.shape[1:] != shape:
                raise ValueError(f"rows[{k!r}] must be an array of shape [B, *{shape}]")
            if b is not None and a.shape[0] != b:
                raise ValueError("the rows' arrays disagree on the batch size")
            b = a.shape[0]
        out = [self._finite(self.net(_tensors({k: v[i : i + ROWS_PER_PASS] for k, v in rows.items()}, self.device)))
               for i in range(0, b or 0, ROWS_PER_PASS)]  # fmt: skip
        return np.concatenate(out) if out else np.zeros((0, 4))

    @torch.no_grad()
    def corrections_of(self, ev: Events, lineups: np.ndarray) -> Corrections:
        """The corrections of the hands of ``ev``; ``lineups`` is ``int8[H, 4]`` vocabulary ids."""
        h = ev.final.shape[0]
        hand = np.repeat(np.arange(h), ev.n_events)
        event = np.concatenate([np.arange(n) for n in ev.n_events]) if h else np.zeros(0, int)
        rows = {
            "tiles": ev.tiles[hand, event], "wallc": ev.wallc[hand, event],
            "voids": ev.voids[hand, event], "so_far": ev.scores_at[hand, event].astype(np.int32),
            "lineup": lineups[hand].astype(np.int8), "deal": event == 0,
        }  # fmt: skip
        deal_rows = {k: v[event == 0] for k, v in rows.items()}
        deal_rows["lineup"] = np.full_like(deal_rows["lineup"], UNKNOWN)
        deal_rows["feats"] = ev.feats[hand[event == 0], 0, 0]
        deal_v = self.values(deal_rows)
        rel = (np.arange(4)[None, :] - ev.dealer[:, None]) % 4
        deal = deal_v - self.deal_baseline[rel]
        draws = np.flatnonzero(event > 0)
        draw = np.zeros((h, 4))
        for i in range(0, draws.size, ROWS_PER_PASS):
            idx = draws[i : i + ROWS_PER_PASS]
            hi, ei = hand[idx], event[idx]
            batch = {k: v[idx] for k, v in rows.items()}
            batch["feats"] = ev.feats[hi, ei, ev.actual[hi, ei]]
            cf = torch.from_numpy(ev.feats[hi, ei]).to(self.device)
            live = torch.from_numpy(ev.probs[hi, ei] > 0).to(self.device)
            vals = self._finite(self.net.counterfactual_values(
                _tensors(batch, self.device), cf,
                torch.from_numpy(ev.drawer[hi, ei]).to(self.device),
                torch.from_numpy(ev.actual[hi, ei]).to(self.device), live,
            ))  # fmt: skip
            p = ev.probs[hi, ei].astype(np.float64)  # [n, 27]
            p /= p.sum(axis=1, keepdims=True)
            expected = (p[..., None] * vals).sum(axis=1)
            happened = vals[np.arange(idx.size), ev.actual[hi, ei]]
            np.add.at(draw, hi, happened - expected)
        return Corrections(deal=deal, draw=draw)

    def corrections(
        self,
        records: Sequence[Any],
        lineups: np.ndarray | None = None,
        progress: Callable[[int], Any] | None = None,
    ) -> Corrections:
        """Per record (finished hands of the model's rules) and seat, the luck removed.

        Args:
            records: game records.
            lineups: ``int8[len(records), 4]``: the ``VOCAB`` id of each hand's seats
                (``table_rows.seat_ids``); None: every seat ``unknown``.
            progress: called with the number of hands done after each chunk.

        Raises:
            ValueError: a record of other rules, one that cannot be replayed, bad
                ``lineups``, or a model that gives non-finite values.
        """
        n = len(records)
        if lineups is None:
            lineups = np.zeros((n, 4), dtype=np.int8)
        lineups = np.asarray(lineups)
        if (
            lineups.shape != (n, 4)
            or lineups.min(initial=0) < 0
            or lineups.max(initial=0) >= len(VOCAB)
        ):
            raise ValueError(f"lineups must be [{n}, 4] ids in 0..{len(VOCAB) - 1}")
        deal = np.zeros((n, 4))
        draw = np.zeros((n, 4))
        for first in range(0, n, CHUNK):
            chunk = records[first : first + CHUNK]
            c = self.corrections_of(
                extract(chunk, self.rules, first=first), lineups[first : first + len(chunk)]
            )
            deal[first : first + len(chunk)] = c.deal
            draw[first : first + len(chunk)] = c.draw
            if progress is not None:
                progress(len(chunk))
        return Corrections(deal=deal, draw=draw)


def is_table_model(spec: str | os.PathLike) -> bool:
    """Whether ``spec`` names a whole-table value checkpoint (else, if anything, a ``luck`` one).

    Decided by the ``format`` of the checkpoint's JSON; a spec that cannot be read is
    left to the loader of the older kind, whose error then says what is wrong.
    """
    try:
        doc = checkpoint.read_json(checkpoint.config_path(checkpoint.resolve(spec)))
    except (ValueError, OSError):
        return False
    return doc.get("format") == FORMAT


def load_table_for(
    rules: RuleConfig, spec: str | os.PathLike | None = SHIPPED, device: str = "cpu"
) -> tuple[Any, str]:
    """``(model, why)``: the value model ``spec`` for ``rules``, or None and a one-line reason.

    A whole-table checkpoint gives a ``TableModel``; the older per-seat model (``"luck"``
    or its ``.pt``) a ``luck.LuckModel``. A damaged file or a model of other rules gives
    None and says why; never raises for those.
    """
    if spec is None or not is_table_model(spec):
        return load_for(rules, spec)

    def load(s: str | os.PathLike) -> TableModel:
        model = TableModel.load(s, device)
        model.check_outputs()
        return model

    return load_for(rules, spec, load, "the whole-table value model")
