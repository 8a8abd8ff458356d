"""The from-scratch PPO curve: points per hand against three heuristics over env steps.

    python -m research.from_scratch_ppo.plot runs/cleanrl/metrics.jsonl \
        --out research/from_scratch_ppo/results/curve.png --json research/from_scratch_ppo/results/summary.json

Reads the metrics of ``examples/cleanrl_ppo.py --metrics FILE`` (one JSON row per
update, then the final greedy evaluation) and draws the sampling policy's
points per hand (the rollout window's rewards over its finished hands, a
moving average over ``--smooth`` updates) against the learner steps, with the
heuristic's parity (0) and the random policy (-3.67, 2,500 walls) as
references, and the final greedy evaluation as a point.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

RANDOM = -3.67
"""``random`` against three heuristics (``sichuan-eval``, 2,500 walls, seed 0)."""


def read_metrics(path: Path) -> tuple[list[dict], dict | None]:
    """The update rows and the final evaluation row (None if the run did not finish).

    Raises:
        ValueError: a file that is not such a metrics file.
    """
    rows, final = [], None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from None
    for k, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{path} line {k}: not JSON") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path} line {k}: not an object")
        if "eval_hands" in row:
            final = row
            continue
        for key in ("env_steps", "points_per_hand", "steps_per_s"):
            v = row.get(key)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{path} line {k}: {key!r} must be a finite number")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no update rows")
    return rows, final


def summarize(rows: list[dict], final: dict | None, smooth: int) -> dict:
    """The curve's summary: steps, wall-clock, the last smoothed value, the final evaluation."""
    y = np.array([r["points_per_hand"] for r in rows])
    k = max(1, min(smooth, len(y)))
    last = float(y[-k:].mean())
    steps = int(rows[-1]["env_steps"])
    return {
        "updates": len(rows),
        "env_steps": steps,
        "wall_clock_s": steps / float(rows[-1]["steps_per_s"]),
        "sampling_points_per_hand_last": last,
        "greedy_eval": final,
    }


def plot(rows: list[dict], final: dict | None, out: Path, smooth: int) -> None:
    """Draw the curve (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.array([r["env_steps"] for r in rows]) / 1e6
    y = np.array([r["points_per_hand"] for r in rows])
    k = max(1, min(smooth, len(y)))
    ys = np.convolve(y, np.ones(k) / k, mode="valid")
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, y, color="tab:blue", alpha=0.25, lw=0.8, label="per update (sampling policy)")
    ax.plot(x[k - 1 :], ys, color="tab:blue", lw=2, label=f"moving average of {k}")
    ax.axhline(0, color="tab:green", ls="--", lw=1, label="heuristic parity")
    ax.axhline(RANDOM, color="tab:red", ls=":", lw=1, label="random policy")
    if final is not None:
        ax.plot([x[-1]], [final["points_per_hand"]], "o", color="black",
                label=f"greedy, {final['eval_hands']} hands")  # fmt: skip
    ax.set_xlabel("learner steps (millions)")
    ax.set_ylabel("points per hand against 3 heuristics")
    ax.set_title("PPO from scratch (examples/cleanrl_ppo.py, batched env)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the summary."""
    p = argparse.ArgumentParser(prog="python -m research.from_scratch_ppo.plot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("metrics", type=Path)
    p.add_argument("--out", type=Path, default=Path("research/from_scratch_ppo/results/curve.png"))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--smooth", type=int, default=20)
    args = p.parse_args(argv)
    if args.smooth < 1:
        p.error("--smooth must be >= 1")
    try:
        rows, final = read_metrics(args.metrics)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    summary = summarize(rows, final, args.smooth)
    plot(rows, final, args.out, args.smooth)
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
