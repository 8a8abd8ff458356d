"""Two value models' adjusted intervals on the same walls, paired.

    python -m research.luck_scale.paired research/luck_scale/results/distill-1000-s531.json \
        luck runs/value-big/luck.pt

Reads a ``research.table_value.measure`` JSON (per-wall adjusted samples of each model on
the same records) and prints the ratio of the second model's 95% half-width to the
first's, with a bootstrap interval that resamples the walls jointly for both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from research.table_value.measure import ci_ratio


def paired_ratio(a: np.ndarray, b: np.ndarray, boot: int = 4000, seed: int = 0) -> dict:
    """``std(b) / std(a)`` over walls, with a 95% bootstrap interval over walls resampled jointly.

    ``research.table_value.measure.ci_ratio`` with ``a`` as the reference, after checks:
    two finite samples of one length, a reference that varies, a finite answer.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(
            f"two per-wall samples of one length >= 2 expected, got {a.shape}, {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()) or a.std() == 0:
        raise ValueError("the samples must be finite and the first must vary")
    got = ci_ratio(a, b, boot, seed)
    if not np.isfinite([got["ratio"], *got["ci95"]]).all():
        raise ValueError(f"a resample of the first sample does not vary: {got}")
    return got


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_scale.paired", description=__doc__)
    ap.add_argument("json", type=Path)
    ap.add_argument("first")
    ap.add_argument("second")
    args = ap.parse_args(argv)
    per_wall = json.loads(args.json.read_text())["per_wall"]
    for name in (args.first, args.second):
        if name not in per_wall:
            ap.error(f"{name!r} is not among the file's models: {sorted(per_wall)}")
    got = paired_ratio(np.array(per_wall[args.first]), np.array(per_wall[args.second]))
    print(f"{args.second} over {args.first}, 95% half-width on the same walls: "
          f"{got['ratio']:.3f} [{got['ci95'][0]:.3f}, {got['ci95'][1]:.3f}]")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
