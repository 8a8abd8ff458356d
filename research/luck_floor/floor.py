"""The floor under any luck adjustment of a duplicate match: how much each deal favours the agent.

    python -m research.luck_floor.floor --agent distill --deals 1000 --reps 8 --seed 601 \
        --out research/luck_floor/results/distill-1000x8-s601.json

A duplicate match scores an agent by its mean over a wall's four rotations, ``x``.
Its variance splits into the part the deal decides and the part the draws after it
(and any sampled actions) decide:

    Var x = Var_d E[x | deal] + E_d Var[x | deal]

A luck correction made at the draws (zero-mean given the past) can remove at most the
second part; a lineup-blind correction of the deal cancels over the four rotations
(each seat's dealt tiles reach the agent once), and a lineup-aware one would contain
the skill being measured. So ``sqrt(Var_d E[x | deal] / Var x)`` is the least CI ratio
any such adjustment can reach, whatever its value model.

Measured directly: each of ``deals`` deals (the wall seeds of a duplicate match) is
played ``reps`` times, every time with the undealt part of the wall (positions
53..107: every draw, replacement draws included) in a fresh random order and the four
rotations sharing it. With ``x[d, r]`` the agent's rotation mean, the one-way
analysis of variance gives ``Var_d E[x | deal] = var_d(mean_r x) - mean_d(s_d^2) / reps``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
from rich.progress import track
from sichuan_env.agents.eval.evaluate import make_lineup_agents, wall_seeds_of

from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic
from sichuan_env.envs.acting import Decisions, SeatMemory, ask
from sichuan_env.envs.vector import VectorEnv

RULES = RuleConfig.preset("xuezhan")
DEALT = 53
"""Wall positions ``0..52`` are dealt (13 to each seat, the dealer's 14th)."""


def reorder(rng: np.random.Generator, n: int) -> np.ndarray:
    """``int64[n, 55]``: a random order of the undealt positions ``53..107`` for each of ``n``."""
    return np.argsort(rng.random((n, 108 - DEALT)), axis=1) + DEALT


def play(
    lineup: list[str], seeds: np.ndarray, orders: np.ndarray | None, agents: dict
) -> np.ndarray:
    """``int64[4 len(seeds), 4]``: every slot's points, each seed dealt under four rotations.

    Slot ``4 j + r`` is seed ``j`` under rotation ``r``, its undealt wall put in
    ``orders[j]`` (None: as dealt).
    """
    n = len(seeds) * 4
    versions = Counter(a.obs_version for a in agents.values())
    venv = VectorEnv(n, rules=RULES, obs_version=versions.most_common(1)[0][0])
    obs, mask, seat = venv.reset(seeds=np.repeat(seeds, 4))
    if orders is not None:
        walls = venv._states["wall"]  # before any draw: only the order moves
        idx = np.repeat(orders, 4, axis=0)
        walls[:, DEALT:] = np.take_along_axis(walls, idx, axis=1)
    rotation = np.tile(np.arange(4), len(seeds))
    names_of = np.array(lineup)
    finished = np.zeros(n, dtype=bool)
    points = np.zeros((n, 4), np.int64)
    actions = np.zeros(n, dtype=np.int64)
    memory = SeatMemory(n)
    while not finished.all():
        names = names_of[(seat + rotation) % 4]
        actions[:] = mask.argmax(axis=1)
        decisions = Decisions(venv.states_of(np.arange(n)), mask, RULES, seat, obs=obs,
                              obs_version=venv.obs_version, memory=memory)  # fmt: skip
        for name, agent in agents.items():
            rows = np.flatnonzero((names == name) & ~finished)
            if rows.size:
                actions[rows] = ask(agent, decisions, rows)
        obs, mask, seat, rewards, done, _ = venv.step(actions)
        points[~finished] += rewards[~finished]
        finished |= done
    return points


def agent_means(points: np.ndarray, lineup: list[str], agent: str) -> np.ndarray:
    """``float[len(points) // 4]``: ``agent``'s mean points per hand over each wall's rotations."""
    walls = len(points) // 4
    total = np.zeros(walls)
    count = np.zeros(walls)
    for slot in range(len(points)):
        rot = slot % 4
        for s in range(4):
            if lineup[(s + rot) % 4] == agent:
                total[slot // 4] += points[slot, s]
                count[slot // 4] += 1
    return total / count


def floor(x: np.ndarray, boot: int = 2000, seed: int = 0) -> dict:
    """The variance split of ``x[deal, rep]`` and the floor ratio, with a bootstrap over deals."""

    def split(a: np.ndarray) -> tuple[float, float, float]:
        within = float(a.var(axis=1, ddof=1).mean())
        between = float(a.mean(axis=1).var(ddof=1) - within / a.shape[1])
        total = float(a.var(ddof=1))
        return total, between, within

    total, between, within = split(x)
    rng = np.random.default_rng(seed)
    rs = []
    for _ in range(boot):
        t, b, _ = split(x[rng.integers(0, len(x), len(x))])
        rs.append(np.sqrt(max(b, 0.0) / t))
    return {"var_total": total, "var_between_deals": between, "var_within_deal": within,
            "floor_ratio": float(np.sqrt(max(between, 0.0) / total)),
            "floor_ci95": [float(np.quantile(rs, 0.025)), float(np.quantile(rs, 0.975))]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_floor.floor", description=__doc__)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--chunk", type=int, default=128, help="deals played at once")
    ap.add_argument("--seed", type=int, default=601)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.deals < 4 or args.reps < 2:
        ap.error("--deals at least 4 and --reps at least 2")
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent, args.opponent, args.opponent, args.opponent]
    agents = make_lineup_agents(lineup, args.seed)
    seeds = wall_seeds_of(args.deals, args.seed)
    rng = np.random.default_rng([args.seed, 1])
    x = np.zeros((args.deals, args.reps))
    t0 = time.perf_counter()
    for first in track(range(0, args.deals, args.chunk), description="deals"):
        chunk = seeds[first : first + args.chunk]
        for r in range(args.reps):
            pts = play(lineup, chunk, reorder(rng, len(chunk)), agents)
            x[first : first + len(chunk), r] = agent_means(pts, lineup, args.agent)
    secs = time.perf_counter() - t0
    doc = {"agent": args.agent, "opponent": args.opponent, "deals": args.deals,
           "reps": args.reps, "seed": args.seed, "seconds": secs,
           "mean": float(x.mean()), **floor(x), "x": x.round(6).tolist()}  # fmt: skip
    print(f"{args.agent} vs 3 {args.opponent}: {args.deals} deals x {args.reps} orders of the "
          f"undealt wall, mean {doc['mean']:+.3f}, per-wall variance {doc['var_total']:.3f} = "
          f"between deals {doc['var_between_deals']:.3f} + within {doc['var_within_deal']:.3f}; "
          f"floor CI ratio {doc['floor_ratio']:.3f} [{doc['floor_ci95'][0]:.3f}, "
          f"{doc['floor_ci95'][1]:.3f}] ({secs:.0f} s)")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
