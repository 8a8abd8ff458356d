"""Learner steps per second of the Gymnasium env ``SichuanMahjong-v0``, single and batched.

    python -m benchmarks.gym_env --steps 50000 --repeats 5 --num-envs 64 256 1024

The learner plays the first legal action (``action_masks().argmax()``, a
policy that costs next to nothing), so the figure is the env's own speed,
heuristic opponents, obs v1:

- ``gymnasium.make`` with its default wrappers (issue #11's goal: 20,000/s),
  with the opponents in numba (fused) and as Python agent objects;
- ``gymnasium.make_vec(..., num_envs=N)``, the batched env
  (``sichuan_env.agents.gym.vector``: all N hands in one numba call per step),
  for each ``--num-envs`` (the goal: 100,000/s at N = 1,024). Its learner steps
  are the actions applied: a step that autoresets an env (NEXT_STEP) does not
  count for that env.

Each configuration is timed ``--repeats`` times, interleaved, and reported
as the median with a 95% confidence interval of the median (percentile
bootstrap), beside the median learner steps per CPU-second of the process
(on a shared machine, what the cores it got delivered; the JSON keeps the
load average). Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import os
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
    return timed_steps(steps, seed, **kwargs)[0]


def timed_steps(steps: int, seed: int, **kwargs: object) -> tuple[float, float]:
    """``(learner steps per wall second, per CPU second of this process)`` of the single env."""
    env = gymnasium.make("SichuanMahjong-v0", **kwargs)
    env.reset(seed=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        _, _, done, _, _ = env.step(int(info_mask(env).argmax()))
        if done:
            env.reset()
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def info_mask(env: gymnasium.Env) -> np.ndarray:
    """The learner's legal actions (what MaskablePPO reads)."""
    return env.unwrapped.action_masks()


def batched_timed_steps(steps: int, seed: int, num_envs: int) -> tuple[float, float]:
    """``(learner steps per wall second, per CPU second)`` of the batched env, >= ``steps`` steps."""
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=num_envs)
    envs.reset(seed=seed)
    done = np.zeros(num_envs, dtype=bool)
    counted = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while counted < steps:
        counted += num_envs - int(done.sum())  # autoresetting envs apply no action
        _, _, done, _, _ = envs.step(envs.action_masks().argmax(axis=1))
    return counted / (time.perf_counter() - t0), counted / (time.process_time() - c0)


def batched_name(num_envs: int) -> str:
    """The table row of the batched env with ``num_envs`` envs."""
    return f"make_vec, {num_envs:,} envs (one numba call)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--steps", type=int, default=50_000, help="learner steps per timing")
    p.add_argument("--repeats", type=int, default=5, help="timings per configuration")
    p.add_argument(
        "--num-envs",
        type=int,
        nargs="*",
        default=[64, 256, 1024],
        help="batched env sizes to time (none: only the single env)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json", type=Path, default=None, help="JSON path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error("--steps and --repeats must be >= 1")
    if any(not 1 <= n <= 1 << 20 for n in args.num_envs):
        p.error("--num-envs must be in [1, 2**20]")
    check_json_arg(p, args.json)
    log("warming up (numba compiles on the first run)")
    for kw in CONFIGS.values():  # compile / warm up
        timed_steps(2000, args.seed, **kw)
    for n in args.num_envs:
        batched_timed_steps(2 * n, args.seed, n)
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in CONFIGS}
    runs.update({batched_name(n): [] for n in args.num_envs})
    for r in range(args.repeats):
        log(f"repeat {r + 1}/{args.repeats}")
        for name, kw in CONFIGS.items():
            runs[name].append(timed_steps(args.steps, args.seed + r, **kw))
        for n in args.num_envs:
            runs[batched_name(n)].append(batched_timed_steps(args.steps, args.seed + r, n))
    figures = {}
    for name, pairs in runs.items():
        xs = [wall for wall, _ in pairs]
        med, lo, hi = median_ci(xs)
        cpu = float(np.median([c for _, c in pairs]))
        figures[name] = {"median": med, "ci95": [lo, hi], "runs": xs, "per_cpu_second": cpu}
    fused, slow = (figures[k]["median"] for k in CONFIGS)
    rows = [
        [
            name,
            f"{f['median']:,.0f}",
            f"{f['ci95'][0]:,.0f} - {f['ci95'][1]:,.0f}",
            f"{f['per_cpu_second']:,.0f}",
        ]
        for name, f in figures.items()
    ]
    rows.append(["speed-up of the fused path", f"{fused / slow:.2f}x", "", ""])
    batched = {n: figures[batched_name(n)]["median"] / fused for n in args.num_envs}
    for n, x in batched.items():
        rows.append([f"speed-up of {n:,} batched envs over fused", f"{x:.2f}x", "", ""])
    print_table(
        [
            ("SichuanMahjong-v0, heuristic opponents, obs v1", "left"),
            ("learner steps/s", "right"),
            ("95% CI of the median", "right"),
            ("per CPU-second", "right"),
        ],
        rows,
    )
    write_results(
        "gym_env",
        {
            "steps": args.steps,
            "repeats": args.repeats,
            "num_envs": args.num_envs,
            "figures": figures,
            "speedup": fused / slow,
            "batched_speedup": {str(n): x for n, x in batched.items()},
            "load_average": list(os.getloadavg()),
        },
        args.json,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
