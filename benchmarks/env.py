"""Env throughput with observations: the AEC env and VectorEnv against peer envs, same run.

    python -m benchmarks.env            # about a minute
    python -m benchmarks.env --quick

The AEC env runs through ``sichuan_env.env()``'s wrapper with random legal
actions and ``env.last()`` (so an observation is built at every decision).
``VectorEnv`` steps N hands per call with random legal actions picked by a
small numba helper (the agent's cost kept out of the figure), on 1 and 2
cores. ``--agents`` adds VectorEnv with registered agents acting in every
seat (``sichuan_env.agents.registry``; default the heuristic), the env's and the agent's
time together. Peers run their own envs with random agents (``engine_peers.py``).
Prints a table and writes JSON (machine, commit, figures).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba
import numpy as np
from sichuan_env.agents import Agent
from sichuan_env.agents.registry import describe, make_agent

import sichuan_env
from benchmarks import engine_peers
from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env._cli import float_arg, int_arg
from sichuan_env._jit import njit
from sichuan_env.envs.vector import VectorEnv


@njit(parallel=True)
def random_legal(masks, state, out) -> None:
    """A random legal action per row (an LCG per row)."""
    for i in numba.prange(masks.shape[0]):
        s = state[i] * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        state[i] = s
        n = 0
        for a in range(masks.shape[1]):
            n += masks[i, a]
        k = np.int64((s >> np.uint64(33)) % np.uint64(n))
        for a in range(masks.shape[1]):
            if masks[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


def aec(budget: float) -> dict:
    """The AEC env with its wrappers, random legal actions (after one untimed hand: compile / load)."""
    env = sichuan_env.env()
    rng = np.random.default_rng(0)
    env.reset(seed=2**32)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    hands = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        env.reset(seed=hands)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
            decisions += 1
        hands += 1
    return {"hands": hands, "decisions": decisions, "seconds": time.perf_counter() - t0}


def vector(n_envs: int, threads: int, budget: float) -> dict:
    """VectorEnv steps with random legal actions."""
    venv = VectorEnv(n_envs, seed=1)
    _, mask, _ = venv.reset()
    state = np.arange(n_envs, dtype=np.uint64)
    actions = np.zeros(n_envs, dtype=np.int64)
    random_legal(mask, state, actions)
    venv.step(actions)  # compile / load
    numba.set_num_threads(threads)
    steps = hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        random_legal(mask, state, actions)
        _, mask, _, _, done, _ = venv.step(actions)
        steps += 1
        hands += int(done.sum())
    dt = time.perf_counter() - t0
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return {"hands": hands, "decisions": steps * n_envs, "seconds": dt}


def with_agent(agent: Agent, n_envs: int, budget: float) -> dict:
    """VectorEnv steps with every seat played by ``agent`` (the env's and the agent's time)."""
    venv = VectorEnv(n_envs, seed=1, obs_version=agent.obs_version)
    obs, mask, _ = venv.reset()
    obs, mask, _, _, _, _ = venv.step(agent.act_batch(obs, mask))  # compile / load
    steps = hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        obs, mask, _, _, done, _ = venv.step(agent.act_batch(obs, mask))
        steps += 1
        hands += int(done.sum())
    return {"hands": hands, "decisions": steps * n_envs, "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the JSON document it writes."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--budget", type=float_arg(0, 3600), default=4.0, help="seconds per measurement")
    p.add_argument(
        "--envs", type=int_arg(1, 65_536), nargs="*", default=[1024, 4096], help="VectorEnv sizes"
    )
    p.add_argument(
        "--agents",
        nargs="*",
        default=["heuristic"],
        metavar="AGENT",
        help=f"also time VectorEnv with these agents acting ({describe()})",
    )
    p.add_argument(
        "--peers", nargs="*", default=list(engine_peers.RUNNERS), choices=list(engine_peers.RUNNERS)
    )
    p.add_argument("--quick", action="store_true", help="1 s budgets")
    p.add_argument(
        "--json", type=Path, default=None, help="output path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    try:
        agents = {spec: make_agent(spec, seed=0) for spec in args.agents}
    except (ValueError, ImportError) as exc:
        p.error(f"--agents: {exc} ({describe()})")
    if args.quick:
        args.budget = 1.0
    rows = []

    def add(impl: str, mode: str, r: dict) -> None:
        rows.append(
            {
                "implementation": impl,
                "mode": mode,
                **r,
                "decisions_per_s": r["decisions"] / r["seconds"],
            }
        )
        log(f"  {impl} {mode}: {rows[-1]['decisions_per_s']:,.0f} decisions/s")

    add("sichuan_env", "AEC env() + wrappers", aec(args.budget))
    for n in args.envs:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            add(
                "sichuan_env",
                f"VectorEnv x{n}, {threads} core{'s' if threads > 1 else ''}",
                vector(n, threads, args.budget),
            )
    n = args.envs[0] if args.envs else 1024
    for spec, agent in agents.items():
        add("sichuan_env", f"VectorEnv x{n} + {spec} agent", with_agent(agent, n, args.budget))
    peers, skipped = engine_peers.run_all(args.peers, args.budget)
    for name, r in peers.items():
        add(name, "its env, random agents", r)
    aec_rate = rows[0]["decisions_per_s"]
    print_table(
        [
            ("implementation", "left"),
            ("mode", "left"),
            ("decisions/s", "right"),
            ("vs our AEC", "right"),
        ],
        [
            [
                r["implementation"],
                r["mode"],
                f"{r['decisions_per_s']:,.0f}",
                f"{r['decisions_per_s'] / aec_rate:.2f}",
            ]
            for r in rows
        ],
    )
    engine_peers.print_notes(args.peers, skipped)
    return write_results(
        "env",
        {
            "settings": {"budget_s": args.budget, "envs": args.envs, "agents": args.agents},
            "results": rows,
            "skipped": skipped,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
