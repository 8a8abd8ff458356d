"""Duplicate matches between agents: the same walls, the agents rotated through the seats.

    python -m agents.evaluate --walls 500 --lineup heuristic random random random
    python -m agents.evaluate --walls 5000 --ray local --workers 2   # on Ray (agents.distributed)

Every wall is played four times, the lineup rotated by one seat each time,
so luck of the deal cancels out. A lineup entry is any registered agent name
(``agents.registry``: random, heuristic, ...) or a checkpoint path that a
registered loader accepts. Reported per agent: points per hand with a 95%
confidence interval (one sample per wall: the agent's mean over its seats
and rotations), win rate, deal-in rate (paid a win on its discard or its
robbed kong), average fan of its wins, and at exhaustive draws the
flower-pig and not-tenpai rates. Prints a table and writes JSON.
"""

from __future__ import annotations

import os

os.environ.setdefault(
    "OMP_WAIT_POLICY", "PASSIVE"
)  # before numba / torch load OpenMP (train/ppo.py)

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import int_arg, path_problem, run
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.tiles import InputTypeError, echo

from .base import Agent, check_seed
from .match_stats import print_table, summarize
from .registry import describe, make_agent

MAX_WALLS = 100_000
"""Walls per run (the records of every hand are kept: about 60 KB per wall, 6 GB at most)."""
BLOCK_WALLS = 256
"""Walls per block: played together in one VectorEnv (bounds the env's memory), by agents
reseeded at the block's start (``block_seed``), so blocks are independent units of work:
``--ray`` plays them on several workers with the same results as one process."""


def block_seed(seed: int, block: int) -> int:
    """The agents' seed in block ``block`` of a run seeded ``seed`` (``seed`` itself in block 0).

    Agent ``k`` (sorted lineup entries) is reseeded ``block_seed(seed, block) + k``.
    """
    if block == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(block)]).generate_state(1, np.uint64)[0] >> 2)


def reseed(agents: Mapping[str, Agent], seed: int) -> None:
    """``agent.reset(seed + k)`` for the ``k``-th agent in sorted name order (those with ``reset``)."""
    for k, name in enumerate(sorted(agents)):
        reset = getattr(agents[name], "reset", None)
        if callable(reset):
            reset(seed + k)


def _check_lineup(lineup: object) -> None:
    if not isinstance(lineup, (list, tuple)):
        raise InputTypeError(f"a lineup is a list of 4 agents, got {echo(lineup)}")
    if len(lineup) != 4:
        raise ValueError(f"a lineup names 4 agents, got {echo(lineup)}")
    if not all(isinstance(x, str) for x in lineup):
        raise InputTypeError(f"lineup entries are agent names or paths (str), got {echo(lineup)}")


def make_lineup_agents(lineup: list[str], seed: int = 0) -> dict[str, Agent]:
    """One agent per distinct lineup entry, seeded ``seed + k`` in sorted order.

    Raises:
        ValueError: for a lineup that is not 4 entries, or an entry the registry does not know.
    """
    _check_lineup(lineup)
    seed = check_seed(seed)
    return {name: make_agent(name, seed=seed + k) for k, name in enumerate(sorted(set(lineup)))}


def _play_chunk(
    lineup: list[str],
    agents: Mapping[str, Agent],
    wall_seeds: np.ndarray,
    rules: RuleConfig,
    advance: Any,
) -> list[tuple[int, dict]]:
    """Play ``wall_seeds`` under the four rotations; ``[(slot, record)]``."""
    n = len(wall_seeds) * 4
    versions = Counter(a.obs_version for a in agents.values())
    venv = VectorEnv(n, rules=rules, obs_version=versions.most_common(1)[0][0])
    obs, mask, seat = venv.reset(seeds=np.repeat(wall_seeds, 4))
    rotation = np.tile(np.arange(4), len(wall_seeds))
    lineup_arr = np.array(lineup)
    finished = np.zeros(n, dtype=bool)
    records: list[tuple[int, dict]] = []
    actions = np.zeros(n, dtype=np.int64)
    while not finished.all():
        names = lineup_arr[(seat + rotation) % 4]
        actions[:] = mask.argmax(axis=1)  # finished slots: any legal action
        by_version = {venv.obs_version: obs}  # other versions re-encoded once per step
        for name, agent in agents.items():
            idx = np.flatnonzero((names == name) & ~finished)
            if idx.size and getattr(agent, "reads_state", False):  # e.g. SearchAgent
                actions[idx] = agent.act_states(venv.states_of(idx), mask[idx], rules)
            elif idx.size:
                v = agent.obs_version
                if v not in by_version:
                    by_version[v] = venv.observe(v)
                actions[idx] = agent.act_batch(by_version[v][idx], mask[idx])
        obs, mask, seat, _, done, _ = venv.step(actions)
        newly = np.flatnonzero(done & ~finished)
        for i in newly:
            finished[i] = True
            records.append((int(i), venv.record(int(i))))
        if newly.size:
            advance(int(newly.size))
    return records


def play_block(
    lineup: list[str],
    agents: Mapping[str, Agent],
    wall_seeds: np.ndarray,
    rules: RuleConfig,
    seed: int,
    block: int,
    advance: Any = None,
) -> list[tuple[int, dict]]:
    """Play block ``block`` (its ``wall_seeds``) under the four rotations; ``[(slot, record)]``.

    Slot ``4 * j + r`` is the block's ``j``-th wall in rotation ``r``. From block 1 on the
    agents are first reseeded with ``block_seed(seed, block)`` (``reseed``).
    """
    if block:
        reseed(agents, block_seed(seed, block))
    return _play_chunk(lineup, agents, wall_seeds, rules, advance or (lambda k: None))


def check_walls(walls: object, block_walls: object = BLOCK_WALLS) -> None:
    """Raise unless ``walls`` is in 1..``MAX_WALLS`` and ``block_walls`` >= 1 (integers)."""
    for name, v in (("walls", walls), ("block_walls", block_walls)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputTypeError(f"{name} must be an integer, got {echo(v)}")
    if not 1 <= walls <= MAX_WALLS:  # type: ignore[operator]
        raise ValueError(f"walls must be in 1..{MAX_WALLS}, got {walls}")
    if block_walls < 1:  # type: ignore[operator]
        raise ValueError(f"block_walls must be >= 1, got {block_walls}")


def wall_seeds_of(walls: int, seed: int) -> np.ndarray:
    """The seeds of a run's ``walls`` walls (``int64[walls]``)."""
    return np.random.default_rng(seed).integers(0, 2**62, size=walls)


def play_duplicate(
    lineup: list[str],
    walls: int,
    rules: RuleConfig,
    seed: int = 0,
    progress: bool = True,
    agents: Mapping[str, Agent] | None = None,
    block_walls: int = BLOCK_WALLS,
) -> list[tuple[int, int, dict]]:
    """Play every wall under the four rotations; ``[(wall, rotation, record)]``.

    Args:
        lineup: the 4 agents of seats 0..3 in the first rotation (names or paths).
        walls: distinct walls, 1..``MAX_WALLS``.
        rules: the ruleset.
        seed: seeds the walls and (as ``seed + k``, reseeded per block) the agents.
        progress: show a progress bar on stderr.
        agents: ``{lineup entry: agent}`` already made (default: ``make_lineup_agents``).
        block_walls: walls per block (``BLOCK_WALLS``); results of agents that sample
            depend on it, those of deterministic agents do not.

    Raises:
        ValueError: for a bad lineup, wall count, seed or agent.
    """
    check_walls(walls, block_walls)
    _check_lineup(lineup)
    seed = check_seed(seed)
    if not isinstance(rules, RuleConfig):
        raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if agents is None:
        agents = make_lineup_agents(lineup, seed)
    elif not isinstance(agents, Mapping) or set(agents) != set(lineup):
        raise ValueError(f"agents must map exactly the lineup entries {sorted(set(lineup))}")
    wall_seeds = wall_seeds_of(walls, seed)
    records: list[tuple[int, int, dict]] = []
    columns = (TextColumn("hands"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    console = Console(stderr=True)
    with Progress(*columns, console=console, disable=not progress) as bar:
        task = bar.add_task("hands", total=walls * 4)
        for block, first in enumerate(range(0, walls, block_walls)):
            chunk = wall_seeds[first : first + block_walls]
            for slot, record in play_block(
                lineup, agents, chunk, rules, seed, block, lambda k: bar.advance(task, k)
            ):
                records.append((first + slot // 4, slot % 4, record))
    return records


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (shared with the tests)."""
    p = argparse.ArgumentParser(
        prog="sichuan-eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--walls",
        type=int_arg(1, MAX_WALLS),
        default=200,
        help=f"distinct walls (each played 4 times), 1..{MAX_WALLS}",
    )
    p.add_argument(
        "--lineup",
        nargs=4,
        default=["heuristic", "random", "random", "random"],
        metavar="AGENT",
        help=f"the agents of seats 0..3 in the first rotation ({describe()})",
    )
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS), help="rule preset")
    p.add_argument("--seed", type=int_arg(0), default=0, help="seed of the walls and agents (>= 0)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--block-walls",
        type=int_arg(1, MAX_WALLS),
        default=BLOCK_WALLS,
        help="walls per block, the unit of work (agents are reseeded per block)",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="play the blocks on a Ray cluster (its address, or 'local'); needs .[scale]",
    )
    p.add_argument("--workers", type=int_arg(1, 4096), default=2, help="Ray workers (with --ray)")
    return p


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document.

    Bad usage (unknown agents, a wall count out of range, an unwritable
    ``--json`` path) exits with status 2 and one line on stderr, before any hand is played.
    """
    p = build_parser()
    args = p.parse_args(argv)
    try:
        agents = make_lineup_agents(args.lineup, args.seed)
    except ValueError as exc:
        p.error(str(exc))
    except ImportError as exc:  # a lazily registered agent whose dependency is missing
        p.error(f"cannot load an agent of the lineup: {exc}; {describe()}")
    if args.json is not None and (problem := path_problem(args.json)):
        p.error(f"--json: {problem}")
    rules = RuleConfig.preset(args.preset)
    t0 = time.perf_counter()
    if args.ray is None:
        records = play_duplicate(
            args.lineup, args.walls, rules, args.seed, not args.quiet, agents, args.block_walls
        )
    else:
        from .distributed import RayMissingError, play_duplicate_ray

        try:
            records = play_duplicate_ray(
                args.lineup, args.walls, rules, args.seed, address=args.ray,
                workers=args.workers, block_walls=args.block_walls, progress=not args.quiet,
            )  # fmt: skip
        except RayMissingError as exc:
            p.error(str(exc))
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
        "block_walls": args.block_walls,
        "workers": args.workers if args.ray else 1,
        "seconds": dt,
        "agents": summary,
    }
    if args.json:
        try:
            args.json.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        except OSError as exc:
            print(f"sichuan-eval: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            raise SystemExit(1) from None
        print(f"wrote {args.json}")
    return doc


def cli() -> int:
    """Console-script entry point (``sichuan-eval``): exit status, never a traceback."""
    return run(main, "sichuan-eval")


if __name__ == "__main__":
    sys.exit(cli())
