"""Cold start: a fresh install's time to its first result, numba compiling everything it needs.

    python -m benchmarks.cold_start                 # every case, cold then warm, once (~3 min)
    python -m benchmarks.cold_start --repeats 3     # medians of 3
    python -m benchmarks.cold_start --cases aec_step aec_hand

Each case runs in a fresh subprocess with an empty numba cache
(``NUMBA_CACHE_DIR``) and an empty table cache (``SICHUAN_ENV_CACHE_DIR``),
both temporary directories, so the caches of the checkout (``__pycache__``)
and of other users are neither read nor disturbed. It then runs again on the
caches the cold run left (warm: what every later run costs). Cases:

- ``first_match``: the first match of the docs (README, "Agents and
  command-line tools"; Getting started, "A first match"):
  ``sichuan-eval --lineup distill heuristic heuristic heuristic --walls 250``
  (``--walls`` sets the number), as ``python -m sichuan_env.agents.eval``, scored by
  its default, the advantage-sum estimate; ``first_match_luck``: the same match with
  ``--estimator luck``;
- ``aec_hand``: the README's first AEC loop, one hand of ``sichuan_env.env()``
  with the ``HeuristicAgent`` in every seat, then the game record;
- ``aec_step``: ``import sichuan_env``, ``env()``, ``reset``, ``last`` and one ``step``.

Reported: wall seconds (the figure a user waits) and CPU seconds of the
process (user + system: what a loaded machine does not inflate much; the
compiler is single-threaded). Prints a table and writes JSON like the other
benchmarks.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env._cli import int_arg

AEC_HAND = """
import sichuan_env
from sichuan_env.agents import HeuristicAgent

env = sichuan_env.env()
env.reset(seed=0)
agent = HeuristicAgent()
for name in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    action = None if terminated or truncated else agent.act(obs["observation"], obs["action_mask"])
    env.step(action)
env.unwrapped.game.record()
"""

AEC_STEP = """
import numpy as np
import sichuan_env

env = sichuan_env.env()
env.reset(seed=0)
obs, reward, terminated, truncated, info = env.last()
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
"""

CASES = {
    "first_match": "sichuan-eval --lineup distill heuristic heuristic heuristic --walls {walls}",
    "first_match_luck": "the same with --estimator luck (the luck adjustment's kernels)",
    "aec_hand": "the README's AEC loop: one hand, HeuristicAgent in every seat",
    "aec_step": "import, env(), reset, last, one step",
}


def command(case: str, walls: int) -> list[str]:
    """The child's command line."""
    if case.startswith("first_match"):
        lineup = ["distill", "heuristic", "heuristic", "heuristic"]
        luck = ["--estimator", "luck"] if case == "first_match_luck" else []
        return [sys.executable, "-m", "sichuan_env.agents.eval", "--lineup", *lineup,
                "--walls", str(walls), *luck]  # fmt: skip
    return [sys.executable, "-c", AEC_HAND if case == "aec_hand" else AEC_STEP]


def run_once(cmd: list[str], numba_dir: str, table_dir: str) -> dict:
    """Run ``cmd`` with the given cache directories; wall and CPU seconds of the child."""
    env = {**os.environ, "NUMBA_CACHE_DIR": numba_dir, "SICHUAN_ENV_CACHE_DIR": table_dir}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        log(out.stderr[-2000:])
        raise SystemExit(f"{' '.join(cmd[:4])} ...: exit status {out.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def measure(case: str, walls: int) -> dict:
    """One cold run on empty caches, then one warm run on what it cached."""
    cmd = command(case, walls)
    with tempfile.TemporaryDirectory() as numba_dir, tempfile.TemporaryDirectory() as table_dir:
        cold = run_once(cmd, numba_dir, table_dir)
        warm = run_once(cmd, numba_dir, table_dir)
    return {"cold": cold, "warm": warm}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the JSON document it writes."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--repeats", type=int_arg(1, 20), default=1, help="runs per case (medians)")
    p.add_argument("--walls", type=int_arg(1, 100_000), default=250, help="walls of first_match")
    p.add_argument(
        "--json", type=Path, default=None, help="output path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    load = os.getloadavg()[0]
    rows = []
    for case in args.cases:
        runs = []
        for k in range(args.repeats):
            runs.append(measure(case, args.walls))
            r = runs[-1]
            log(
                f"  {case} run {k + 1}: cold {r['cold']['wall_s']:.1f} s "
                f"(cpu {r['cold']['cpu_s']:.1f}), warm {r['warm']['wall_s']:.1f} s"
            )

        def med(phase: str, key: str, runs: list[dict] = runs) -> float:
            return float(np.median([r[phase][key] for r in runs]))

        rows.append(
            {
                "case": case,
                "what": CASES[case].format(walls=args.walls),
                "runs": runs,
                **{f"{ph}_{k}": med(ph, k) for ph in ("cold", "warm") for k in ("wall_s", "cpu_s")},
            }
        )
    print_table(
        [
            ("case", "left"),
            ("what", "left"),
            ("cold wall s", "right"),
            ("cold cpu s", "right"),
            ("warm wall s", "right"),
            ("warm cpu s", "right"),
        ],
        [
            [
                r["case"],
                r["what"],
                f"{r['cold_wall_s']:.1f}",
                f"{r['cold_cpu_s']:.1f}",
                f"{r['warm_wall_s']:.1f}",
                f"{r['warm_cpu_s']:.1f}",
            ]
            for r in rows
        ],
    )
    print(f"load average before the runs: {load:.2f} on {os.cpu_count()} cores; medians of "
          f"{args.repeats} run(s)")  # fmt: skip
    return write_results(
        "cold_start",
        {
            "settings": {"cases": args.cases, "repeats": args.repeats, "walls": args.walls},
            "load_average_1min": load,
            "results": rows,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
