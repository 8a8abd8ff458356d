"""Engine throughput: random self-play hands/s and decisions/s, against peers in the same run.

    python -m benchmarks.engine            # about a minute
    python -m benchmarks.engine --quick

sichuan_env is timed three ways: the all-numba loop (``engine/selfplay.py``,
uniformly random legal decisions) on 1 and 2 cores, the batched
``step_batch`` driven from Python with random actions (what the vector env
does), and the ``Game`` facade (action ids, and action strings). Peers that
simulate whole hands and install from the registry are timed with random
agents for the same budget (``benchmarks/engine_peers.py``). Also measured:
the cold start of a fresh process (import + tables + first hand). Prints a
table and writes JSON (machine, commit, figures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from benchmarks import engine_peers
from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env import Game, RuleConfig
from sichuan_env._cli import float_arg, int_arg
from sichuan_env.engine import batch, selfplay
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules


def numba_loop(hands: int, threads: int, policy: int) -> dict:
    """The all-numba self-play loop over ``hands`` seeds."""
    tables = get_tables()
    rules = kernel_rules(RuleConfig())
    states = np.zeros(hands, dtype=STATE_DTYPE)
    seeds = np.arange(hands, dtype=np.uint64)
    args = (rules, tables["FLAGS"], tables["WAITS"], tables["DIST"])
    selfplay.play_batch(states[:64], seeds[:64], policy, *args)  # compile / load
    numba.set_num_threads(threads)
    times = []
    decisions = 0
    for _ in range(3):
        t0 = time.perf_counter()
        decisions = int(selfplay.play_batch(states, seeds, policy, *args).sum())
        times.append(time.perf_counter() - t0)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    dt = float(np.median(times))
    return {"hands": hands, "decisions": decisions, "seconds": dt}


def step_batch_loop(n_envs: int, budget: float) -> dict:
    """``step_batch`` called from Python with random legal actions (no observations)."""
    tables = get_tables()
    rules = kernel_rules(RuleConfig())
    states = np.zeros(n_envs, dtype=STATE_DTYPE)
    masks = np.zeros((n_envs, ACTION_SPACE), dtype=np.int8)
    seed_base = np.arange(n_envs, dtype=np.uint64)
    hand_no = np.zeros(n_envs, dtype=np.int64)
    rewards = np.zeros((n_envs, 4), np.int64)
    done = np.zeros(n_envs, np.bool_)
    final = np.zeros((n_envs, 4), np.int64)
    status = np.zeros(n_envs, np.int8)
    batch.reset_batch(states, seed_base, hand_no, masks, rules, tables["FLAGS"])
    rng = np.random.default_rng(0)
    args = (rules, tables["FLAGS"], tables["WAITS"])
    batch.step_batch(
        states, masks.argmax(axis=1), seed_base, hand_no, masks, rewards, done, final, status, *args
    )  # compile / load
    steps = hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        # a random legal action per hand: argmax of random noise over the mask
        noise = rng.random((n_envs, ACTION_SPACE), dtype=np.float32) * masks
        actions = noise.argmax(axis=1)
        batch.step_batch(
            states, actions, seed_base, hand_no, masks, rewards, done, final, status, *args
        )
        steps += 1
        hands += int(done.sum())
    dt = time.perf_counter() - t0
    return {"hands": hands, "decisions": steps * n_envs, "seconds": dt}


def facade_loop(budget: float, strings: bool) -> dict:
    """``Game`` with random legal decisions (ids via ``step_id``, or strings via ``step``)."""
    rng = np.random.default_rng(0)
    warm = Game(seed=10**9)  # compile / load first: the timed loop leaves the compile out
    while not warm.is_over():
        if strings:
            warm.step(warm.legal()[0])
        else:
            warm.step_id(int(warm.legal_ids()[0]))
    hands = decisions = 0
    t0 = time.perf_counter()
    seed = 0
    while time.perf_counter() - t0 < budget:
        game = Game(seed=seed)
        seed += 1
        while not game.is_over():
            if strings:
                legal = game.legal()
                game.step(legal[rng.integers(len(legal))])
            else:
                legal = game.legal_ids()
                game.step_id(int(legal[rng.integers(len(legal))]))
            decisions += 1
        hands += 1
    return {"hands": hands, "decisions": decisions, "seconds": time.perf_counter() - t0}


def cold_start(compile_too: bool) -> float:
    """Seconds for a fresh interpreter to import, load the tables and play one hand.

    With ``compile_too`` the numba and table caches point at an empty folder,
    so every kernel the hand needs is compiled (a first run after install).
    """
    code = (
        "import time; t=time.perf_counter(); from sichuan_env import Game; g=Game(seed=1)\n"
        "while not g.is_over(): g.step(g.legal()[0])\n"
        "print(time.perf_counter()-t)"
    )
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if compile_too:
            env["NUMBA_CACHE_DIR"] = tmp
            env["SICHUAN_ENV_CACHE_DIR"] = tmp
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
    return float(out.stdout.strip().splitlines()[-1])


def _row(impl: str, mode: str, r: dict) -> dict:
    return {
        "implementation": impl,
        "mode": mode,
        **r,
        "hands_per_s": r["hands"] / r["seconds"],
        "decisions_per_s": r["decisions"] / r["seconds"],
    }


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the JSON document it writes."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--hands", type=int_arg(1, 1_000_000), default=50_000, help="hands for the all-numba loop"
    )
    p.add_argument(
        "--budget", type=float_arg(0, 3600), default=5.0, help="seconds per facade / peer run"
    )
    p.add_argument(
        "--envs", type=int_arg(1, 65_536), default=4096, help="hands stepped together by step_batch"
    )
    p.add_argument(
        "--peers", nargs="*", default=list(engine_peers.RUNNERS), choices=list(engine_peers.RUNNERS)
    )
    p.add_argument("--quick", action="store_true", help="10k hands, 1 s budgets")
    p.add_argument(
        "--json", type=Path, default=None, help="output path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    if args.quick:
        args.hands, args.budget = 10_000, 1.0

    rows = []
    log("fresh process (import + tables + one hand):")
    cold = {"warm_cache_s": cold_start(False), "cold_compile_s": cold_start(True)}
    log(f"  cache warm {cold['warm_cache_s']:.2f} s, cold compile {cold['cold_compile_s']:.1f} s")
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        r = numba_loop(args.hands, threads, selfplay.RANDOM)
        mode = f"all-numba loop, {threads} core{'s' if threads > 1 else ''}"
        rows.append(_row("sichuan_env", mode, r))
        log(f"  {mode}: {rows[-1]['decisions_per_s'] / 1e6:.2f} M decisions/s")
    r = step_batch_loop(args.envs, args.budget)
    rows.append(_row("sichuan_env", f"step_batch x{args.envs} from Python", r))
    log(f"  step_batch: {rows[-1]['decisions_per_s'] / 1e6:.2f} M decisions/s")
    for strings in (False, True):
        mode = "Game facade, " + ("action strings" if strings else "action ids")
        rows.append(_row("sichuan_env", mode, facade_loop(args.budget, strings)))
        log(f"  {mode}: {rows[-1]['decisions_per_s']:,.0f} decisions/s")
    peers, skipped = engine_peers.run_all(args.peers, args.budget)
    for name, r in peers.items():
        rows.append(_row(name, "random agents", r))
        log(f"  {name}: {rows[-1]['decisions_per_s']:,.0f} decisions/s")

    best = max(r["decisions_per_s"] for r in rows if r["implementation"] == "sichuan_env")
    print_table(
        [
            ("implementation", "left"),
            ("mode", "left"),
            ("hands/s", "right"),
            ("decisions/s", "right"),
            ("ours x", "right"),
        ],
        [
            [
                r["implementation"],
                r["mode"],
                f"{r['hands_per_s']:,.0f}",
                f"{r['decisions_per_s']:,.0f}",
                f"{best / r['decisions_per_s']:.1f}",
            ]
            for r in rows
        ],
    )
    print(
        f"\nfresh process, import + tables + one hand: {cold['warm_cache_s']:.2f} s with the "
        f"numba cache warm, {cold['cold_compile_s']:.1f} s compiling from scratch"
    )
    engine_peers.print_notes(args.peers, skipped)
    return write_results(
        "engine",
        {
            "settings": {"hands": args.hands, "budget_s": args.budget, "envs": args.envs},
            "start": cold,
            "results": rows,
            "notes": {k: engine_peers.NOTES[k] for k in args.peers},
            "skipped": skipped,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
