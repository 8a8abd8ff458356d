"""Plot the fresh-wall confirmation of the value-leaf rounds (``confirm.sh``'s paired JSON).

Left: each round's network against three heuristics (luck-adjusted, 95%); right: each
round minus the round before it and the last round minus round 0, paired wall by wall.

    python -m research.leaf_rounds.plot_confirm --seed 4401
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RESULTS = Path(__file__).parent / "results"


def _read(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in ("a_adjusted", "b_adjusted", "a_minus_b_adjusted", "walls"):
        if key not in data:
            raise ValueError(f"{path}: not a research.exit.paired result (no {key!r})")
    for key in ("a_adjusted", "b_adjusted", "a_minus_b_adjusted"):
        v = data[key]
        if not all(
            isinstance(v.get(f), (int, float)) and math.isfinite(v[f]) for f in ("mean", "ci95")
        ):
            raise ValueError(f"{path}: {key} must hold finite mean and ci95, got {v!r}")
    return data


def main(argv: list[str] | None = None) -> None:
    """Read the paired results of one seed and write the two-panel plot."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=4401)
    ap.add_argument("--out", type=Path, default=RESULTS / "confirm.png")
    args = ap.parse_args(argv)
    steps = []
    k = 1
    while (p := RESULTS / f"confirm-seed{args.seed}-r{k}-minus-r{k - 1}.json").exists():
        steps.append(_read(p))
        k += 1
    if not steps:
        raise SystemExit(f"no confirm-seed{args.seed}-r1-minus-r0.json under {RESULTS}")
    levels = [steps[0]["b_adjusted"]] + [s["a_adjusted"] for s in steps]
    diffs = [(f"r{i + 1} − r{i}", s["a_minus_b_adjusted"]) for i, s in enumerate(steps)]
    total = RESULTS / f"confirm-seed{args.seed}-r{len(steps)}-minus-r0.json"
    if total.exists():
        diffs.append((f"r{len(steps)} − r0", _read(total)["a_minus_b_adjusted"]))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax1.errorbar(range(len(levels)), [v["mean"] for v in levels],
                 yerr=[v["ci95"] for v in levels], fmt="o", capsize=4)  # fmt: skip
    ax1.set_xticks(range(len(levels)), ["r0 (distill)"] + [f"r{i}" for i in range(1, len(levels))])
    ax1.set_ylabel("points / hand vs 3 heuristics (adjusted, 95%)")
    ax1.set_title(f"each round, {steps[0]['walls']:,} fresh walls (seed {args.seed})")
    ax2.errorbar(range(len(diffs)), [d["mean"] for _, d in diffs],
                 yerr=[d["ci95"] for _, d in diffs], fmt="o", color="tab:orange", capsize=4)  # fmt: skip
    ax2.axhline(0, color="grey", lw=0.8)
    ax2.set_xticks(range(len(diffs)), [n for n, _ in diffs])
    ax2.set_ylabel("paired difference (adjusted, 95%)")
    ax2.set_title("round against round, same walls")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=args.out.parent)
    os.close(fd)
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
