r"""Two agents on the same walls, paired: the difference by each estimate.

    python -m research.advantage_sum.paired \
        research/advantage_sum/results/exit-valueleaf-2500-s911.json \
        research/advantage_sum/results/distill-2500-s911.json \
        --out research/advantage_sum/results/paired-exit-valueleaf-minus-distill-s911.json

Reads two ``measure`` runs played on the same walls (same seed and wall count; the
reference policy the same) and reports, for the plain, luck-adjusted and advantage-sum
estimates, the first agent's points per hand minus the second's with its 95% interval
from the per-wall differences, and each interval's ratio to the plain one's (with a
bootstrap interval over walls).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval.match_stats import mean_ci

from research.luck_scale.paired import paired_ratio
from sichuan_env._cli import path_problem, write_atomic

NAMES = ("plain", "luck", "advantage")


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.paired", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    a, b = (json.loads(p.read_text()) for p in (args.first, args.second))
    for key in ("walls", "seed", "reference"):
        if a[key] != b[key]:
            ap.error(
                f"the runs differ in {key}: {a[key]} and {b[key]}; pair runs on the same walls"
            )
    d = {k: np.asarray(a["per_wall"][k]) - np.asarray(b["per_wall"][k]) for k in NAMES}
    doc: dict = {"first": a["agent"], "second": b["agent"], "walls": a["walls"], "seed": a["seed"],
                 "reference": a["reference"], "difference": {}}  # fmt: skip
    print(f"{a['agent']} - {b['agent']}, {a['walls']} walls (seed {a['seed']}) x 4, paired")
    for k in NAMES:
        m, ci = mean_ci(d[k])
        r = paired_ratio(d["plain"], d[k]) if k != "plain" else None
        doc["difference"][k] = {"mean": m, "ci95": ci, "ci_ratio": r}
        tail = f"  CI ratio {r['ratio']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]" if r else ""
        print(f"  {k:10s} {m:+.4f} ± {ci:.4f}{tail}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
