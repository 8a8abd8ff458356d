r"""Fit a value model's corrections to the rollout labels of ``labels.py``; held-out figures.

    python -m research.luck_residual.fit --labels runs/lr-labels --kind feat --out runs/lr-feat
    python -m research.luck_residual.fit --labels runs/lr-labels --kind tiles --out runs/lr-tiles

The loss of a draw is ``sum_t p(t) (c(t) - D(t))^2`` per seat, ``c`` the model's
correction had ``t`` come and ``D`` the rollout label: its expectation is the model's
error at that draw plus the label's noise, a constant. Every ``--val-every``-th shard
(whole hands) is held out; each epoch's held-out figures, with the label noise taken
out, go to ``metrics.jsonl``: ``error`` (what the corrections leave of a draw's luck,
per draw and seat), ``luck`` (what there is to remove) and ``explained`` = 1 -
error / luck (the best epoch is picked on the same held-out draws, so its figure
is slightly optimistic). Epoch 0 is the start: for ``feat`` the shipped ``luck`` weights,
whose figures are the reference. The best epoch's weights are ``model.pt``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.luck import KIND

from research.luck_residual.models import FeatNet, TileNet, counterfactual_planes
from research.luck_variance.fit import shard_paths
from sichuan_env._cli import write_atomic


def load(folder: Path, val_every: int) -> tuple[dict, dict]:
    """``(train, val)`` arrays of the shards, every ``val_every``-th shard held out."""
    parts: tuple[dict, dict] = ({}, {})
    for b, path in enumerate(shard_paths(folder)):
        with np.load(path) as d:
            side = parts[1] if b % val_every == 0 else parts[0]
            for k in ("x", "p", "a", "d", "noise", "tiles", "wallc", "drawer"):
                side.setdefault(k, []).append(d[k])
    if not parts[0] or not parts[1]:
        raise ValueError(f"{folder} has too few shards for a training and a held-out part")
    return tuple({k: np.concatenate(v) for k, v in part.items()} for part in parts)  # type: ignore[return-value]


def build(kind: str, init: str | None) -> torch.nn.Module:
    """A ``FeatNet`` from the shipped ``luck`` weights (unless 'scratch'), or a ``TileNet`` on one."""
    net = FeatNet()
    if init != "scratch":
        shipped, _ = checkpoint.load(init or "luck", KIND)
        net.load_state_dict(shipped.state_dict())
    return TileNet(base=net) if kind == "tiles" else net


def values(net: torch.nn.Module, d: dict, idx: np.ndarray) -> torch.Tensor:
    """``[B, 27, 4]`` values of every counterfactual of draws ``idx``."""
    x = torch.from_numpy(d["x"][idx].astype(np.float32))
    if isinstance(net, FeatNet):
        return net(x)
    seats, shared = counterfactual_planes(d["tiles"][idx], d["wallc"][idx], d["drawer"][idx].astype(np.int64),
                                          d["a"][idx].astype(np.int64))  # fmt: skip
    return net(x, torch.from_numpy(seats), torch.from_numpy(shared))


def losses(net, d: dict, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss [B, 4], weights [B, 27])``: ``sum_t p (c - D)^2`` per draw and seat."""
    v = values(net, d, idx)
    p = torch.from_numpy(d["p"][idx])
    w = p / p.sum(-1, keepdim=True)
    c = v - (w[..., None] * v).sum(1, keepdim=True)
    return (w[..., None] * (c - torch.from_numpy(d["d"][idx])) ** 2).sum(1), w


def figures(net, d: dict, batch: int = 512) -> dict[str, float]:
    """Held-out ``error``, ``luck`` (both per draw and seat, noise removed), ``explained``."""
    err = luck = 0.0
    with torch.no_grad():
        for i in range(0, len(d["a"]), batch):
            idx = np.arange(i, min(i + batch, len(d["a"])))
            loss, w = losses(net, d, idx)
            noise = (w[..., None] * torch.from_numpy(d["noise"][idx])).sum(1)
            dd = torch.from_numpy(d["d"][idx])
            err += float((loss - noise).sum())
            luck += float(((w[..., None] * dd**2).sum(1) - noise).sum())
    n = 4 * len(d["a"])
    if not (np.isfinite(err) and np.isfinite(luck)) or luck <= 0:
        raise ValueError(f"held-out figures are not finite or there is no luck ({err}, {luck})")
    return {"error": err / n, "luck": luck / n, "explained": 1 - err / luck}


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_residual.fit", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--labels", type=Path, required=True)
    ap.add_argument("--kind", choices=("feat", "tiles"), default="feat")
    ap.add_argument(
        "--init", default="luck", help="feat: a value model to start from, or 'scratch'"
    )
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--val-every", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.out.exists():
        ap.error(f"--out {args.out} exists; choose another name")
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    train, val = load(args.labels, args.val_every)
    net = build(args.kind, args.init)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    args.out.mkdir(parents=True)
    best = figures(net.eval(), val)
    best_state = {k: t.clone() for k, t in net.state_dict().items()}
    rows = [{"epoch": 0, **best, "train_draws": len(train["a"]), "val_draws": len(val["a"])}]
    print(rows[-1], flush=True)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    for epoch in range(1, args.epochs + 1):
        net.train()
        perm = rng.permutation(len(train["a"]))
        for i in range(0, len(perm), args.batch):
            loss, _ = losses(net, train, np.sort(perm[i : i + args.batch]))
            opt.zero_grad()
            loss.mean().backward()
            opt.step()
        got = figures(net.eval(), val)
        rows.append({"epoch": epoch, **got, "seconds": round(time.time() - t0, 1)})
        print(rows[-1], flush=True)
        if got["error"] < best["error"]:
            best, best_state = got, {k: t.clone() for k, t in net.state_dict().items()}
        write_atomic(
            args.out / "metrics.jsonl", "".join(json.dumps(r, allow_nan=False) + "\n" for r in rows)
        )
    tmp = args.out / "model.pt.tmp"
    torch.save({"kind": args.kind, "state": best_state, "best": best}, tmp)
    tmp.replace(args.out / "model.pt")
    print(f"best held-out: {best}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
