"""Train a belief model: opponents' tenpai, waits, held tiles and deal-in tiles from observation v2.

    python -m sichuan_env.train.belief.train --data $DATA/heur-train --run runs/belief --minutes 40

Reads one or more dataset folders (``sichuan_env.train.data.make_dataset``, observation v2),
one Parquet shard at a time (its packed observations stay packed in memory
and are unpacked per mini-batch), in a seeded order that changes each epoch.
Hands whose ``game_id % --val-every == 0`` (per folder) are held out: the
first ``--val-rows`` of them form the validation set, never trained on. The
loss is the sum over the four heads of the masked mean binary cross-entropy,
masked as ``sichuan_env.train.belief.report`` scores: tenpai and held tiles for
opponents not yet won, waits for tenpai opponents, deal-in at own-turn
decisions (every tile; the report scores the legal discards).

Every ``--eval-every`` steps the run logs the validation losses and AUCs
to ``run/metrics.jsonl``, saves ``run/last.pt`` (+ JSON) and ``run/state.pt``
(optimizer, counters) and, when the validation loss improved, ``run/best.pt``.
``--resume`` continues from there, at the same mini-batch of the same shard.
The run stops after ``--epochs`` epochs or ``--minutes`` minutes; the
learning rate follows a cosine from ``--lr`` to a tenth of it over the
planned epochs. ``--ship PATH`` also writes the best network as float16
(e.g. ``agents/checkpoints/belief.pt``). ``--arch seq`` adds a GRU over the
event tokens and batches whole (hand, seat) sequences (``train/belief_seq.py``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import torch
import torch.nn.functional as F
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents.belief.model import (
    HEADS,
    BeliefConfig,
    BeliefNet,
    load_belief_network,
    save_belief,
)
from sichuan_env.train.belief.report import auc
from sichuan_env.train.common import MetricLog, git_commit, setup
from sichuan_env.train.data.dataset import read_meta, shards

from sichuan_env._cli import run
from sichuan_env.engine.actions import DISCARD


def load_shard(path: Path) -> dict[str, np.ndarray]:
    """A decisions shard as compact arrays: packed obs and the belief targets."""
    cols = ["game_id", "obs", "mask", "tenpai", "waits", "hand", "deal_in", "active"]
    table = pq.read_table(path, columns=cols)
    n = table.num_rows

    def fixed(name: str, shape: tuple[int, ...]) -> np.ndarray:
        flat = table.column(name).combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return flat.reshape(n, *shape)

    def packed(name: str) -> np.ndarray:
        arr = table.column(name).combine_chunks()
        width = arr.type.byte_width
        return np.frombuffer(arr.buffers()[1], dtype=np.uint8)[: n * width].reshape(n, width)

    mask = np.unpackbits(packed("mask"), axis=1, count=88)
    return {
        "game_id": table.column("game_id").to_numpy(),
        "obs": packed("obs").copy(),
        "tenpai": fixed("tenpai", (3,)).astype(bool),
        "active": fixed("active", (3,)).astype(bool),
        "waits": fixed("waits", (3, 27)).astype(bool),
        "hand": fixed("hand", (3, 27)) > 0,
        "deal_in": (fixed("deal_in", (3, 27)) > 0).any(axis=1),
        "legal": mask[:, DISCARD : DISCARD + 27].astype(bool),
    }


def take(data: dict[str, np.ndarray], idx: np.ndarray, rows: int) -> dict[str, torch.Tensor]:
    """Mini-batch ``idx`` of ``load_shard`` arrays as tensors, observations of ``rows`` unpacked."""
    obs = np.unpackbits(data["obs"][idx], axis=1, count=rows * 27).reshape(len(idx), rows, 27)
    out = {"obs": torch.from_numpy(obs)}
    for k in ("tenpai", "active", "waits", "hand", "deal_in", "legal"):
        out[k] = torch.from_numpy(data[k][idx])
    out["own_turn"] = out["legal"].any(dim=1)
    return out


def losses(logits: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Masked mean BCE per head (see the module docstring)."""
    act = b["active"].float()
    specs = {
        "tenpai": (b["tenpai"], act),
        "waits": (b["waits"], b["tenpai"].float()[:, :, None].expand(-1, -1, 27)),
        "hand": (b["hand"], act[:, :, None].expand(-1, -1, 27)),
        "deal_in": (b["deal_in"], b["own_turn"].float()[:, None].expand(-1, 27)),
    }
    out = {}
    for h, (y, m) in specs.items():
        bce = F.binary_cross_entropy_with_logits(logits[h], y.float(), reduction="none")
        out[h] = (bce * m).sum() / m.sum().clamp_min(1.0)
    return out


@torch.no_grad()
def evaluate(
    net: BeliefNet, val: dict[str, np.ndarray], rows: int, batch: int = 2048
) -> dict[str, float]:
    """Validation loss and AUC per head (the report's scored rows)."""
    net.eval()
    ys: dict[str, list] = {h: [] for h in HEADS}
    ps: dict[str, list] = {h: [] for h in HEADS}
    loss = {h: 0.0 for h in HEADS}
    n = len(val["game_id"])
    for lo in range(0, n, batch):
        b = take(val, np.arange(lo, min(n, lo + batch)), rows)
        out = net(b["obs"])
        for h, v in losses(out, b).items():
            loss[h] += float(v) * len(b["obs"]) / n
        act, ten = b["active"], b["tenpai"]
        sel = {"tenpai": act, "waits": ten[:, :, None].expand(-1, -1, 27),
               "hand": act[:, :, None].expand(-1, -1, 27), "deal_in": b["legal"]}  # fmt: skip
        for h in HEADS:
            ys[h].append(b[h][sel[h]].numpy())
            ps[h].append(out[h][sel[h]].numpy())
    net.train()
    res = {f"val_loss_{h}": loss[h] for h in HEADS}
    res["val_loss"] = sum(loss.values())
    for h in HEADS:
        y, p = np.concatenate(ys[h]), np.concatenate(ps[h])
        res[f"val_auc_{h}"] = auc(y, p) if 0 < y.sum() < y.size else float("nan")
    return res


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser."""
    p = argparse.ArgumentParser(prog="python -m sichuan_env.train.belief.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--data", type=Path, nargs="+", required=True, help="dataset folder(s), v2")
    p.add_argument("--run", type=Path, default=Path("runs/belief"), help="run directory")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--minutes", type=float, default=40.0, help="wall-clock budget")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=1e-5)
    p.add_argument("--hidden", type=int, default=BeliefConfig.hidden)
    p.add_argument("--layers", type=int, default=BeliefConfig.layers)
    p.add_argument("--tile-channels", type=int, default=BeliefConfig.tile_channels)
    p.add_argument("--dropout", type=float, default=BeliefConfig.dropout)
    p.add_argument("--tenpai-pool", action="store_true", help="tenpai head reads pooled tiles")
    p.add_argument("--arch", choices=("mlp", "seq"), default="mlp",
                   help="seq: also a GRU over the event tokens (train/belief_seq.py)")  # fmt: skip
    p.add_argument("--seq-hidden", type=int, default=128, help="--arch seq: GRU width (0: none)")
    p.add_argument("--seq-embed", type=int, default=BeliefConfig.seq_embed)
    p.add_argument("--seq-lr-mult", type=float, default=1.0, help="--arch seq: GRU branch's lr x")
    p.add_argument("--init", help="--arch seq: start from this belief checkpoint's weights")
    p.add_argument("--val-every", type=int, default=20, help="hold out game_id %% N == 0")
    p.add_argument("--val-rows", type=int, default=20000)
    p.add_argument("--eval-every", type=int, default=500, help="steps between evaluations")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="continue run/last.pt")
    p.add_argument("--ship", type=Path, help="also write the best network here, float16")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def save_progress(
    run_dir: Path,
    net: BeliefNet,
    opt: torch.optim.Optimizer,
    counters: dict[str, Any],
    meta: dict[str, Any],
    metrics: dict[str, Any],
    ship: Path | None,
) -> None:
    """Save a training run's checkpoint files.

    ``run_dir/last.pt`` always; ``best.pt`` (and the float16 ``ship`` copy) on a
    new best validation loss; the optimizer and counters (``state.pt``) for ``--resume``.
    """
    info = {**meta, "wall_clock_s": round(counters["wall"], 1), "steps": counters["step"],
            "metrics": metrics}  # fmt: skip
    if metrics["val_loss"] < counters["best"]:
        counters["best"] = metrics["val_loss"]
        save_belief(run_dir / "best.pt", net, info)
        if ship:
            save_belief(ship, net, info, dtype="float16")
    save_belief(run_dir / "last.pt", net, info)
    torch.save({"optimizer": opt.state_dict(), "counters": counters}, run_dir / "state.tmp")
    (run_dir / "state.tmp").replace(run_dir / "state.pt")


def _split(data: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[keep] for k, v in data.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the last evaluation."""
    p = build_parser()
    args = p.parse_args(argv)
    for name in ("epochs", "batch", "val_every", "val_rows", "eval_every", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    try:
        metas = [read_meta(d) for d in args.data]
    except ValueError as exc:
        p.error(str(exc))
    if any(m["obs_version"] != 2 for m in metas):
        p.error("every --data folder must hold observation v2 data")
    setup(args.threads, args.seed)
    if args.arch == "seq":
        from sichuan_env.train.belief.seq import train

        return train(args, p, argv)
    if args.init is not None:
        p.error("--init needs --arch seq")
    rows = int(metas[0]["obs_shape"][0])
    files = [(s, d) for d in args.data for s in shards(d)]
    if not files:
        p.error("the --data folders hold no decision shards")
    total_rows = sum(int(m["decisions"]) for m in metas) * (1 - 1 / args.val_every)
    planned = max(1, int(args.epochs * total_rows / args.batch))

    def make_opt(net: BeliefNet) -> torch.optim.Optimizer:
        return torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    run_dir: Path = args.run
    if args.resume:
        try:
            net, _ = load_belief_network(run_dir / "last.pt")
            state = torch.load(run_dir / "state.pt", map_location="cpu", weights_only=True)
            opt = make_opt(net)
            opt.load_state_dict(state["optimizer"])
            counters = dict(state["counters"])
        except (ValueError, OSError, KeyError, TypeError) as exc:
            p.error(f"cannot resume from {run_dir}: {exc}")
        net.train()
    else:
        if (run_dir / "last.pt").exists():
            p.error(f"{run_dir} holds a run already: --resume it or choose another --run")
        try:
            cfg = BeliefConfig(obs_version=2, hidden=args.hidden, layers=args.layers,
                               tile_channels=args.tile_channels, dropout=args.dropout,
                               tenpai_pool=args.tenpai_pool)  # fmt: skip
        except ValueError as exc:
            p.error(str(exc))
        net = BeliefNet(cfg)
        opt = make_opt(net)
        counters = {"step": 0, "epoch": 0, "shard": 0, "batch": 0, "best": math.inf, "wall": 0.0}
    val_parts, n_val = [], 0
    for path, _ in files:
        if n_val >= args.val_rows:
            break
        d = load_shard(path)
        part = _split(d, d["game_id"] % args.val_every == 0)
        val_parts.append(part)
        n_val += len(part["game_id"])
    val = {k: np.concatenate([v[k] for v in val_parts])[: args.val_rows] for k in val_parts[0]}
    log = MetricLog(run_dir / "metrics.jsonl")
    meta = {
        "rules": metas[0]["rules"],
        "command": "python -m sichuan_env.train.belief.train "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": git_commit(),
        "data": [str(d) for d in args.data],
        "seed": args.seed,
    }
    t0 = time.perf_counter() - counters["wall"]
    deadline = time.perf_counter() + 60 * args.minutes
    last: dict[str, Any] = {}

    def checkpoint() -> None:
        nonlocal last
        last = evaluate(net, val, rows)
        counters["wall"] = time.perf_counter() - t0
        last.update(epoch=counters["epoch"], lr=opt.param_groups[0]["lr"], wall_s=counters["wall"])
        log.write(counters["step"], **last)
        save_progress(run_dir, net, opt, counters, meta, last, args.ship)

    columns = (TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[info]}"))  # fmt: skip
    stop = False
    with Progress(*columns, disable=args.quiet) as bar:
        task = bar.add_task("train", total=planned, completed=counters["step"], info="")
        while counters["epoch"] < args.epochs and not stop:
            order = np.random.default_rng([args.seed, counters["epoch"]]).permutation(len(files))
            while counters["shard"] < len(files) and not stop:
                path, _ = files[order[counters["shard"]]]
                d = load_shard(path)
                d = _split(d, d["game_id"] % args.val_every != 0)
                rng = np.random.default_rng([args.seed, counters["epoch"], counters["shard"]])
                perm = rng.permutation(len(d["game_id"]))
                n_batches = len(perm) // args.batch
                while counters["batch"] < n_batches:
                    lo = counters["batch"] * args.batch
                    b = take(d, perm[lo : lo + args.batch], rows)
                    frac = min(1.0, counters["step"] / planned)
                    for g in opt.param_groups:
                        g["lr"] = args.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * frac)))
                    parts = losses(net(b["obs"]), b)
                    loss = torch.stack(list(parts.values())).sum()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    counters["step"] += 1
                    counters["batch"] += 1
                    bar.update(task, advance=1, info=f"loss {loss.item():.4f}")
                    if counters["step"] % args.eval_every == 0:
                        checkpoint()
                        bar.update(task, info=f"val {last['val_loss']:.4f}")
                    if time.perf_counter() > deadline:
                        stop = True
                        break
                if not stop:
                    counters["shard"] += 1
                    counters["batch"] = 0
            if not stop:
                counters["epoch"] += 1
                counters["shard"] = 0
    checkpoint()
    log.close()
    return last


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, "sichuan_env.train.belief.train"))
