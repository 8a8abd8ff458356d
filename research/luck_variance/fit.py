r"""Fit the per-seat value model to the luck adjustment's variance, draw by draw; resumable.

    python -m research.luck_variance.fit --data runs/lv-data --out runs/lv-fit --epochs 6
    python -m research.luck_variance.fit ... --resume       # after a stop

With deterministic play, a seat's points less their expectation at the deal are
the sum of the draws' martingale increments ``D_k = E[x | draw k] - E[x | before
it]``, and the adjusted points' variance (beyond the deal's) is
``sum_k E[(D_k - c_k)^2]`` for the corrections ``c_k = V(what came) - E_t V(t)``.
The loss ``(c_k - y_k)^2`` over the data's draws (``data.py``: ``y_k`` has the
conditional mean of the points to come) has that sum as its expectation up to a
constant, so its minimiser is the ``V`` whose corrections leave the least
variance (with every hand's draws weighed alike: ``data.py`` keeps as many draws
of a short hand as of a long one). ``sichuan_env.train.value`` instead fits ``V``'s level (the points to
come); this fits its differences across each draw, and nothing else.

Starts from ``--init`` (the shipped ``luck``, or ``scratch``). Every
``--val-every``-th shard is held out; each epoch's held-out loss (and the
reference model's, which ``data.py`` stored) goes to ``metrics.jsonl``. The best
epoch (the start included) is written as ``luck.pt`` + ``luck.json``, a value
model every tool loads (``--value-model``), its ``deal_baseline`` measured on
fresh deals. ``state.pt`` after every epoch; ``--resume`` continues to the
same result (the epoch's order comes from ``(--seed, epoch)``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck import KIND, SHIPPED, ValueConfig, ValueNet
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.train.common import git_commit
from sichuan_env.train.value import MIX, lineup_of

from research.luck_variance.data import RULES
from sichuan_env._cli import write_atomic


def shard_paths(folder: Path) -> list[Path]:
    """``folder/shards/shard-NNNN.npz`` in block order, every block from 0 present.

    The held-out split goes by block number; a missing block would shift it.
    """
    paths = sorted((folder / "shards").glob("shard-*.npz"))
    numbers = [int(p.name[len("shard-") : -len(".npz")]) for p in paths]
    if not paths or numbers != list(range(len(paths))):
        missing = sorted(set(range(max(numbers, default=-1) + 1)) - set(numbers))
        raise ValueError(f"{folder / 'shards'} holds no shards, or misses blocks {missing[:5]}")
    return paths


def load(folder: Path, val_every: int) -> tuple[dict, dict]:
    """``(train, val)``: the shards' arrays, every ``val_every``-th block held out."""
    parts: tuple[dict, dict] = ({}, {})
    for b, path in enumerate(shard_paths(folder)):
        with np.load(path) as d:
            side = parts[1] if b % val_every == 0 else parts[0]
            for k in ("x", "p", "a", "y", "ref"):
                side.setdefault(k, []).append(d[k])
    if not parts[0] or not parts[1]:
        raise ValueError(f"{folder} has too few shards for a training and a held-out part")
    out = tuple({k: np.concatenate(v) for k, v in part.items()} for part in parts)
    for part in out:
        if not all(np.isfinite(part[k]).all() for k in ("x", "p", "y", "ref")):
            raise ValueError(f"the shards in {folder} hold non-finite numbers")
    return out  # type: ignore[return-value]


def corrections(net: ValueNet, x: torch.Tensor, p: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """``float[B, 4]``: each draw's correction, ``V(what came) - sum_t p_t V(t)``."""
    v = net(x.float())  # [B, 27, 4]
    w = p / p.sum(-1, keepdim=True)
    happened = v[torch.arange(len(a)), a.long()]
    return happened - (w[..., None] * v).sum(1)


def val_loss(net: ValueNet, d: dict, batch: int = 4096) -> float:
    """Held-out mean of ``(c - y)^2`` over draws and seats."""
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(d["y"]), batch):
            c = corrections(net, *(torch.from_numpy(d[k][i : i + batch]) for k in ("x", "p", "a")))
            total += float(((c - torch.from_numpy(d["y"][i : i + batch])) ** 2).sum())
    return total / d["y"].size


def deal_baseline(net: ValueNet, seed: int, blocks: int = 4, walls: int = 64) -> list[float]:
    """Mean value of fresh deals (the mix's lineups) by seat relative to the dealer."""
    seeds = wall_seeds_of(blocks * walls, seed + 99991)
    sums, counts = np.zeros(4), np.zeros(4)
    for b in range(blocks):
        lineup = lineup_of(MIX, seed + 99991, b)
        played = play_block(lineup, make_lineup_agents(lineup, seed + b), seeds[b * walls : (b + 1) * walls],
                            RULES, seed, b)  # fmt: skip
        ev = extract([r for _, r in played], RULES)
        with torch.no_grad():
            v = net(torch.from_numpy(ev.feats[:, 0, 0])).numpy().astype(np.float64)
        rel = (np.arange(4)[None, :] - ev.dealer[:, None]) % 4
        for r in range(4):
            sums[r] += v[rel == r].sum()
            counts[r] += (rel == r).sum()
    out = sums / counts
    return [float(t) for t in out - out.mean()]


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.luck_variance.fit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--init", default=SHIPPED, help="a value model to start from, or 'scratch'")
    p.add_argument("--hidden", type=int, default=64, help="with --init scratch")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--val-every", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--baseline-walls",
        type=int,
        default=64,
        help="walls per block (4 blocks) of the deal baseline",
    )
    p.add_argument("--resume", action="store_true")
    args = p.parse_args(argv)
    settings = {k: getattr(args, k) for k in ("init", "hidden", "batch", "lr", "val_every", "seed")}
    settings["data"] = str(args.data)
    settings["shards"] = len(
        list((args.data / "shards").glob("shard-*.npz"))
    )  # a grown folder is other data
    state_path, metrics_path = args.out / "state.pt", args.out / "metrics.jsonl"
    if args.out.exists() and not args.resume:
        p.error(f"--out {args.out} exists; pass --resume to continue it")
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    t0 = time.time()
    train, val = load(args.data, args.val_every)
    if args.init == "scratch":
        net = ValueNet(ValueConfig(args.hidden, args.hidden))
    else:
        net, _ = checkpoint.load(args.init, KIND)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    ref = float(((val["ref"] - val["y"]) ** 2).mean())
    if state_path.exists():
        st = torch.load(state_path, weights_only=True)
        changed = sorted(k for k in settings if st["settings"].get(k) != settings[k])
        if changed:
            p.error(f"--resume with other settings than {state_path}'s: {', '.join(changed)}")
        net.load_state_dict(st["net"])
        kept = [line for line in metrics_path.read_text().splitlines()
                if json.loads(line)["epoch"] <= st["epoch"]]  # fmt: skip
        write_atomic(metrics_path, "".join(line + "\n" for line in kept))  # a row past the state
        opt.load_state_dict(st["opt"])
        epoch, best, best_state, spent = st["epoch"], st["best"], st["best_state"], st["spent"]
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        epoch, best, spent = 0, val_loss(net, val), 0.0
        best_state = {k: t.clone() for k, t in net.state_dict().items()}
        row = {"epoch": 0, "val_loss": best, "reference_val_loss": ref, "train_draws": len(train["y"]),
               "val_draws": len(val["y"])}  # fmt: skip
        write_atomic(metrics_path, json.dumps(row, allow_nan=False) + "\n")
        print(row, flush=True)
    tensors = {k: torch.from_numpy(v) for k, v in train.items()}
    while epoch < args.epochs:
        gen = torch.Generator().manual_seed(args.seed * 1000 + epoch)
        perm = torch.randperm(len(train["y"]), generator=gen)
        net.train()
        start = time.time()
        for i in range(0, len(perm), args.batch):
            idx = perm[i : i + args.batch]
            c = corrections(net, tensors["x"][idx], tensors["p"][idx], tensors["a"][idx])
            loss = ((c - tensors["y"][idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        epoch += 1
        v = val_loss(net, val)
        if not np.isfinite(v):
            p.error(f"epoch {epoch}: the held-out loss is not finite (a diverged fit); state kept")
        spent += time.time() - start
        if v < best:
            best, best_state = v, {k: t.clone() for k, t in net.state_dict().items()}
        row = {"epoch": epoch, "val_loss": v, "reference_val_loss": ref, "seconds": round(spent, 1)}
        with open(metrics_path, "a") as fh:
            fh.write(json.dumps(row, allow_nan=False) + "\n")
        print(row, flush=True)
        st = {"settings": settings, "net": net.state_dict(), "opt": opt.state_dict(), "epoch": epoch,
              "best": best, "best_state": best_state, "spent": spent}  # fmt: skip
        tmp = state_path.with_suffix(".tmp")
        torch.save(st, tmp)
        tmp.replace(state_path)
    net.load_state_dict(best_state)
    net.eval()
    meta = {
        "rules": RULES.to_dict(), "command": "python -m research.luck_variance.fit " + " ".join(sys.argv[1:]),
        "commit": git_commit(), "wall_clock_s": round(time.time() - t0, 1),
        "deal_baseline": deal_baseline(net, args.seed, walls=args.baseline_walls), "best_val_loss": best,
        "reference_val_loss": ref,
    }  # fmt: skip
    path = checkpoint.save(args.out / "luck.pt", KIND, net, meta)
    print(f"best held-out loss {best:.4f} (reference {ref:.4f}); wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
