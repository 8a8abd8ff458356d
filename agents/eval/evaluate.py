"""Duplicate matches between agents: the same walls, the agents rotated through the seats.

    python -m sichuan_env.agents.eval --walls 500 --lineup heuristic random random random
    python -m sichuan_env.agents.eval --walls 5000 --ray local --workers 2   # on Ray (sichuan_env.agents.eval.distributed)

Every wall is played four times, the lineup rotated by one seat each time,
so luck of the deal cancels out. A lineup entry is any registered agent name
(``sichuan_env.agents.registry``: random, heuristic, ...) or a checkpoint path that a
registered loader accepts. Reported per agent: points per hand with a 95%
confidence interval (one sample per wall: the agent's mean over its seats
and rotations), win rate, deal-in rate (paid a win on its discard or its
robbed kong), average fan of its wins, and at exhaustive draws the
flower-pig and not-tenpai rates. Prints a table and writes JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.base import Agent, check_seed
from sichuan_env.agents.registry import make_agent

from sichuan_env import RuleConfig
from sichuan_env._progress import progress_bar
from sichuan_env.envs.acting import Decisions, SeatMemory, ask
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.tiles import InputTypeError, echo

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
    memory = SeatMemory(n)  # one hand per slot: every seat's first decision starts it
    while not finished.all():
        names = lineup_arr[(seat + rotation) % 4]
        actions[:] = mask.argmax(axis=1)  # finished slots: any legal action
        decisions = Decisions(
            venv.states_of(np.arange(n)), mask, rules, seat,
            obs=obs, obs_version=venv.obs_version, memory=memory,
        )  # fmt: skip
        for name, agent in agents.items():
            idx = np.flatnonzero((names == name) & ~finished)
            if idx.size:
                actions[idx] = ask(agent, decisions, idx)
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
    stop: Callable[[list[tuple[int, int, dict]]], bool] | None = None,
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
        stop: called with the records so far after each block; True ends the match
            there (``--target-ci``). The walls played are a prefix of the ``walls``
            walls, so a match stopped at ``w`` walls equals a match of ``w`` walls.

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
    with progress_bar(*columns, disable=not progress) as bar:  # says when numba compiles
        task = bar.add_task("hands", total=walls * 4)
        for block, first in enumerate(range(0, walls, block_walls)):
            chunk = wall_seeds[first : first + block_walls]
            for slot, record in play_block(
                lineup, agents, chunk, rules, seed, block, lambda k: bar.advance(task, k)
            ):
                records.append((first + slot // 4, slot % 4, record))
            if stop is not None and first + block_walls < walls and stop(records):
                break
    return records
