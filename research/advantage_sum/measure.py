r"""The advantage-sum estimate against the plain one and the luck adjustment, on the same hands.

    python -m research.advantage_sum.measure --agent distill --walls 2500 --seed 911 \
        --out research/advantage_sum/results/distill-2500-s911.json

Plays one duplicate match (``--agent`` against three heuristics, every wall dealt four
times), then scores the same records three ways: plain, luck-adjusted with the shipped
value model (as ``sichuan-eval --estimator luck``), and by the advantage-sum estimate
(``sichuan_env.agents.eval.advantage``, as ``sichuan-eval``'s default for such a
lineup; ``--reference`` names the three copies and the estimate's reference). Writes
each one's mean and 95% interval, its CI ratio against plain (with a
bootstrap interval over walls), the seconds of play and of each estimate, the
divergences per hand, the rollouts' share of the estimate's variance, and the per-wall
samples (``zscores`` cuts them into disjoint wall sets). An existing ``--out`` is refused.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval.adjust import Corrections
from sichuan_env.agents.eval.advantage import AdvantageSum
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import load_for
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from research.table_value.measure import ci_ratio
from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic

RULES = RuleConfig.preset("xuezhan")


def wall_means(records: list, values: np.ndarray, walls: int) -> np.ndarray:
    """Mean of ``values`` (one per record) over each wall's records."""
    sums, counts = np.zeros(walls), np.zeros(walls)
    for i, (wall, _, _) in enumerate(records):
        sums[wall] += values[i]
        counts[wall] += 1
    if (counts == 0).any():
        raise ValueError("a wall has no records")
    return sums / counts


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.measure", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--agent", default="distill")
    ap.add_argument("--reference", default="heuristic")
    ap.add_argument("--walls", type=int, default=200)
    ap.add_argument("--reps", type=int, default=64)
    ap.add_argument("--seed", type=int, default=911)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent] + [args.reference] * 3
    try:
        adv = AdvantageSum(lineup, RULES, reps=args.reps, seed=args.seed, reference=args.reference)
    except ValueError as exc:
        ap.error(str(exc))
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    play_s = time.perf_counter() - t0
    plain = per_wall(lineup, records, args.walls)[args.agent][0]
    t1 = time.perf_counter()
    s = adv.sums(records)
    adv_s = time.perf_counter() - t1
    seat = np.array([(-rot) % 4 for _, rot, _ in records])  # lineup position 0's seat
    rows = np.arange(len(records))
    est = wall_means(records, s["sum"][rows, seat], args.walls)
    noise = float(wall_means(records, s["noise"][rows, seat], args.walls).mean() / 4)
    divergences = s["divergences"][rows, seat]
    model, why = load_for(RULES)
    if model is None:
        raise SystemExit(why)
    corr = Corrections(model)
    luck = per_wall(lineup, records, args.walls, corr.of(records))[args.agent][1]
    doc = {
        "agent": args.agent, "reference": args.reference, "walls": args.walls, "reps": args.reps,
        "seed": args.seed, "lineup": lineup,
        "seconds": {"play": round(play_s, 1), "advantage": round(adv_s, 1),
                    "luck": round(corr.seconds, 1)},
        "divergences_per_hand": float(divergences.mean()),
        "others_divergences_per_hand": float(s["divergences"].sum() / len(records)
                                             - divergences.mean()),
        "rollout_noise_share": noise / float(est.var(ddof=1)),
        "estimates": {}, "per_wall": {},
    }  # fmt: skip
    print(f"{args.agent} vs 3 {args.reference}, {args.walls} walls x 4, reps {args.reps}")
    for name, x in (("plain", plain), ("luck", luck), ("advantage", est)):
        m, ci = mean_ci(x)
        r = ci_ratio(plain, x) if name != "plain" else None
        doc["estimates"][name] = {"mean": m, "ci95": ci, "ci_ratio": r}
        doc["per_wall"][name] = x.round(6).tolist()
        tail = f"  CI ratio {r['ratio']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]" if r else ""
        print(f"  {name:10s} {m:+.4f} ± {ci:.4f}{tail}")
    print(f"  divergences/hand {doc['divergences_per_hand']:.2f} (the others' "
          f"{doc['others_divergences_per_hand']:.2f}); rollouts' share of the variance "
          f"{doc['rollout_noise_share']:.2f}; seconds {doc['seconds']}")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
