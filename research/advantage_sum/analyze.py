r"""Where the advantage sum's variance is: its terms by kind of decision and by size.

    python -m research.advantage_sum.analyze --agent distill --walls 1000 --seed 931 \
        --out research/advantage_sum/results/analyze-distill-1000-s931.json

Plays ``--agent`` against three heuristics, replays every hand with the estimator's
kernel (``advantage_kernels.advantages``, the heuristic as reference, 64 rollouts) and
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
from sichuan_env.agents.eval.advantage import record_keys, reference_policy
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck_events import record_log

from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic
from sichuan_env.engine.actions import EXCHANGE, HU, KONG, PASS, PONG, SELF_KONG, VOID
from sichuan_env.engine.state import MAX_LOG, STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

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
    t = get_tables()
    h = len(records)
    walls = np.zeros((h, 108), np.uint8)
    dealers, offsets, n_logs = (np.zeros(h, np.int64) for _ in range(3))
    logs = np.zeros((h, MAX_LOG), np.int16)
    for i, (_, _, rec) in enumerate(records):
        walls[i], dealers[i], offsets[i], log = record_log(rec)
        logs[i, : log.size] = log
        n_logs[i] = log.size
    room = int(n_logs.max())  # a hand cannot leave the reference more often than it decides
    est, var = np.zeros((h, room, 4)), np.zeros((h, room, 4))
    who, acts = np.zeros((h, room), np.int64), np.zeros((h, room, 2), np.int64)
    status, n_div = np.zeros(h, np.int64), np.zeros(h, np.int64)
    style, weights = reference_policy("heuristic")
    K.advantages(  # a rule-based reference: the style kernels
        np.zeros(h, STATE_DTYPE), np.zeros(h, STATE_DTYPE), walls, dealers, offsets, logs, n_logs,
        np.zeros((h, 4), np.bool_), style, weights, reps, record_keys(seed, records), True, kernel_rules(RULES), t["FLAGS"],
        t["WAITS"], t["DIST"], est, var, who, acts, status, n_div,
    )  # fmt: skip
    if (status != K.OK).any():
        raise ValueError(f"records {np.flatnonzero(status != K.OK)} were not estimated")
    values, kinds = [], []
    for i, (_, rot, _) in enumerate(records):
        seat = (-rot) % 4
        for d in range(n_div[i]):
            if who[i, d] == seat:
                values.append(est[i, d, seat])
                kinds.append(f"{kind(int(acts[i, d, 0]))} for {kind(int(acts[i, d, 1]))}")
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
