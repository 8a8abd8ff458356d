"""Duplicate matches between agents: the same walls, the agents rotated through the seats.

    python -m agents.evaluate --walls 500 --lineup heuristic random random random

Every wall is played four times, the lineup rotated by one seat each time,
so luck of the deal cancels out. Reported per agent: points per hand with a
95% confidence interval (one sample per wall: the agent's mean over its
seats and rotations), win rate, deal-in rate (paid a win on its discard or
its robbed kong), average fan of its wins, and at exhaustive draws the
flower-pig and not-tenpai rates. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv

AGENTS = {"heuristic": HeuristicAgent, "random": RandomAgent}


def _make(name: str, seed: int) -> Any:
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {sorted(AGENTS)}")
    return AGENTS[name](seed) if name == "random" else AGENTS[name]()


def play_duplicate(
    lineup: list[str], walls: int, rules: RuleConfig, seed: int = 0, progress: bool = True
) -> list[tuple[int, int, dict]]:
    """Play every wall under the four rotations; ``[(wall, rotation, record)]``."""
    if len(lineup) != 4:
        raise ValueError(f"a lineup names 4 agents, got {len(lineup)}")
    if walls < 1:
        raise ValueError(f"walls must be >= 1, got {walls}")
    agents = {name: _make(name, seed + k) for k, name in enumerate(sorted(set(lineup)))}
    n = walls * 4
    venv = VectorEnv(n, rules=rules)
    wall_seeds = np.random.default_rng(seed).integers(0, 2**62, size=walls)
    obs, mask, seat = venv.reset(seeds=np.repeat(wall_seeds, 4))
    rotation = np.tile(np.arange(4), walls)
    lineup_arr = np.array(lineup)
    finished = np.zeros(n, dtype=bool)
    records: list[tuple[int, int, dict]] = []
    t_last = time.perf_counter()
    actions = np.zeros(n, dtype=np.int64)
    while not finished.all():
        names = lineup_arr[(seat + rotation) % 4]
        actions[:] = mask.argmax(axis=1)  # finished slots: any legal action
        for name, agent in agents.items():
            idx = np.flatnonzero((names == name) & ~finished)
            if idx.size:
                actions[idx] = agent.act_batch(obs[idx], mask[idx])
        obs, mask, seat, _, done, _ = venv.step(actions)
        for i in np.flatnonzero(done & ~finished):
            finished[i] = True
            records.append((int(i // 4), int(rotation[i]), venv.record(int(i))))
        if progress and time.perf_counter() - t_last > 1.0:
            t_last = time.perf_counter()
            print(f"\r  hands {finished.sum():>6}/{n}", end="", file=sys.stderr, flush=True)
    if progress:
        print(f"\r  hands {n:>6}/{n}", file=sys.stderr)
    return records


def summarize(lineup: list[str], records: list[tuple[int, int, dict]], walls: int) -> dict:
    """Per-agent statistics of a duplicate match."""
    stats: dict[str, dict[str, Any]] = {}
    per_wall: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    for name in sorted(set(lineup)):
        stats[name] = {
            "seat_hands": 0,
            "wins": 0,
            "deal_ins": 0,
            "fan": 0,
            "pigs": 0,
            "not_tenpai": 0,
        }
        per_wall[name] = np.zeros(walls)
        counts[name] = np.zeros(walls)
    for wall, rot, record in records:
        result = record["result"]
        settlement = result.get("settlement")
        for s in range(4):
            name = lineup[(s + rot) % 4]
            st = stats[name]
            st["seat_hands"] += 1
            per_wall[name][wall] += result["scores"][s]
            counts[name][wall] += 1
            for w in result["wins"]:
                if w["seat"] == s:
                    st["wins"] += 1
                    st["fan"] += w["fan"]
                if w["from"] == s:
                    st["deal_ins"] += 1
            if settlement:
                won = {w["seat"] for w in result["wins"]}
                if s in settlement["flower_pigs"]:
                    st["pigs"] += 1
                elif s not in won and s not in settlement["tenpai"]:
                    st["not_tenpai"] += 1
    out = {}
    for name, st in stats.items():
        samples = per_wall[name] / np.maximum(counts[name], 1)
        mean = float(samples.mean())
        ci = float(1.96 * samples.std(ddof=1) / np.sqrt(len(samples))) if len(samples) > 1 else 0.0
        h = max(st["seat_hands"], 1)
        out[name] = {
            "points_per_hand": mean,
            "ci95": ci,
            "win_rate": st["wins"] / h,
            "deal_in_rate": st["deal_ins"] / h,
            "avg_fan": st["fan"] / st["wins"] if st["wins"] else 0.0,
            "flower_pig_rate": st["pigs"] / h,
            "not_tenpai_rate": st["not_tenpai"] / h,
            "seat_hands": st["seat_hands"],
        }
    return out


def print_table(summary: dict) -> None:
    """The per-agent table."""
    head = (
        f"{'agent':<10} {'points/hand':>12} {'95% CI':>9} {'win':>7} {'deal-in':>8} "
        f"{'avg fan':>8} {'pig':>6} {'noten':>6} {'hands':>7}"
    )
    print(head)
    print("-" * len(head))
    for name, s in summary.items():
        print(
            f"{name:<10} {s['points_per_hand']:>+12.2f} {s['ci95']:>9.2f} {s['win_rate']:>7.1%} "
            f"{s['deal_in_rate']:>8.1%} {s['avg_fan']:>8.2f} {s['flower_pig_rate']:>6.1%} "
            f"{s['not_tenpai_rate']:>6.1%} {s['seat_hands']:>7}"
        )


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--walls", type=int, default=200, help="distinct walls (each played 4 times)")
    p.add_argument(
        "--lineup",
        nargs=4,
        default=["heuristic", "random", "random", "random"],
        choices=sorted(AGENTS),
        help="the agents of seats 0..3 in the first rotation",
    )
    p.add_argument("--preset", default="xuezhan", help="rule preset (sichuan_env.PRESETS)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    args = p.parse_args(argv)
    rules = RuleConfig.preset(args.preset)
    t0 = time.perf_counter()
    records = play_duplicate(args.lineup, args.walls, rules, args.seed, progress=not args.quiet)
    summary = summarize(args.lineup, records, args.walls)
    dt = time.perf_counter() - t0
    print(
        f"duplicate match: {args.walls} walls x 4 rotations, lineup {args.lineup}, "
        f"preset {args.preset} ({dt:.1f} s)"
    )
    print_table(summary)
    doc = {
        "lineup": args.lineup,
        "walls": args.walls,
        "preset": args.preset,
        "seed": args.seed,
        "seconds": dt,
        "agents": summary,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2))
        print(f"wrote {args.json}")
    return doc


if __name__ == "__main__":
    main()
