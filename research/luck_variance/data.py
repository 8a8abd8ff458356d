r"""Training events for a value model fitted to the adjustment's variance, resumably.

    python -m research.luck_variance.data --out runs/lv-data --hands 49152 --seed 71

Blocks of ``--block-walls`` walls are played under the four rotations of a lineup
drawn per block from the library's mix (``sichuan_env.train.value.MIX``, the
shipped ``luck`` model's own), replayed into their chance events
(``luck_events.extract``), and ``--per-hand`` draws of every hand are kept with
all of their counterfactual states: the features of each tile the drawer could
have drawn, its probability, the tile that came, and the target

    y_k = (points still to come at draw k) - sum_{j > k} c_j

where ``c_j`` are the reference model's (``--reference``, shipped ``luck``) draw
corrections after draw ``k``. Each ``c_j`` has mean zero given everything up to
draw ``j - 1``, so ``E[y_k | draw k] = E[points to come | draw k]``: ``y_k`` is a
target of the same conditional mean with the variance the reference model
explains removed (a control variate of the target, not of the estimate).

Every hand keeps the same number of draws, so in the fit each *hand* weighs the
same, not each draw: a short hand's draws count a little more than they would in
the per-draw sum of the estimate's variance. (Sampling each draw with a fixed
probability, as ``research/luck_residual/labels.py`` does, avoids this.)

One shard per block (``shards/shard-NNNN.npz``, written atomically); an existing
``--out`` is refused unless ``--resume`` (which plays only the missing blocks
and refuses other settings).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

import numpy as np
from rich.progress import track
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_events import CHUNK, Events, extract
from sichuan_env.train.value import MIX, lineup_of

from sichuan_env import RuleConfig
from sichuan_env._cli import write_atomic

RULES = RuleConfig.preset("xuezhan")
SETTINGS = ("hands", "block_walls", "per_hand", "seed", "reference")


def targets(ev: Events, c: np.ndarray) -> np.ndarray:
    """``float64[H, E, 4]``: points still to come at each event less the later corrections."""
    to_come = (ev.final[:, None, :] - ev.scores_at).astype(np.float64)
    later = np.cumsum(c[:, ::-1], axis=1)[:, ::-1] - c  # sum over j > k
    return to_come - later


def block_events(
    records: list[dict], model: LuckModel, per_hand: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The kept draws of a block's hands: features, probabilities, tile that came, target."""
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("x", "p", "a", "y", "ref", "hand")}
    for first in range(0, len(records), CHUNK):
        ev = extract(records[first : first + CHUNK], RULES, first=first)
        c, live = model.event_corrections(ev)
        y = targets(ev, c)
        for i in range(ev.final.shape[0]):
            ks = np.flatnonzero(live[i])
            ks = np.sort(rng.choice(ks, size=min(per_hand, ks.size), replace=False))
            out["x"].append(ev.feats[i, ks].astype(np.float16))
            out["p"].append(ev.probs[i, ks])
            out["a"].append(ev.actual[i, ks].astype(np.int8))
            out["y"].append(y[i, ks].astype(np.float32))
            out["ref"].append(c[i, ks].astype(np.float32))
            out["hand"].append(np.full(ks.size, first + i, dtype=np.int32))
    return {k: np.concatenate(v) for k, v in out.items()}


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.luck_variance.data", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--hands", type=int, default=49152)
    p.add_argument("--block-walls", type=int, default=64)
    p.add_argument("--per-hand", type=int, default=8, help="draws kept per hand")
    p.add_argument("--seed", type=int, default=71)
    p.add_argument(
        "--reference", default="luck", help="the model whose corrections the target subtracts"
    )
    p.add_argument("--resume", action="store_true")
    args = p.parse_args(argv)
    if args.hands < 4 * args.block_walls or args.block_walls < 1 or args.per_hand < 1:
        p.error("--hands must cover one block of --block-walls >= 1 walls, --per-hand >= 1")
    settings = {k: getattr(args, k) for k in SETTINGS}
    meta = args.out / "data.json"
    if args.out.exists():
        if not args.resume:
            p.error(f"--out {args.out} exists; pass --resume to continue it")
        try:
            old = json.loads(meta.read_text())["settings"]
        except (OSError, ValueError, KeyError, TypeError):
            p.error(f"--out {args.out} holds no readable data.json; not resuming into it")
        changed = [k for k in SETTINGS if old.get(k) != settings[k]]
        if changed:
            p.error(f"--resume with other settings than the run's: {', '.join(changed)}")
    else:
        (args.out / "shards").mkdir(parents=True)
        write_atomic(meta, json.dumps({"settings": settings, "command": " ".join(sys.argv)}) + "\n")
    model = LuckModel.load(args.reference)
    blocks = -(-args.hands // (4 * args.block_walls))
    seeds = wall_seeds_of(blocks * args.block_walls, args.seed)
    todo = [b for b in range(blocks) if not (args.out / f"shards/shard-{b:04d}.npz").exists()]
    t0 = time.perf_counter()
    for b in track(todo, description="blocks"):
        lineup = lineup_of(MIX, args.seed, b)
        agents = make_lineup_agents(lineup, args.seed + 1000 * b)
        played = play_block(lineup, agents, seeds[b * args.block_walls : (b + 1) * args.block_walls],
                            RULES, args.seed, b)  # fmt: skip
        rows = block_events([r for _, r in played], model, args.per_hand,
                            np.random.default_rng([args.seed, b, 11]))  # fmt: skip
        write_atomic(args.out / f"shards/shard-{b:04d}.npz", _npz(rows))
    print(f"{len(todo)} blocks in {time.perf_counter() - t0:.0f} s ({blocks} in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
