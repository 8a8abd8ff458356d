"""Prototype: fit the whole-table value to the adjusted estimate's own variance.

    python -m research.table_value.variance play --out runs/var-records --blocks 48
    python -m research.table_value.variance fit --records runs/var-records \
        --init agents/checkpoints/table_value.pt --out runs/var-fit/table_value.pt

The luck-adjusted points of a seat in a hand are its points minus the corrections
``c_t = V(what happened) - E_draw V(what could have happened)`` at each draw. Any
``V`` leaves the estimate unbiased; its variance is what ``V`` decides. Telescoped,
``points - V(deal) - sum_t c_t`` is the sum of the TD errors of ``V`` over the
deterministic stretches between draws (with the exact expectation over the next
draw), zero for the exact value of deterministic agents. So this fits ``V`` by
minimising ``(points - V(deal) - sum_t c_t)^2`` over whole hands, back-propagated
through all 27 counterfactual draws of every event.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck_events import Events, extract
from sichuan_env.agents.eval.table_rows import UNKNOWN, seat_ids
from sichuan_env.agents.eval.table_value import TableModel, _tensors
from sichuan_env.train.table_value.data import MIX
from sichuan_env.train.value import lineup_of

from sichuan_env import RuleConfig
from sichuan_env._cli import write_atomic

RULES = RuleConfig.preset("xuezhan")


def play(out: Path, blocks: int, block_walls: int, seed: int, worker: int, workers: int) -> None:
    """Play the missing blocks ``b`` with ``b % workers == worker``: records as JSON (gzip)."""
    out.mkdir(parents=True, exist_ok=True)
    seeds = wall_seeds_of(blocks * block_walls, seed)
    for b in range(worker, blocks, workers):
        path = out / f"block-{b:05d}.json.gz"
        if path.exists():
            continue
        t0 = time.time()
        lineup = lineup_of(MIX, seed, b)
        agents = make_lineup_agents(lineup, seed + 1000 * b)
        played = play_block(lineup, agents, seeds[b * block_walls : (b + 1) * block_walls],
                            RULES, seed, b)  # fmt: skip
        doc = {"lineup": lineup, "slots": [s for s, _ in played], "records": [r for _, r in played]}
        write_atomic(path, gzip.compress(json.dumps(doc).encode()))
        print(f"block {b} {lineup} {time.time() - t0:.0f} s", flush=True)


def load_records(folder: Path) -> list[tuple[list[dict], np.ndarray, int, np.ndarray]]:
    """``[(records, lineups int8[n, 4], block, slots int[n])]`` of every block file."""
    out = []
    for path in sorted(folder.glob("block-*.json.gz")):
        doc = json.loads(gzip.decompress(path.read_bytes()))
        order = np.argsort(doc["slots"], kind="stable")  # a wall's rotations side by side
        slots = np.asarray(doc["slots"])[order]
        ids = np.stack([seat_ids(doc["lineup"], s % 4) for s in slots])
        out.append(([doc["records"][i] for i in order], ids, int(path.name[6:11]), slots))
    return out


def residuals(model: TableModel, ev: Events, lineups: np.ndarray, drop: float = 0.0,
              gen: torch.Generator | None = None, deal: bool = True) -> torch.Tensor:  # fmt: skip
    """``float[H, 4]``: points - V(deal) - sum of draw corrections, differentiable in the net.

    ``deal`` False leaves ``V(deal)`` out: the points less the draw corrections.
    """
    net, dev = model.net, model.device
    h = ev.final.shape[0]
    lineups = torch.from_numpy(lineups.astype(np.int64))
    if drop:
        mask = torch.rand(lineups.shape, generator=gen) < drop
        lineups = torch.where(mask, UNKNOWN, lineups)
    hand = np.repeat(np.arange(h), ev.n_events)
    event = np.concatenate([np.arange(n) for n in ev.n_events])
    rows = {
        "tiles": ev.tiles[hand, event], "wallc": ev.wallc[hand, event],
        "voids": ev.voids[hand, event], "so_far": ev.scores_at[hand, event].astype(np.int32),
        "lineup": lineups.numpy()[hand].astype(np.int8), "deal": event == 0,
    }  # fmt: skip
    d0 = np.flatnonzero(event == 0)
    deal_rows = {k: v[d0] for k, v in rows.items()}
    deal_rows["feats"] = ev.feats[hand[d0], 0, 0]
    v_deal = net(_tensors(deal_rows, dev)) if deal else 0.0  # lineup-aware: the sum's anchor
    draws = np.flatnonzero(event > 0)
    hi, ei = hand[draws], event[draws]
    batch = {k: v[draws] for k, v in rows.items()}
    batch["feats"] = ev.feats[hi, ei, ev.actual[hi, ei]]
    probs = torch.from_numpy(ev.probs[hi, ei].astype(np.float32)).to(dev)
    vals = net.counterfactual_values(
        _tensors(batch, dev), torch.from_numpy(ev.feats[hi, ei]).to(dev),
        torch.from_numpy(ev.drawer[hi, ei]).to(dev), torch.from_numpy(ev.actual[hi, ei]).to(dev),
        probs > 0,
    )  # fmt: skip
    p = probs / probs.sum(1, keepdim=True)
    expected = (p.unsqueeze(-1) * vals).sum(1)
    happened = vals[torch.arange(draws.size), torch.from_numpy(ev.actual[hi, ei])]
    corr = torch.zeros((h, 4), device=dev).index_add(0, torch.from_numpy(hi).to(dev),
                                                      happened - expected)  # fmt: skip
    final = torch.from_numpy(ev.final.astype(np.float32)).to(dev)
    return final - v_deal - corr


def wall_sums(res: torch.Tensor, slots: np.ndarray) -> torch.Tensor:
    """``float[W, 4]``: per wall, each lineup position's residuals summed over the rotations.

    Hand ``i`` is wall ``slots[i] // 4`` in rotation ``r = slots[i] % 4``, where seat
    ``s`` plays lineup position ``(s + r) % 4``; only walls with all four rotations count.
    """
    walls, rot = slots // 4, slots % 4
    uniq, inv = np.unique(walls, return_inverse=True)
    full = np.bincount(inv, minlength=len(uniq)) == 4
    pos = (np.arange(4)[None, :] + rot[:, None]) % 4  # [H, 4] position of each seat
    flat = torch.from_numpy(inv[:, None] * 4 + pos).reshape(-1).to(res.device)
    out = torch.zeros(len(uniq) * 4, device=res.device).index_add(0, flat, res.reshape(-1))
    return out.reshape(-1, 4)[torch.from_numpy(full).to(res.device)]


def wall_chunks(blocks: list, walls: int, rng: np.random.Generator):
    """Shuffled chunks of ``walls`` whole walls of one block: ``(records, lineups, slots)``."""
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


def chunks(blocks: list, size: int, rng: np.random.Generator):
    """Shuffled chunks of ``size`` hands: ``(records, lineups)``."""
    items = [(r, ids[i]) for recs, ids, _, _ in blocks for i, r in enumerate(recs)]
    order = rng.permutation(len(items))
    for i in range(0, len(order), size):
        sel = [items[j] for j in order[i : i + size]]
        yield [r for r, _ in sel], np.stack([x for _, x in sel])


@torch.no_grad()
def score(model: TableModel, blocks: list) -> dict:
    """Mean squared residual and mean squared points over ``blocks`` (every seat unknown too)."""
    tot = {"res": 0.0, "res_unknown": 0.0, "points": 0.0, "n": 0}
    walls: dict[str, list] = {"wall_adjusted": [], "wall_plain": []}
    for recs, ids, _, slots in blocks:
        adj, plain = [], []
        for i in range(0, len(recs), 64):
            ev = extract(recs[i : i + 64], RULES)
            r = residuals(model, ev, ids[i : i + 64])
            ru = residuals(model, ev, np.zeros_like(ids[i : i + 64]))
            tot["res"] += float((r**2).sum())
            tot["res_unknown"] += float((ru**2).sum())
            tot["points"] += float((ev.final.astype(np.float64) ** 2).sum())
            tot["n"] += r.numel()
            rd = residuals(model, ev, ids[i : i + 64], deal=False)
            adj.append(wall_sums(rd, slots[i : i + 64]) / 4)
            fin = torch.from_numpy(ev.final.astype(np.float32))
            plain.append(wall_sums(fin, slots[i : i + 64]) / 4)
        for key, parts in (("wall_adjusted", adj), ("wall_plain", plain)):
            s = torch.cat(parts)
            walls[key].append(((s - s.mean(0)) ** 2).mean().item())
    n = tot.pop("n")
    out = {k: v / n for k, v in tot.items()}
    out.update({k: float(np.mean(v)) for k, v in walls.items()})
    out["wall_ratio"] = float(np.sqrt(out["wall_adjusted"] / out["wall_plain"]))
    return out


def fit(args: argparse.Namespace) -> None:
    """Fine-tune ``--init`` on the variance objective; keeps the best held-out checkpoint."""
    from sichuan_env.agents import checkpoint
    from sichuan_env.agents.eval.table_value import KIND

    torch.set_num_threads(args.threads)
    model = TableModel.load(args.init, args.device)
    stop_at = time.time() + 60 * args.minutes
    blocks = load_records(args.records)
    val = [b for b in blocks if b[2] % args.val_every == 0]
    train = [b for b in blocks if b[2] % args.val_every != 0]
    kept, n = [], 0
    for b in train:
        if n >= args.max_train:
            break
        kept.append(b)
        n += len(b[0])
    train = kept
    print(f"{sum(len(b[0]) for b in train)} training hands, {sum(len(b[0]) for b in val)} held out")
    base = score(model, val)
    print(f"start: held-out {base}", flush=True)
    opt = torch.optim.Adam(model.net.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    best = base["wall_adjusted" if args.objective == "wall" else "res"]
    for epoch in range(args.epochs):
        t0 = time.time()
        model.net.train()
        run = []
        if args.objective == "wall":
            batches = wall_chunks(train, args.chunk // 4, rng)
        else:
            batches = ((r, i, None) for r, i in chunks(train, args.chunk, rng))
        for recs, ids, slots in batches:
            if time.time() > stop_at:
                break
            ev = extract(recs, RULES)
            if args.objective == "wall":
                res = residuals(model, ev, ids, drop=args.lineup_dropout, gen=gen, deal=False)
                s = wall_sums(res, slots) / 4
                loss = ((s - s.mean(0).detach()) ** 2).mean()
            else:
                res = residuals(model, ev, ids, drop=args.lineup_dropout, gen=gen)
                loss = (res**2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            run.append(loss.item())
        model.net.eval()
        s = score(model, val)
        print(f"epoch {epoch + 1}: train {np.mean(run):.3f}, held-out {s}, "
              f"{time.time() - t0:.0f} s", flush=True)  # fmt: skip
        key = "wall_adjusted" if args.objective == "wall" else "res"
        if s[key] < best:
            best = s[key]
            doc = {k: v for k, v in model.doc.items() if k not in ("sha256", "created")}
            doc["command"] = "python -m research.table_value.variance fit " + " ".join(args.argv)
            doc["variance_fit"] = {"epoch": epoch + 1, "held_out": s, "start": base}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            checkpoint.save(args.out, KIND, copy.deepcopy(model.net).cpu(), doc)
            print(f"  saved {args.out}", flush=True)
        if time.time() > stop_at:
            print("time budget spent", flush=True)
            break


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python -m research.table_value.variance")
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("play")
    pp.add_argument("--out", type=Path, required=True)
    pp.add_argument("--blocks", type=int, default=48)
    pp.add_argument("--block-walls", type=int, default=64)
    pp.add_argument("--seed", type=int, default=1234)
    pp.add_argument("--worker", type=int, default=0)
    pp.add_argument("--workers", type=int, default=1)
    pf = sub.add_parser("fit")
    pf.add_argument("--records", type=Path, required=True)
    pf.add_argument("--init", default="agents/checkpoints/table_value.pt")
    pf.add_argument("--out", type=Path, required=True)
    pf.add_argument("--epochs", type=int, default=4)
    pf.add_argument("--lr", type=float, default=1e-4)
    pf.add_argument("--chunk", type=int, default=64, help="hands per step (whole walls: wall)")
    pf.add_argument("--objective", choices=("hand", "wall"), default="hand",
                    help="hand: each hand's residual; wall: the variance of per-wall sums")  # fmt: skip
    pf.add_argument("--lineup-dropout", type=float, default=0.3)
    pf.add_argument("--val-every", type=int, default=8)
    pf.add_argument("--seed", type=int, default=0)
    pf.add_argument("--threads", type=int, default=2)
    pf.add_argument("--device", default="cpu")
    pf.add_argument("--minutes", type=float, default=600.0)
    pf.add_argument("--max-train", type=int, default=10**9, help="training hands at most")
    args = p.parse_args(argv)
    args.argv = argv
    if args.cmd == "play":
        torch.set_num_threads(1)
        play(args.out, args.blocks, args.block_walls, args.seed, args.worker, args.workers)
    else:
        fit(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
