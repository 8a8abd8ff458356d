r"""Low-noise labels of each draw's luck, for fitting value models to; resumable.

    python -m research.luck_residual.labels --agent distill --net --walls 1024 --reps 16 \
        --share 0.25 --seed 821 --out runs/lr-labels

The duplicate match of ``measure.py`` (one ``--agent`` against three heuristics), cut
into shards of ``--chunk`` hands; at each sampled draw, every seat's rollout estimate
``D(t) = mean_r delta_r(t)`` of the luck of each tile ``t`` (``--reps`` wall orders
shared by every ``t``) and its noise variance ``var_r delta_r(t) / reps``, beside the
event's 38 features per seat and tile, its probabilities, the tile that came, and
the table planes of the state that happened (``luck_events.Events.tiles`` and
``wallc``), from which every counterfactual's planes follow: the drawer holds ``t``
instead of the tile that came, and the wall the other way round. Against the
realized points to come (variance about 9 points² per draw and seat) these labels
carry ``noise`` (0.24-0.27 per draw and seat at 16 orders): roughly 35 times less
than the 9.3 of the points to come on ``research/luck_variance``'s mix.
Shards are written atomically; ``--resume`` plays only the missing ones.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval import luck_features as F
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck_events import extract

from research.luck_residual.measure import RULES, lineup_policies, rollouts
from sichuan_env._cli import write_atomic

SETTINGS = ("agent", "net", "walls", "reps", "share", "seed", "chunk")


def shard(records, styles, weights, rng, reps: int, share: float) -> dict[str, np.ndarray]:
    """The labelled draws of ``records`` (one shard)."""
    h = len(records)
    want = rng.random((h, F.MAX_EVENTS)) < share
    keys = rng.random((h, F.MAX_EVENTS, reps, 55)).astype(np.float32)
    o = rollouts(records, styles, weights, want, keys)
    ev = extract(records, RULES)
    sel = want & (np.arange(F.MAX_EVENTS)[None, :] < o["n_events"][:, None])
    hi, ei = np.nonzero(sel)
    if not (o["actual"][hi, ei] == ev.actual[hi, ei + 1]).all():
        raise AssertionError("the rollouts and the replay disagree on a drawn tile")
    p = o["probs"][hi, ei].astype(np.float64)
    p /= p.sum(axis=1, keepdims=True)
    x = o["roll"][hi, ei].astype(np.float64)  # [n, 27, R, 4]
    delta = x - (p[:, :, None, None] * x).sum(axis=1, keepdims=True)
    return {
        "x": o["feats"][hi, ei].astype(np.float16), "p": o["probs"][hi, ei],
        "a": o["actual"][hi, ei].astype(np.int8), "d": delta.mean(axis=2).astype(np.float32),
        "noise": (delta.var(axis=2, ddof=1) / x.shape[2]).astype(np.float32),
        "tiles": ev.tiles[hi, ei + 1], "wallc": ev.wallc[hi, ei + 1],
        "drawer": ev.drawer[hi, ei + 1].astype(np.int8), "hand": hi.astype(np.int32),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_residual.labels", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--agent", default="distill")
    ap.add_argument("--net", action="store_true")
    ap.add_argument("--walls", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--share", type=float, default=0.25)
    ap.add_argument("--seed", type=int, default=821)
    ap.add_argument("--chunk", type=int, default=32, help="hands per shard")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args(argv)
    settings = {k: getattr(args, k) for k in SETTINGS}
    if args.out.exists():
        if not args.resume:
            ap.error(f"--out {args.out} exists; pass --resume to continue it")
        try:
            old = json.loads((args.out / "labels.json").read_text())["settings"]
        except (OSError, ValueError, KeyError, TypeError):
            ap.error(f"--out {args.out} holds no readable labels.json; not resuming into it")
        changed = sorted(k for k in settings if old.get(k) != settings[k])
        if changed:
            ap.error(f"--resume with other settings than the run's: {', '.join(changed)}")
    else:
        (args.out / "shards").mkdir(parents=True)
        write_atomic(args.out / "labels.json",
                     json.dumps({"settings": settings, "command": " ".join(sys.argv)}) + "\n")  # fmt: skip
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=False)
    recs = [r for _, _, r in records]
    styles, weights = lineup_policies(lineup, records, args.net)
    n = -(-len(recs) // args.chunk)
    for b in range(n):
        path = args.out / f"shards/shard-{b:04d}.npz"
        if path.exists():
            continue
        sl = slice(b * args.chunk, (b + 1) * args.chunk)
        rows = shard(recs[sl], styles[sl], weights, np.random.default_rng([args.seed, b, 5]),
                     args.reps, args.share)  # fmt: skip
        rows["hand"] += b * args.chunk
        buf = io.BytesIO()
        np.savez_compressed(buf, **rows)
        write_atomic(path, buf.getvalue())
        print(f"shard {b + 1}/{n}: {len(rows['a'])} draws, {time.perf_counter() - t0:.0f} s",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
