"""Ray for the parallel jobs: cluster connection, single-threaded workers, distributed evaluation.

    python -m sichuan_env.agents.eval --walls 2000 --ray local --workers 2
    python -m sichuan_env.agents.eval --walls 2000 --ray 10.0.0.1:6379 --workers 32

Ray is optional (``pip install -e ".[scale]"``) and imported only here, inside
the functions: ``import agents`` never loads it. ``--ray local`` starts a
private Ray instance on this machine with one CPU per worker; any other value
is the address of a running cluster (``ray start --head`` prints it), joined
with ``ray.init(address=...)`` once a TCP connection to it succeeds within
``CONNECT_TIMEOUT_S`` (a malformed address, or one where nothing listens, is a
one-line ``RayUnavailableError`` at once, not minutes of retries). Every worker is a Ray actor that needs one CPU
and runs single-threaded (torch, numba and OpenMP set to one thread), so N
workers use N cores.

Distributed evaluation (``play_duplicate_ray``) plays the same blocks of walls
as ``sichuan_env.agents.eval.evaluate.play_duplicate`` (``BLOCK_WALLS`` walls, agents reseeded
at each block's start), one block per task, on a pool of actors, and merges the
records in block order: the figures are the same as one process's for the same
seed, walls and block size. The training scripts build on the same helpers
(``sichuan_env.train.data.make_dataset --ray``, ``sichuan_env.train.policy.ppo --ray``).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents.base import Agent, check_seed
from sichuan_env.agents.eval.evaluate import (
    BLOCK_WALLS,
    _check_lineup,
    check_walls,
    make_lineup_agents,
    play_block,
    wall_seeds_of,
)

from sichuan_env import RuleConfig

WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
}
"""Environment of every worker process: one thread each (N workers use N cores)."""


CONNECT_TIMEOUT_S = 10.0
"""Seconds to wait for a cluster's address to accept a connection before giving up."""
RETRIES = 3
"""Times a dead evaluation worker is restarted and its block played again."""


class RayMissingError(ImportError):
    """Ray (or another package of the ``[scale]`` extra) is not installed."""


class RayUnavailableError(RayMissingError, ValueError):
    """Ray cannot be used as asked: a bad address, no cluster there, or workers that keep dying.

    A ``RayMissingError`` (what the CLIs catch around Ray) and a ``ValueError``, with a
    one-line message.
    """


def check_address(address: object) -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address, None for ``"local"`` and ``"auto"``.

    Accepts ``local``, ``auto``, ``host:port`` and ``ray://host:port``.

    Raises:
        RayUnavailableError: anything else (an empty string, no port, a port outside 1..65535).
    """
    if not isinstance(address, str) or not address.strip():
        raise RayUnavailableError(
            f"the Ray address is 'local', 'auto' or host:port, got {address!r}"
        )
    if address in ("local", "auto"):
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RayUnavailableError(
            f"the Ray address is 'local', 'auto' or host:port, got {address[:80]!r}"
        )
    return host, int(port)


def probe(host: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ``RayUnavailableError`` unless ``host:port`` accepts a TCP connection in ``timeout`` s.

    ``ray.init`` itself retries for minutes when nothing listens; this answers at once.
    """
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise RayUnavailableError(
            f"no Ray cluster at {host}:{port} ({reason} within {timeout:g} s); "
            "start one with `ray start --head`, or use --ray local"
        ) from None


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        RayMissingError: Ray is not installed (the message says how to install it).
    """
    try:
        import ray
    except ImportError as exc:
        raise RayMissingError(
            f"--ray needs Ray ({exc}): pip install -e '.[scale]' (or pip install 'ray>=2.9')"
        ) from None
    return ray


def init_ray(address: str, workers: int) -> Any:
    """Connect to Ray (``"local"``: start a private instance with ``workers`` CPUs); the module.

    A private instance runs its workers at the driver's priority (Ray's default is nice 15;
    ``RAY_worker_niceness`` overrides it, and so it does for ``ray start`` on a cluster).

    A Ray already initialised in this process (by a test or a notebook) is reused as it is.

    Raises:
        RayMissingError: Ray is not installed.
        RayUnavailableError: a malformed address, nothing listening there within
            ``CONNECT_TIMEOUT_S`` seconds, or a cluster that refuses the connection.
        ValueError: fewer than one worker.
    """
    where = check_address(address)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    ray = import_ray()
    if not ray.is_initialized():
        common = {"logging_level": "WARNING", "log_to_driver": False}
        if address == "local":
            # Ray starts its workers at nice 15 (below any other job); ours compete like the driver
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(num_cpus=workers, include_dashboard=False, **common)
        else:
            if where is not None:
                probe(*where)
            try:
                ray.init(address=address, **common)
            except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
                text = " ".join(str(exc).split())[:300]
                raise RayUnavailableError(
                    f"cannot join the Ray cluster at {address}: {text}"
                ) from None
    return ray


def worker_options() -> dict[str, Any]:
    """Ray options of a worker actor: one CPU, single-threaded libraries."""
    return {"num_cpus": 1, "runtime_env": {"env_vars": dict(WORKER_ENV)}}


def single_thread() -> None:
    """Run this process's numba and torch on one thread (called first in every worker)."""
    for key, value in WORKER_ENV.items():
        os.environ.setdefault(key, value)
    import numba

    numba.set_num_threads(1)
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def rss_mib() -> float:
    """Resident memory of this process in MiB (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class EvalWorker:
    """A Ray actor that plays blocks of a duplicate match (``play_block``) with its own agents.

    Args:
        lineup: the 4 agents (names or paths; paths must exist on the worker's node).
        seed: the run's seed (walls and agents).
        rules: the ruleset.
    """

    def __init__(self, lineup: list[str], seed: int, rules: RuleConfig) -> None:
        single_thread()
        self.lineup, self.seed, self.rules = list(lineup), seed, rules
        self.agents: Mapping[str, Agent] | None = None

    def play(self, block: int, wall_seeds: np.ndarray) -> tuple[int, list[tuple[int, dict]]]:
        """``(block, [(slot, record)])`` of one block, as ``play_duplicate`` plays it."""
        if self.agents is None or block == 0:
            self.agents = make_lineup_agents(self.lineup, self.seed)
        return block, play_block(self.lineup, self.agents, wall_seeds, self.rules, self.seed, block)

    def memory_mib(self) -> float:
        """This worker's resident memory."""
        return rss_mib()


def play_duplicate_ray(
    lineup: list[str],
    walls: int,
    rules: RuleConfig,
    seed: int = 0,
    *,
    address: str = "local",
    workers: int = 2,
    block_walls: int = BLOCK_WALLS,
    progress: bool = True,
) -> list[tuple[int, int, dict]]:
    """``sichuan_env.agents.eval.evaluate.play_duplicate`` with the blocks played by ``workers`` Ray actors.

    Returns the same ``[(wall, rotation, record)]``, in the same order, as the
    single-process run with the same seed, walls and ``block_walls``.

    A worker that dies (killed, out of memory) is restarted and its block played again
    from the block's start, up to ``RETRIES`` times: blocks reseed their agents, so the
    records are the same as without the failure.

    Raises:
        RayMissingError: Ray is not installed.
        RayUnavailableError: no cluster at the address, or a worker died more than
            ``RETRIES`` times.
        ValueError: a bad lineup, wall count, seed, worker count or address.
    """
    check_walls(walls, block_walls)
    _check_lineup(lineup)
    seed = check_seed(seed)
    if not isinstance(rules, RuleConfig):
        raise ValueError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    ray = init_ray(address, workers)
    from ray.util import ActorPool

    wall_seeds = wall_seeds_of(walls, seed)
    firsts = list(range(0, walls, block_walls))
    jobs = [(b, wall_seeds[first : first + block_walls]) for b, first in enumerate(firsts)]
    if len(jobs) < workers:
        print(
            f"note: {len(jobs)} block(s) of {block_walls} walls keep only {len(jobs)} of "
            f"{workers} workers busy (a smaller --block-walls spreads them; it changes the "
            "results of agents that sample)",
            file=sys.stderr,
        )
    retry = {"max_restarts": RETRIES, "max_task_retries": RETRIES}
    actor_class = ray.remote(**worker_options(), **retry)(EvalWorker)
    actors = [actor_class.remote(lineup, seed, rules) for _ in range(min(workers, len(jobs)))]
    done: dict[int, list[tuple[int, dict]]] = {}
    columns = (TextColumn("hands"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
            task = bar.add_task("hands", total=walls * 4)
            pool = ActorPool(actors)
            for block, recs in pool.map_unordered(lambda a, job: a.play.remote(*job), jobs):
                done[block] = recs
                bar.advance(task, len(recs))
    except ray.exceptions.RayActorError as exc:
        raise RayUnavailableError(
            f"an evaluation worker died more than {RETRIES} times ({type(exc).__name__}); "
            "no result was written"
        ) from None
    finally:
        for actor in actors:
            ray.kill(actor)
    return [
        (first + slot // 4, slot % 4, record)
        for b, first in enumerate(firsts)
        for slot, record in done[b]
    ]


__all__ = [
    "RETRIES",
    "WORKER_ENV",
    "EvalWorker",
    "RayMissingError",
    "RayUnavailableError",
    "check_address",
    "import_ray",
    "init_ray",
    "play_duplicate_ray",
    "rss_mib",
    "single_thread",
    "worker_options",
]
