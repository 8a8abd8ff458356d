"""One decision at a time: the milliseconds an agent takes per decision when nothing is batched.

    python -m research.hybrid.latency --agents distill strongest search --hands 40
    python -m research.hybrid.latency --agents hybrid-won-s64-self --hands 30   # a case of run.py

``research.hybrid.run`` times agents as a duplicate match calls them, many
hands in one call; an interactive host (``sichuan-play``, the PettingZoo env)
asks for one decision at a time. Here one hand is played at a time, the
agent in seat 0 against three heuristics, and every call to the agent is
timed alone (after one warm-up hand). An agent is a registered name or
checkpoint, or a case label of ``research.hybrid.run``. Prints the mean, the
median and the 95th percentile per decision.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sichuan_env.agents.registry import make_agent

from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.envs.vector import VectorEnv


def latencies(spec: str, hands: int, seed: int) -> np.ndarray:
    """Seconds of each of the agent's decisions over ``hands`` hands played one at a time."""
    from research.hybrid.run import CASES, build

    agent = build(CASES[spec], seed) if spec in CASES else make_agent(spec, seed)
    heuristic = make_agent("heuristic", seed)
    reads = bool(getattr(agent, "reads_state", False))
    spec = get_obs_version(agent.obs_version)
    env = VectorEnv(1)
    rules = env.rules.as_array()
    out: list[float] = []
    for hand in range(hands + 1):  # hand 0 warms up (numba, torch)
        obs, mask, seat = env.reset(seeds=np.array([seed * 100_003 + hand], np.uint64))
        done = False
        while not done:
            if seat[0] == 0:
                t0 = time.perf_counter()
                states = env.states_of(np.array([0]))
                if reads:
                    a = agent.act_states(states, mask)  # type: ignore[attr-defined]
                else:  # the agent's own observation version, from the state
                    own = np.zeros((1, *spec.shape()), np.uint8)
                    spec.encode_batch(states, np.zeros(1, np.int64), False, rules, own)
                    a = agent.act_batch(own, mask)
                if hand:
                    out.append(time.perf_counter() - t0)
            else:
                a = heuristic.act_batch(obs, mask)
            obs, mask, seat, _, over, _ = env.step(np.asarray(a, np.int64))
            done = bool(over[0])
    return np.asarray(out)


def main(argv: list[str] | None = None) -> int:
    """Time each agent; print one line each."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--agents", nargs="+", default=["distill", "strongest", "search"])
    p.add_argument("--hands", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.hands < 1 or args.seed < 0:
        p.error("--hands must be >= 1 and --seed >= 0")
    for spec in args.agents:
        ms = 1e3 * latencies(spec, args.hands, args.seed)
        print(
            f"{spec:26s} {len(ms):6d} decisions  mean {ms.mean():7.2f} ms  "
            f"median {np.median(ms):7.2f} ms  p95 {np.quantile(ms, 0.95):7.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
