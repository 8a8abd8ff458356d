"""The luck-adjusted estimate's own variance as a loss of the whole-table value ``V``.

The adjusted points of a seat in a hand are its points less the corrections
``c_t = V(what happened) - E_draw V(what could have happened)`` at each draw
(``sichuan_env.agents.eval.table_value``). Any ``V`` keeps the estimate unbiased;
its variance is what ``V`` decides, and that variance is differentiable in ``V``'s
weights through all 27 counterfactual draws of every event:

- ``residuals``: per hand and seat, ``points - V(deal) - sum_t c_t`` (the telescoped
  TD errors of ``V`` between draws, zero for the exact value of deterministic play),
  or without ``V(deal)``, the adjusted points less the deal's correction;
- ``wall_sums``: a duplicate match scores each agent by its mean over a wall's four
  rotations, in which the deal's correction cancels; the sums of the draw-only
  residuals of each lineup position over the rotations are what an evaluation's
  interval is made of;
- ``score``: held-out figures of both, and ``wall_ratio``, the adjusted per-wall
  standard deviation over the plain one (what ``sichuan-eval`` reports as the CI
  ratio, before its control-variate coefficient), over a data folder's records.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.eval.luck_events import Events, extract
from sichuan_env.agents.eval.table_rows import UNKNOWN, seat_ids
from sichuan_env.agents.eval.table_value import TableModel, _tensors

from sichuan_env.rules.config import RuleConfig

Block = tuple[list[dict], np.ndarray, int, np.ndarray]
"""One block's ``(records, lineup ids int8[n, 4], block number, slots int64[n])``."""


def load_block(path: Path) -> Block:
    """One ``records/block-NNNNN.json.gz`` of ``table_value.data --records``, checked.

    The hands come back in slot order, so that a wall's four rotations are neighbours.

    Raises:
        ValueError: a damaged, altered or foreign file, naming it (the records
            themselves are checked again when they are replayed).
    """
    what = f"table-value records {path}"
    try:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        block = int(path.name[len("block-") : -len(".json.gz")])
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        raise ValueError(f"{what} cannot be read ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(doc, dict) or not {"lineup", "slots", "records"} <= set(doc):
        raise ValueError(f"{what} is not a block of records (lineup, slots, records)")
    lineup, slots, records = doc["lineup"], doc["slots"], doc["records"]
    if not (
        isinstance(lineup, list) and len(lineup) == 4 and all(isinstance(x, str) for x in lineup)
    ):
        raise ValueError(f"{what}: lineup must be 4 agent names")
    if not (isinstance(slots, list) and isinstance(records, list) and len(slots) == len(records)):
        raise ValueError(f"{what}: slots and records must be lists of one length")
    if not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 30 for s in slots):
        raise ValueError(f"{what}: slots must be integers 4 * wall + rotation")
    if len(set(slots)) != len(slots) or not all(isinstance(r, dict) for r in records):
        raise ValueError(f"{what}: a slot twice, or a record that is not an object")
    order = np.argsort(np.asarray(slots, dtype=np.int64), kind="stable")  # whole walls in a row
    slot = np.asarray(slots, dtype=np.int64)[order]
    records = [records[i] for i in order]
    ids = (
        np.stack([seat_ids(lineup, int(s) % 4) for s in slot])
        if len(slot)
        else np.zeros((0, 4), np.int8)
    )
    return records, ids, block, slot


def load_blocks(folder: Path) -> list[Block]:
    """Every block of a data folder's ``records/``, in block order (at least 2)."""
    paths = sorted((folder / "records").glob("block-*.json.gz"))
    if len(paths) < 2:
        raise ValueError(
            f"{folder / 'records'} holds {len(paths)} blocks of records; the refit needs 2 or "
            "more (make them with python -m sichuan_env.train.table_value.data --records)"
        )
    return [load_block(p) for p in paths]


def residuals(model: TableModel, ev: Events, lineups: np.ndarray, *, deal: bool = True,
              drop: float = 0.0, gen: torch.Generator | None = None) -> torch.Tensor:  # fmt: skip
    """``float[H, 4]``: points - V(deal) - the draw corrections, differentiable in ``model.net``.

    Args:
        model: the value model (its ``net`` in train or eval mode, as the caller wants).
        ev: replayed hands (``luck_events.extract``).
        lineups: ``int8[H, 4]``: each hand's policy ids (``table_rows.seat_ids``).
        deal: subtract ``V(deal)`` (lineup-aware); False: points less the draw corrections.
        drop: the chance each seat's policy id is replaced by ``unknown``.
        gen: the generator of those replacements.
    """
    net, dev = model.net, model.device
    h = ev.final.shape[0]
    ids = torch.from_numpy(lineups.astype(np.int64))
    if drop:
        ids = torch.where(torch.rand(ids.shape, generator=gen) < drop, UNKNOWN, ids)
    hand = np.repeat(np.arange(h), ev.n_events)
    event = np.concatenate([np.arange(n) for n in ev.n_events]) if h else np.zeros(0, np.int64)
    rows = {
        "tiles": ev.tiles[hand, event], "wallc": ev.wallc[hand, event],
        "voids": ev.voids[hand, event], "so_far": ev.scores_at[hand, event].astype(np.int32),
        "lineup": ids.numpy()[hand].astype(np.int8), "deal": event == 0,
    }  # fmt: skip
    final = torch.from_numpy(ev.final.astype(np.float32)).to(dev)
    if deal:
        d0 = np.flatnonzero(event == 0)
        deal_rows = {k: v[d0] for k, v in rows.items()}
        deal_rows["feats"] = ev.feats[hand[d0], 0, 0]
        final = final - net(_tensors(deal_rows, dev))
    draws = np.flatnonzero(event > 0)
    if draws.size == 0:
        return final
    hi, ei = hand[draws], event[draws]
    batch = {k: v[draws] for k, v in rows.items()}
    batch["feats"] = ev.feats[hi, ei, ev.actual[hi, ei]]
    probs = torch.from_numpy(ev.probs[hi, ei].astype(np.float32)).to(dev)
    actual = torch.from_numpy(ev.actual[hi, ei]).to(dev)
    vals = net.counterfactual_values(
        _tensors(batch, dev), torch.from_numpy(ev.feats[hi, ei]).to(dev),
        torch.from_numpy(ev.drawer[hi, ei]).to(dev), actual, probs > 0,
    )  # fmt: skip
    p = probs / probs.sum(1, keepdim=True)
    corr = vals[torch.arange(draws.size), actual] - (p.unsqueeze(-1) * vals).sum(1)
    total = torch.zeros((h, 4), device=dev).index_add(0, torch.from_numpy(hi).to(dev), corr)
    return final - total


def wall_sums(res: torch.Tensor, slots: np.ndarray) -> torch.Tensor:
    """``float[W, 4]``: per wall, each lineup position's ``res`` summed over the rotations.

    Hand ``i`` is wall ``slots[i] // 4`` in rotation ``r = slots[i] % 4``, where seat
    ``s`` plays lineup position ``(s + r) % 4`` (``evaluate``); walls missing a
    rotation are left out.
    """
    walls, rot = slots // 4, slots % 4
    uniq, inv = np.unique(walls, return_inverse=True)
    full = np.bincount(inv, minlength=len(uniq)) == 4
    pos = (np.arange(4)[None, :] + rot[:, None]) % 4
    flat = torch.from_numpy((inv[:, None] * 4 + pos).reshape(-1)).to(res.device)
    out = torch.zeros(len(uniq) * 4, device=res.device, dtype=res.dtype)
    out = out.index_add(0, flat, res.reshape(-1)).reshape(-1, 4)
    return out[torch.from_numpy(full).to(res.device)]


def wall_chunks(blocks: list[Block], walls: int, rng: np.random.Generator) -> Iterator[tuple]:
    """Chunks of ``walls`` whole walls of one block, in ``rng``'s order: ``(records, ids, slots)``."""
    items = []
    for recs, ids, _, slots in blocks:
        w = slots // 4
        order = np.argsort(w, kind="stable")
        uw = np.unique(w)
        for i in range(0, len(uw), walls):
            sel = order[np.isin(w[order], uw[i : i + walls])]
            items.append(([recs[j] for j in sel], ids[sel], slots[sel]))
    for j in rng.permutation(len(items)):
        yield items[j]


def hand_chunks(blocks: list[Block], size: int, rng: np.random.Generator) -> Iterator[tuple]:
    """Chunks of ``size`` hands drawn across blocks, in ``rng``'s order: ``(records, ids, None)``."""
    items = [(r, ids[i]) for recs, ids, _, _ in blocks for i, r in enumerate(recs)]
    order = rng.permutation(len(items))
    for i in range(0, len(order), size):
        sel = [items[j] for j in order[i : i + size]]
        yield [r for r, _ in sel], np.stack([x for _, x in sel]), None


def loss_of(model: TableModel, objective: str, chunk: tuple, rules: RuleConfig, drop: float,
            gen: torch.Generator) -> torch.Tensor:  # fmt: skip
    """The training loss of one chunk: ``hand`` (mean squared residual) or ``wall``.

    ``wall``: the mean squared deviation of each lineup position's per-wall mean of
    draw-only residuals from its mean over the chunk (one block: one lineup).
    """
    recs, ids, slots = chunk
    ev = extract(recs, rules)
    if objective == "hand":
        return (residuals(model, ev, ids, drop=drop, gen=gen) ** 2).mean()
    s = wall_sums(residuals(model, ev, ids, deal=False, drop=drop, gen=gen), slots) / 4
    return ((s - s.mean(0).detach()) ** 2).mean()


@torch.no_grad()
def score(model: TableModel, blocks: list[Block], rules: RuleConfig, batch: int = 64) -> dict:
    """Held-out figures over ``blocks`` (whole blocks: each one lineup).

    ``hand``: the mean squared residual (``hand_unknown``: every policy unknown),
    ``points``: the mean squared points; ``wall_adjusted`` / ``wall_plain``: the mean
    squared deviation of each lineup position's per-wall mean from its block mean,
    adjusted (draw corrections only: the deal's cancels) and plain; ``wall_ratio`` the
    square root of their ratio.
    """
    tot = {"hand": 0.0, "hand_unknown": 0.0, "points": 0.0}
    n = 0
    dev: dict[str, list[float]] = {"wall_adjusted": [], "wall_plain": []}
    for recs, ids, _, slots in blocks:
        parts: dict[str, list[torch.Tensor]] = {"wall_adjusted": [], "wall_plain": []}
        for i in range(0, len(recs), batch):
            ev = extract(recs[i : i + batch], rules)
            lid = ids[i : i + batch]
            tot["hand"] += float((residuals(model, ev, lid) ** 2).sum())
            tot["hand_unknown"] += float((residuals(model, ev, np.zeros_like(lid)) ** 2).sum())
            tot["points"] += float((ev.final.astype(np.float64) ** 2).sum())
            n += ev.final.size
            draw_only = residuals(model, ev, lid, deal=False).cpu()
            parts["wall_adjusted"].append(wall_sums(draw_only, slots[i : i + batch]) / 4)
            plain = torch.from_numpy(ev.final.astype(np.float32))
            parts["wall_plain"].append(wall_sums(plain, slots[i : i + batch]) / 4)
        for key, ps in parts.items():
            s = torch.cat(ps).double()
            dev[key].extend(((s - s.mean(0)) ** 2).reshape(-1).tolist())
    out = {k: v / max(n, 1) for k, v in tot.items()}
    out.update({k: float(np.mean(v)) if v else float("nan") for k, v in dev.items()})
    plain = out["wall_plain"]
    out["wall_ratio"] = float(np.sqrt(out["wall_adjusted"] / plain)) if plain > 0 else float("nan")
    return out


@torch.no_grad()
def deal_baseline(model: TableModel, blocks: list[Block], rules: RuleConfig) -> list[float]:
    """Mean value of the deals (every policy unknown) by seat relative to the dealer.

    The deal's correction of ``TableModel`` is the deal's value less this baseline; a
    refit ``V`` needs its own (``fit.deal_baseline`` computes it from data shards).
    """
    from sichuan_env.agents.eval.luck_features import F_DEALER

    sums, counts = np.zeros(4), np.zeros(4)
    for recs, _, _, _ in blocks:
        for i in range(0, len(recs), 256):
            ev = extract(recs[i : i + 256], rules)
            h = ev.final.shape[0]
            rows = {
                "tiles": ev.tiles[:, 0], "wallc": ev.wallc[:, 0], "voids": ev.voids[:, 0],
                "so_far": ev.scores_at[:, 0].astype(np.int32), "feats": ev.feats[:, 0, 0],
                "lineup": np.zeros((h, 4), np.int8), "deal": np.ones(h, bool),
            }  # fmt: skip
            v = model.net(_tensors(rows, model.device)).double().cpu().numpy()
            dealer = rows["feats"][:, :, F_DEALER].astype(np.float32).argmax(axis=1)
            rel = (np.arange(4)[None, :] - dealer[:, None]) % 4
            for r in range(4):
                sums[r] += v[rel == r].sum()
                counts[r] += (rel == r).sum()
    out = sums / np.maximum(counts, 1)
    return [float(x) for x in out - out.mean()]
