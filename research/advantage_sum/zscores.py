r"""Is the advantage-sum estimate unbiased? z-scores of disjoint wall sets.

    python -m research.advantage_sum.zscores research/advantage_sum/results/distill-8000-s917.json \
        --reference research/advantage_sum/results/plain-distill-20000-s918.json --sets 40 \
        --out research/advantage_sum/results/zscores-distill.json

Cuts a ``measure`` run's per-wall samples into ``--sets`` disjoint sets of walls and
scores each set's estimate two ways:

- against a large plain run on other walls (``--reference``, a ``sichuan-eval`` JSON):
  ``z = (set mean - reference mean) / sqrt(se_set^2 + se_ref^2)``;
- paired with the plain estimate on the same walls: ``z`` of the set's mean of
  ``advantage - plain`` (zero-mean if the estimate is unbiased; a sharper test, since
  the difference has less variance than either).

Unbiased estimates give z-scores of mean about 0 and standard deviation about 1
(with 40 sets, the mean's 95% range is about ±0.31 and the standard deviation's about
0.78-1.22). Also reports the whole run against the reference.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sichuan_env._cli import path_problem, write_atomic


def set_z(x: np.ndarray, sets: int, ref_mean: float, ref_se: float) -> np.ndarray:
    """z-scores of ``sets`` disjoint consecutive blocks of ``x`` against a reference."""
    if len(x) < 2 * sets:
        raise ValueError(f"{len(x)} walls are too few for {sets} sets of at least 2")
    blocks = np.array_split(x, sets)
    return np.array([
        (b.mean() - ref_mean) / np.sqrt(b.var(ddof=1) / len(b) + ref_se**2) for b in blocks
    ])  # fmt: skip


def summary(z: np.ndarray) -> dict:
    """Mean and standard deviation of ``z``, and the share beyond ±1.96."""
    return {"mean": float(z.mean()), "sd": float(z.std(ddof=1)),
            "beyond_1.96": float((np.abs(z) > 1.96).mean()), "z": z.round(4).tolist()}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.zscores", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("run", type=Path, help="a measure.py JSON")
    ap.add_argument("--reference", type=Path, required=True, help="a sichuan-eval JSON (plain)")
    ap.add_argument("--sets", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    run = json.loads(args.run.read_text())
    ref = json.loads(args.reference.read_text())
    agent = run["agent"]
    if ref.get("lineup") != run["lineup"]:
        ap.error(f"the reference's lineup {ref.get('lineup')} is not the run's {run['lineup']}")
    r = ref["agents"][agent]
    ref_mean, ref_se = float(r["points_per_hand"]), float(r["ci95"]) / 1.96
    doc: dict = {"run": args.run.name, "reference": args.reference.name, "agent": agent,
                 "sets": args.sets, "walls": run["walls"], "reference_walls": ref["walls"],
                 "reference_mean": ref_mean, "reference_ci95": float(r["ci95"])}  # fmt: skip
    plain = np.asarray(run["per_wall"]["plain"])
    for name in ("plain", "luck", "advantage"):
        x = np.asarray(run["per_wall"][name])
        doc[name] = {
            "vs_reference": summary(set_z(x, args.sets, ref_mean, ref_se)),
            "whole_run_z": float((x.mean() - ref_mean)
                                 / np.sqrt(x.var(ddof=1) / len(x) + ref_se**2)),
        }  # fmt: skip
        if name != "plain":
            doc[name]["paired_with_plain"] = summary(set_z(x - plain, args.sets, 0.0, 0.0))
    print(f"{agent}: {args.sets} sets of {run['walls'] // args.sets} walls; reference "
          f"{ref_mean:+.4f} ± {float(r['ci95']):.4f} ({ref['walls']} walls)")  # fmt: skip
    for name in ("plain", "luck", "advantage"):
        v = doc[name]["vs_reference"]
        line = f"  {name:10s} vs reference: z mean {v['mean']:+.2f} sd {v['sd']:.2f}"
        if "paired_with_plain" in doc[name]:
            q = doc[name]["paired_with_plain"]
            line += f"; paired with plain: z mean {q['mean']:+.2f} sd {q['sd']:.2f}"
        print(line + f"; whole run z {doc[name]['whole_run_z']:+.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
