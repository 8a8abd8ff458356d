r"""Two references on the same hands: does the agent's own policy as a second reference help?

    python -m research.advantage_sum.two_refs --agent distill --walls 2500 --seed 4411 \
        --out research/advantage_sum/results/two-refs-distill-2500-s4411.json

The advantage-sum estimate of one agent against three copies of a policy ``μ`` (the
heuristic) sums the agent's own decisions that leave ``μ``, each scored by rollouts of ``μ``
(``sum_h``). The identity holds with any reference the rollouts can play: with the agent's
own policy ``π`` as the reference, the agent never leaves it and the opponents' decisions
that leave ``π`` are scored instead (``sum_a``, the agent's seat's share of them). Over a
wall's four rotations the deal's term cancels for either (the agent sits in every seat once,
and the reference's values of a deal sum to zero over the seats), so both are unbiased
estimates of the agent's points per hand, from different decisions of the same hands.

Per wall, with ``plain`` the agent's points:

- ``sum_h``, ``sum_a``: each estimate alone;
- ``blend_h``: ``plain - b (plain - sum_h)`` (what ``sichuan-eval`` reports);
- ``two``: ``plain - b1 (plain - sum_h) - b2 (plain - sum_a)``;

coefficients least squares fitted on the other half of the walls (``two_cv.crossfit``), so
each wall's estimate stays unbiased. CI ratios are against plain, with bootstrap intervals
over walls. An existing ``--out`` is refused.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval.advantage import AdvantageSum
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from research.advantage_sum.measure import RULES, wall_means
from research.advantage_sum.two_cv import crossfit
from research.table_value.measure import ci_ratio
from sichuan_env._cli import path_problem, write_atomic


def seat_sums(adv: AdvantageSum, records: list, walls: int) -> tuple[np.ndarray, float, float]:
    """Lineup position 0's per-wall advantage sum, its divergences per hand, and the seconds."""
    t0 = time.perf_counter()
    s = adv.sums(records)
    seconds = time.perf_counter() - t0
    seat = np.array([(-rot) % 4 for _, rot, _ in records])
    rows = np.arange(len(records))
    return (wall_means(records, s["sum"][rows, seat], walls),
            float(s["divergences"].sum() / len(records)), seconds)  # fmt: skip


def _corr(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson correlation, or None where it is undefined (a constant sample)."""
    if x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.two_refs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--agent", default="distill", help="a greedy network or rule-based style")
    ap.add_argument("--opponent", default="heuristic", help="the three copies")
    ap.add_argument("--walls", type=int, default=200)
    ap.add_argument("--reps", type=int, default=32)
    ap.add_argument("--seed", type=int, default=4411)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    if args.walls < 4:
        ap.error("--walls: at least 4 (two folds of two walls)")
    lineup = [args.agent] + [args.opponent] * 3
    try:
        advs = {ref: AdvantageSum(lineup, RULES, reps=args.reps, seed=args.seed, reference=ref)
                for ref in (args.opponent, args.agent)}  # fmt: skip
    except ValueError as exc:
        ap.error(str(exc))
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    play_s = time.perf_counter() - t0
    plain = per_wall(lineup, records, args.walls)[args.agent][0]
    sum_h, div_h, sec_h = seat_sums(advs[args.opponent], records, args.walls)
    sum_a, div_a, sec_a = seat_sums(advs[args.agent], records, args.walls)
    blend, b = crossfit(plain, (plain - sum_h)[:, None])
    two, b2 = crossfit(plain, np.stack([plain - sum_h, plain - sum_a], 1))
    doc = {
        "agent": args.agent, "opponent": args.opponent, "walls": args.walls, "reps": args.reps,
        "seed": args.seed, "lineup": lineup,
        "seconds": {"play": round(play_s, 1), "sum_h": round(sec_h, 1), "sum_a": round(sec_a, 1)},
        "divergences_per_hand": {"sum_h": div_h, "sum_a": div_a},
        "corr_of_errors": _corr(plain - sum_h, plain - sum_a),
        "corr_of_sums": _corr(sum_h, sum_a),
        "coefficients": {"blend_h": b[:, 0].round(3).tolist(), "two": b2.round(3).tolist()},
        "estimates": {}, "per_wall": {},
    }  # fmt: skip
    print(f"{args.agent} vs 3 {args.opponent}, {args.walls} walls x 4, reps {args.reps}")
    for name, x in (("plain", plain), ("sum_h", sum_h), ("sum_a", sum_a), ("blend_h", blend),
                    ("two", two)):  # fmt: skip
        m, ci = mean_ci(x)
        r = ci_ratio(plain, x) if name != "plain" else None
        if r is not None and not np.isfinite(r["ci95"]).all():  # a constant resample (few walls)
            r["ci95"] = [None, None]
        doc["estimates"][name] = {"mean": m, "ci95": ci, "ci_ratio": r}
        doc["per_wall"][name] = np.round(x, 6).tolist()
        lo, hi = r["ci95"] if r else (None, None)
        tail = f"  CI ratio {r['ratio']:.3f}" if r else ""
        tail += f" [{lo:.3f}, {hi:.3f}]" if lo is not None else ""
        print(f"  {name:8s} {m:+.4f} ± {ci:.4f}{tail}")
    corr = doc["corr_of_errors"]
    print(f"  corr(plain - sum_h, plain - sum_a) {'undefined' if corr is None else f'{corr:.3f}'}; "
          f"divergences/hand {doc['divergences_per_hand']}; seconds {doc['seconds']}")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
