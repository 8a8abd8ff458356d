"""Train the luck-adjusted estimator's value model on self-play of a mix of agents.

    python -m sichuan_env.train.value --out runs/value                 # 32,768 hands, then fit
    python -m sichuan_env.train.value --out runs/value --resume        # continue after a stop
    cp runs/value/luck.pt runs/value/luck.json agents/checkpoints/     # ship it

Two stages, both resumable:

1. **Data.** Blocks of ``--block-walls`` walls, each played under the four
   rotations of a lineup drawn per block from a mix of agents (``--mix``:
   rule-based styles, the shipped networks and a little random play), are
   replayed (``sichuan_env.agents.eval.luck_events``) into the features of
   every state that happened at the deal and after each draw, with the
   points each seat still won from there (``shards/shard-NNNN.npz``, written
   atomically; a stop loses at most the block in progress).
2. **Fit.** ``ValueNet`` (``sichuan_env.agents.eval.luck``) by mean squared
   error on the points still to come, a ``--val-share`` of the shards held
   out; the checkpoint with the lowest validation error is kept as
   ``luck.pt`` + ``luck.json``, which also records ``deal_baseline`` (the
   model's mean value of the training deals by seat relative to the dealer),
   the rules, the data, the command, the commit and the wall-clock.

The model is tied to the rules it was trained on (``--preset``); the tools use
it only for that ruleset.

``--resume`` keeps the shards on disk and plays the missing ones (each block is
seeded by ``--seed`` and its number), then fits again, whole: the network starts
from ``--seed`` alone and shuffles from a generator of its own, so a resumed run
writes the ``luck.pt`` the uninterrupted run writes. A resume with other data
settings (``--hands``, ``--block-walls``, ``--preset``, ``--mix``, ``--seed``) is
refused, naming them; the fit's settings (``--epochs``, ``--lr``, ...) may change,
since the fit runs again whole.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck import KIND, ValueConfig, ValueNet
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.agents.eval.luck_features import NF
from sichuan_env.train.common import (
    command_line,
    git_commit,
    seeded_build,
    setup,
    write_failure,
)
from sichuan_env.train.resume import refuse_changed_file

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    add_overwrite,
    claim_output_or_exit,
    fail,
    float_arg,
    int_arg,
    run,
    write_atomic,
)
from sichuan_env._npz import Spec, safe_load_npz
from sichuan_env.rules.config import PRESETS

PROG = "python -m sichuan_env.train.value"
MIX = {"heuristic": 0.3, "defensive": 0.2, "distill": 0.25, "exit": 0.1, "bc": 0.1, "random": 0.05}
"""The default mix: each seat of a block's lineup is drawn from it with these weights."""
OWNED = ("shards", "luck.pt", "luck.json", "value.json")
DATA_SETTINGS = ("hands", "block_walls", "preset", "mix", "seed")
"""What the shards depend on: a resumed run must keep them (the fit's settings may change)."""
SHARD_SPEC = {
    "x": Spec(("n", 4, NF), dtype="float32"),
    "y": Spec(("n", 4), dtype="float32"),
    "deal": Spec(("n",), dtype="bool"),
    "rel": Spec(("n", 4), dtype="int8"),
}


def parse_mix(text: str) -> dict[str, float]:
    """``"heuristic=0.5,distill=0.5"`` -> weights (positive, finite)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, w = part.partition("=")
        try:
            weight = float(w) if sep else 1.0
        except ValueError:
            raise argparse.ArgumentTypeError(f"a mix entry is name=weight, got {part!r}") from None
        if not name or not np.isfinite(weight) or weight <= 0:
            raise argparse.ArgumentTypeError(f"a mix entry is name=weight > 0, got {part!r}")
        out[name] = weight
    return out


def lineup_of(mix: dict[str, float], seed: int, block: int) -> list[str]:
    """The lineup of block ``block``: four draws from ``mix``."""
    rng = np.random.default_rng([seed, block, 7])
    names = sorted(mix)
    p = np.array([mix[n] for n in names])
    return [names[i] for i in rng.choice(len(names), size=4, p=p / p.sum())]


def block_rows(records: list[dict], rules: RuleConfig) -> dict[str, np.ndarray]:
    """Training rows of finished hands: features of what happened, points still to come."""
    ev = extract(records, rules)
    xs, ys, deals, rels = [], [], [], []
    for i in range(len(records)):
        n = int(ev.n_events[i])
        x = ev.feats[i, np.arange(n), ev.actual[i, :n]]  # [n, 4, NF]
        y = (ev.final[i][None, :] - ev.scores_at[i, :n]).astype(np.float32)
        xs.append(x)
        ys.append(y)
        d = np.zeros(n, dtype=bool)
        d[0] = True
        deals.append(d)
        rels.append(np.broadcast_to((np.arange(4) - ev.dealer[i]) % 4, (n, 4)).astype(np.int8))
    return {"x": np.concatenate(xs), "y": np.concatenate(ys), "deal": np.concatenate(deals),
            "rel": np.concatenate(rels)}  # fmt: skip


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def make_data(args: argparse.Namespace, rules: RuleConfig, shards: Path) -> None:
    """Play and write every missing shard (a shard is one block of walls)."""
    shards.mkdir(parents=True, exist_ok=True)
    blocks = -(-args.hands // (4 * args.block_walls))
    seeds = wall_seeds_of(blocks * args.block_walls, args.seed)
    todo = [b for b in range(blocks) if not (shards / f"shard-{b:04d}.npz").exists()]
    columns = (TextColumn("value data"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, disable=not args.progress) as bar:
        task = bar.add_task("blocks", total=blocks, completed=blocks - len(todo))
        for b in todo:
            lineup = lineup_of(args.mix, args.seed, b)
            agents = make_lineup_agents(lineup, args.seed + 1000 * b)
            chunk = seeds[b * args.block_walls : (b + 1) * args.block_walls]
            played = play_block(lineup, agents, chunk, rules, args.seed, b)
            rows = block_rows([r for _, r in played], rules)
            write_atomic(shards / f"shard-{b:04d}.npz", _npz_bytes(rows))
            bar.advance(task)


def load_shards(shards: Path) -> list[dict[str, np.ndarray]]:
    """Every shard, checked (``ValueError`` naming a damaged one)."""
    out = []
    for path in sorted(shards.glob("shard-*.npz")):
        data = safe_load_npz(path, SHARD_SPEC, what="value-data shard")
        if not np.isfinite(data["x"]).all() or not np.isfinite(data["y"]).all():
            raise ValueError(f"value-data shard {path} holds non-finite numbers")
        out.append(data)
    if not out:
        raise ValueError(f"no value-data shards in {shards}")
    return out


def _mse(net: ValueNet, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float(sum(((net(x[i : i + 65536]) - y[i : i + 65536]) ** 2).sum()
                         for i in range(0, len(x), 65536)) / y.numel())  # fmt: skip


def fit(args: argparse.Namespace, data: list[dict[str, np.ndarray]]) -> tuple[ValueNet, dict]:
    """Fit ``ValueNet``; the best network on the held-out shards and its metrics."""
    n_val = max(1, round(len(data) * args.val_share)) if len(data) > 1 else 0
    train, val = data[n_val:], data[:n_val] or data
    x = torch.from_numpy(np.concatenate([d["x"] for d in train]))
    y = torch.from_numpy(np.concatenate([d["y"] for d in train]))
    xv = torch.from_numpy(np.concatenate([d["x"] for d in val]))
    yv = torch.from_numpy(np.concatenate([d["y"] for d in val]))
    # from --seed alone: a resumed run, which plays fewer blocks first, starts the same network
    net = seeded_build(args.seed, lambda: ValueNet(ValueConfig(args.hidden, args.hidden)))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)
    best, best_state, history = float("inf"), None, []
    baseline = float((yv**2).mean())
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x), generator=gen)
        net.train()
        for i in range(0, len(x), args.batch):
            idx = perm[i : i + args.batch]
            loss = ((net(x[idx]) - y[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        v = _mse(net, xv, yv)
        history.append(
            {"epoch": epoch + 1, "val_mse": v, "train_mse": _mse(net, x[:200000], y[:200000])}
        )
        if args.progress:
            print(
                f"epoch {epoch + 1}/{args.epochs}: validation MSE {v:.3f} (zero model {baseline:.3f})"
            )
        if v < best:
            best, best_state = v, {k: t.clone() for k, t in net.state_dict().items()}
    assert best_state is not None
    net.load_state_dict(best_state)
    metrics = {"val_mse": best, "val_mse_zero": baseline, "val_r2": 1 - best / baseline,
               "train_rows": len(x), "val_rows": len(xv), "history": history}  # fmt: skip
    return net, metrics


def deal_baseline(net: ValueNet, data: list[dict[str, np.ndarray]]) -> list[float]:
    """Mean value of the training deals by seat relative to the dealer (sums to 0)."""
    x = np.concatenate([d["x"][d["deal"]] for d in data])
    rel = np.concatenate([d["rel"][d["deal"]] for d in data])
    with torch.no_grad():
        v = net(torch.from_numpy(x)).numpy().astype(np.float64)
    out = np.zeros(4)
    for r in range(4):
        out[r] = v[rel == r].mean()
    return [float(t) for t in out - out.mean()]


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="the run folder")
    p.add_argument("--hands", type=int_arg(4, 10**7), default=32768, help="self-play hands")
    p.add_argument("--block-walls", type=int_arg(1, 4096), default=256, help="walls per shard")
    p.add_argument("--preset", choices=sorted(PRESETS), default="xuezhan", help="the rules")
    p.add_argument(
        "--mix", type=parse_mix, default=dict(MIX), help="agent=weight,... to draw seats from"
    )
    p.add_argument("--epochs", type=int_arg(1, 1000), default=12)
    p.add_argument("--batch", type=int_arg(16, 1 << 20), default=4096)
    p.add_argument("--lr", type=float_arg(0, 1), default=2e-3)
    p.add_argument("--hidden", type=int_arg(4, 512), default=64, help="hidden units per layer")
    p.add_argument("--val-share", type=float_arg(0, 0.5), default=0.05)
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=2)
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    add_overwrite(p, "run")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = build_parser()
    args = p.parse_args(argv)
    resumed = claim_output_or_exit(p, "--out", args.out, OWNED, resume=args.resume,
                                   overwrite=args.overwrite, what="value-model run")  # fmt: skip
    rules = RuleConfig.preset(args.preset)
    conf = {
        k: v
        for k, v in vars(args).items()
        if k not in ("out", "resume", "overwrite", "progress", "threads")
    }
    conf["out"] = str(args.out)
    conf_path = args.out / "value.json"
    if resumed and conf_path.exists():
        refuse_changed_file(PROG, p, args.out, conf_path, {k: conf[k] for k in DATA_SETTINGS})
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(conf_path, json.dumps(conf, indent=1) + "\n")
    setup(args.threads, args.seed)
    start = time.time()
    try:
        make_data(args, rules, args.out / "shards")
        data = load_shards(args.out / "shards")
    except ValueError as exc:
        fail(PROG, exc)
    net, metrics = fit(args, data)
    meta: dict[str, Any] = {
        "rules": rules.to_dict(), "command": command_line("sichuan_env.train.value", argv),
        "commit": git_commit(), "wall_clock_s": round(time.time() - start, 1),
        "deal_baseline": deal_baseline(net, data), "preset": args.preset, "mix": args.mix,
        "hands": args.hands, "metrics": metrics,
    }  # fmt: skip
    try:
        path = checkpoint.save(args.out / "luck.pt", KIND, net, meta)
    except OSError as exc:
        fail(PROG, f"{write_failure(exc)}; {args.out} keeps its last good files")
    print(f"validation R2 {metrics['val_r2']:.3f} (MSE {metrics['val_mse']:.2f}); wrote {path}")
    return 0


def cli() -> int:
    """Console entry point."""
    return run(main, PROG)


if __name__ == "__main__":
    raise SystemExit(cli())
