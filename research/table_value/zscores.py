"""Unbiasedness on disjoint wall sets: z-scores of adjusted means against a large plain run.

    python -m research.table_value.zscores research/table_value/results/distill-2500.json \
        --reference 0.052 0.015 --sets 50 --model table_value --plot docs/img/table-zscores.png

Cuts a ``measure`` run's per-wall adjusted samples into ``--sets`` disjoint sets of
walls; each set's adjusted mean against the reference (a large plain run on other
walls: its mean and 95% half-width) gives ``z = (mean - ref) / sqrt(se_set^2 + se_ref^2)``.
An unbiased estimate gives z-scores of mean about 0 and standard deviation about 1
(and the pooled mean inside the 99% bounds of the reference). Several files pool their
sets (each with its own reference, in order).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sichuan_env._files import save_figure


def zscores(per_wall: np.ndarray, ref: float, ref_ci: float, sets: int) -> np.ndarray:
    """The z-score of each of ``sets`` disjoint, consecutive wall sets."""
    se_ref = ref_ci / 1.96
    out = []
    for part in np.array_split(per_wall, sets):
        se = part.std(ddof=1) / np.sqrt(len(part))
        out.append((part.mean() - ref) / np.hypot(se, se_ref))
    return np.array(out)


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.table_value.zscores", description=__doc__)
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--reference", nargs=2, type=float, action="append", required=True,
                   metavar=("MEAN", "CI95"), help="per run, in order (one given: for all)")  # fmt: skip
    p.add_argument("--sets", type=int, default=50, help="disjoint wall sets per run")
    p.add_argument("--model", default="table_value", help="which adjusted samples")
    p.add_argument("--plot", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--overwrite", action="store_true", help="replace an existing --plot / --json")
    args = p.parse_args(argv)
    for out in (args.plot, args.json):
        if out is not None and out.exists() and not args.overwrite:
            p.error(f"{out} exists: pass --overwrite to replace it")
    refs = args.reference * len(args.runs) if len(args.reference) == 1 else args.reference
    if len(refs) != len(args.runs):
        p.error("give one --reference, or one per run")
    zs, doc = [], {"model": args.model, "runs": []}
    for path, (ref, ci) in zip(args.runs, refs, strict=True):
        run = json.loads(path.read_text("utf-8"))
        adj = np.asarray(run["per_wall"][args.model], dtype=np.float64)
        z = zscores(adj, ref, ci, args.sets)
        zs.append(z)
        pooled = float(adj.mean())
        se = float(adj.std(ddof=1) / np.sqrt(len(adj)))
        inside = abs(pooled - ref) <= 2.576 * float(np.hypot(se, ci / 1.96))
        doc["runs"].append({"run": str(path), "agent": run["agent"], "reference": [ref, ci],
                            "sets": args.sets, "z_mean": float(z.mean()), "z_sd": float(z.std(ddof=1)),
                            "adjusted_mean": pooled, "adjusted_se": se,
                            "inside_99": bool(inside)})  # fmt: skip
        print(f"{run['agent']}: {args.sets} sets, z mean {z.mean():+.3f}, sd {z.std(ddof=1):.3f}; "
              f"pooled adjusted {pooled:+.4f} (se {se:.4f}) vs reference {ref:+.3f} +- {ci:.3f}: "
              f"{'inside' if inside else 'OUTSIDE'} the 99% bounds")  # fmt: skip
    allz = np.concatenate(zs)
    doc.update(z_mean=float(allz.mean()), z_sd=float(allz.std(ddof=1)), n_sets=len(allz))
    print(f"all {len(allz)} sets: z mean {allz.mean():+.3f} (se {1 / np.sqrt(len(allz)):.3f}), "
          f"sd {allz.std(ddof=1):.3f}")  # fmt: skip
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.hist(allz, bins=np.linspace(-4, 4, 33), density=True, alpha=0.7, label="wall sets")
        x = np.linspace(-4, 4, 200)
        ax.plot(x, np.exp(-x * x / 2) / np.sqrt(2 * np.pi), "k-", label="N(0, 1)")
        ax.set_xlabel("z-score of a wall set's adjusted mean against the large plain run")
        ax.set_title(
            f"{len(allz)} disjoint wall sets: mean {allz.mean():+.2f}, sd {allz.std(ddof=1):.2f}"
        )
        ax.legend()
        fig.tight_layout()
        save_figure(fig, args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.json is not None:
        from sichuan_env._files import write_atomic

        write_atomic(args.json, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
