"""Learner steps per second of the Gymnasium env ``SichuanMahjong-v0`` (issue #11's goal: 20,000/s).

    python -m benchmarks.gym_env --steps 50000 --repeats 5

The learner plays the first legal action (``action_masks().argmax()``, a
policy that costs next to nothing), so the figure is the env's own speed:
``gymnasium.make`` with its default wrappers, heuristic opponents, obs v1.
Each configuration is timed ``--repeats`` times, interleaved, and reported
as the median with a 95% confidence interval of the median (percentile
bootstrap); the unfused path (opponents as Python agent objects) runs in
the same process as the peer. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np

import sichuan_env  # noqa: F401 - registers SichuanMahjong-v0

from .common import check_json_arg, log, median_ci, print_table, write_results

CONFIGS = {
    "fused (numba opponents)": {"fused_opponents": True},
    "agent objects": {"fused_opponents": False},
}


def steps_per_second(steps: int, seed: int, **kwargs: object) -> float:
    """Learner steps/s of ``steps`` steps of the first-legal-action learner."""
    env = gymnasium.make("SichuanMahjong-v0", **kwargs)
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, done, _, _ = env.step(int(info_mask(env).argmax()))
        if done:
            env.reset()
    return steps / (time.perf_counter() - t0)


def info_mask(env: gymnasium.Env) -> np.ndarray:
    """The learner's legal actions (what MaskablePPO reads)."""
    return env.unwrapped.action_masks()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--steps", type=int, default=50_000, help="learner steps per timing")
    p.add_argument("--repeats", type=int, default=5, help="timings per configuration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json", type=Path, default=None, help="JSON path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error("--steps and --repeats must be >= 1")
    check_json_arg(p, args.json)
    log("warming up (numba compiles on the first run)")
    for kw in CONFIGS.values():  # compile / warm up
        steps_per_second(2000, args.seed, **kw)
    runs: dict[str, list[float]] = {k: [] for k in CONFIGS}
    for r in range(args.repeats):
        log(f"repeat {r + 1}/{args.repeats}")
        for name, kw in CONFIGS.items():
            runs[name].append(steps_per_second(args.steps, args.seed + r, **kw))
    figures = {}
    for name, xs in runs.items():
        med, lo, hi = median_ci(xs)
        figures[name] = {"median": med, "ci95": [lo, hi], "runs": xs}
    fused, slow = (figures[k]["median"] for k in CONFIGS)
    rows = [
        [name, f"{f['median']:,.0f}", f"{f['ci95'][0]:,.0f} - {f['ci95'][1]:,.0f}"]
        for name, f in figures.items()
    ]
    rows.append(["speed-up of the fused path", f"{fused / slow:.2f}x", ""])
    print_table(
        [
            ("SichuanMahjong-v0, heuristic opponents", "left"),
            ("learner steps/s", "right"),
            ("95% CI of the median", "right"),
        ],
        rows,
    )
    write_results(
        "gym_env",
        {"steps": args.steps, "repeats": args.repeats, "figures": figures, "speedup": fused / slow},
        args.json,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
