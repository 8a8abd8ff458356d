r"""Where the advantage sum's variance is: its terms by kind of decision and by size.

    python -m research.advantage_sum.analyze --agent distill --walls 1000 --seed 931 \
        --out research/advantage_sum/results/analyze-distill-1000-s931.json

Plays ``--agent`` against three heuristics, replays every hand with the estimator's
kernel (``AdvantageSum.terms``, the heuristic as reference, 64 rollouts) and
keeps every decision where the agent left the heuristic: its kind (the agent's action
against the heuristic's: a discard for a discard, a kong for a discard, ...) and its
estimated advantage. Reports, per kind, how many there are, their mean, and their share
of the summed squared advantages; and the share carried by the terms above 2 points.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval import advantage_kernels as K
from sichuan_env.agents.eval.advantage import AdvantageSum
from sichuan_env.agents.eval.evaluate import play_duplicate

from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic
from sichuan_env.engine.actions import EXCHANGE, HU, KONG, PASS, PONG, SELF_KONG, VOID

RULES = RuleConfig.preset("xuezhan")


def kind(a: int) -> str:
    """The kind of an action id."""
    for bound, name in ((EXCHANGE, "discard"), (VOID, "exchange"), (SELF_KONG, "void"),
                        (PONG, "self-kong"), (KONG, "pong"), (HU, "kong"), (PASS, "hu")):  # fmt: skip
        if a < bound:
            return name
    return "pass"


def divergences(records: list, reps: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """The agent's (lineup position 0) advantage estimates and their kinds, every divergence."""
    est = AdvantageSum(["agent", "heuristic", "heuristic", "heuristic"], RULES, reps=reps,
                       seed=seed, reference="heuristic")  # fmt: skip
    o = est.terms(records)
    if (o["status"] != K.OK).any():
        raise ValueError(f"records {np.flatnonzero(o['status'] != K.OK)} were not estimated")
    values, kinds = [], []
    for i, (_, rot, _) in enumerate(records):
        seat = (-rot) % 4
        for d in range(o["n_div"][i]):
            if o["who"][i, d] == seat:
                values.append(o["est"][i, d, seat])
                a, b = (kind(int(x)) for x in o["acts"][i, d])
                kinds.append(f"{a} for {b}")
    return np.array(values), kinds


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.analyze", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--agent", default="distill")
    ap.add_argument("--walls", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=64)
    ap.add_argument("--seed", type=int, default=931)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    values, kinds = divergences(records, args.reps, args.seed)
    if values.size == 0:
        raise SystemExit(f"{args.agent} never left the heuristic on these walls")
    total = float((values**2).sum())
    by: dict[str, list[float]] = defaultdict(list)
    for v, k in zip(values, kinds, strict=True):
        by[k].append(float(v))
    rows = sorted(
        ({"kind": k, "n": len(v), "mean": float(np.mean(v)),
          "share_of_squares": float(np.sum(np.square(v)) / total)} for k, v in by.items()),
        key=lambda r: -r["share_of_squares"],
    )  # fmt: skip
    big = np.abs(values) > 2
    doc = {
        "agent": args.agent, "walls": args.walls, "seed": args.seed, "reps": args.reps,
        "divergences": int(values.size), "divergences_per_hand": values.size / len(records),
        "above_2_points": {"share_of_terms": float(big.mean()),
                           "share_of_squares": float((values[big] ** 2).sum() / total)},
        "quantiles": dict(zip(("1%", "5%", "25%", "50%", "75%", "95%", "99%"),
                              np.quantile(values, [.01, .05, .25, .5, .75, .95, .99]).round(3).tolist(),
                              strict=True)),
        "by_kind": rows,
    }  # fmt: skip
    for r in rows:
        print(f"{r['kind']:28s} n={r['n']:6d} mean {r['mean']:+.3f} "
              f"share of squares {r['share_of_squares']:.3f}")  # fmt: skip
    a = doc["above_2_points"]
    print(
        f"|A| > 2: {a['share_of_terms']:.1%} of the terms, {a['share_of_squares']:.1%} of the squares"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
