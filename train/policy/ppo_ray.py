"""Ray rollout workers for ``sichuan_env.train.policy.ppo --ray ADDRESS|local --workers N``.

    python -m sichuan_env.train.policy.ppo --init runs/bc/best.pt --run runs/ppo --ray local --workers 2
    python -m sichuan_env.train.policy.ppo --init runs/bc/best.pt --run runs/ppo --ray 10.0.0.1:6379 --workers 64

One learner (the driver process: the optimizer, the PPO update, evaluation
and checkpoints) and ``N`` rollout workers, each a Ray actor with one CPU that
owns a ``VectorEnv`` with its share of ``--envs`` and a CPU copy of the policy,
and runs the very ``sichuan_env.train.policy.ppo.Collector`` of the single-process script. Every
iteration the learner puts its weights into the object store once
(``ray.put``), every worker loads them and collects ``--steps`` steps, and
the learner appends the workers' buffers (``extend_buffer``: trajectory links
shifted) before the update. The opponent pool (the heuristic, the ``--init``
policy, the learner's snapshots) is sent to every worker when it changes,
as weights; each worker draws its own opponents per hand, seeded per worker.
Worker ``w`` seeds its env and draws with the single-process seeds plus
``w * SEED_STRIDE``, so worker 0 plays what the single process would play.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.base import Agent
from sichuan_env.agents.eval.distributed import (
    RayUnavailableError,
    init_ray,
    rss_mib,
    single_thread,
    worker_options,
)
from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.train.policy.rollout import STAT_KEYS, Buffer, Collector

from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv

SEED_STRIDE = 1_000_003
"""Worker ``w``'s seeds are the single-process seeds plus ``w * SEED_STRIDE``."""

PoolSpec = list[tuple[str, Any]]
"""``[(name, "heuristic" | (config dict, state_dict))]``: a pool as it travels to the workers."""


def pool_spec(pool: list[tuple[str, Agent]]) -> PoolSpec:
    """The pool as plain data (the heuristic by name, torch agents as weights).

    Raises:
        ValueError: an opponent that is neither a ``HeuristicAgent`` nor a ``TorchAgent``.
    """
    out: PoolSpec = []
    for name, agent in pool:
        if isinstance(agent, HeuristicAgent):
            out.append((name, "heuristic"))
        elif isinstance(agent, TorchAgent):
            state = {k: v.detach().cpu().clone() for k, v in agent.net.state_dict().items()}
            out.append((name, (agent.net.config.to_dict(), state)))
        else:
            raise ValueError(f"pool opponent {name!r} cannot be sent to a Ray worker")
    return out


def pool_agents(spec: PoolSpec) -> list[tuple[str, Agent]]:
    """The pool rebuilt from ``pool_spec`` (frozen networks in eval mode)."""
    out: list[tuple[str, Agent]] = []
    for name, payload in spec:
        if payload == "heuristic":
            out.append((name, HeuristicAgent()))
            continue
        config, state = payload
        net = PolicyNet(PolicyConfig(**config))
        net.load_state_dict(state)
        for q in net.parameters():
            q.requires_grad_(False)
        out.append((name, TorchAgent(net, name=name)))
    return out


def export_buffer(buf: Buffer) -> dict[str, np.ndarray]:
    """Views of a buffer's stored decisions (``next_idx`` counts from its row 0), to send.

    The views are valid until the buffer is filled again (Ray serialises a method's result
    when it returns). With an oracle view, ``obs`` (its first rows) is left out:
    ``extend_buffer`` restores it.
    """
    skip = {"obs"} if buf.oracle is not None else set()
    fields = [f for f in Buffer.FIELDS if getattr(buf, f) is not None and f not in skip]
    return {f: getattr(buf, f)[: buf.n] for f in fields}


def extend_buffer(buf: Buffer, part: dict[str, np.ndarray]) -> None:
    """Append an ``export_buffer`` part to ``buf``, its trajectory links shifted to their new rows.

    Raises:
        ValueError: the part does not fit, or its arrays do not match the buffer's.
    """
    m = len(part["actions"])
    if buf.n + m > len(buf.actions):
        raise ValueError("rollout buffer too small for the workers' decisions")
    part = dict(part)
    if "obs" not in part and "oracle" in part:
        part["obs"] = part["oracle"][:, : buf.obs.shape[1]]
    for f in Buffer.FIELDS:
        mine = getattr(buf, f)
        if (mine is None) != (part.get(f) is None):
            raise ValueError(f"buffer field {f!r} present on one side only")
        if mine is not None:
            v = part[f]
            mine[buf.n : buf.n + m] = np.where(v >= 0, v + buf.n, -1) if f == "next_idx" else v
    buf.n += m


def split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` sizes differing by at most one, larger first."""
    return [total // parts + (w < total % parts) for w in range(parts)]


class RolloutWorker:
    """A Ray actor: a ``VectorEnv`` of ``envs`` hands, a CPU policy copy and a ``Collector``.

    Args:
        config: the policy's ``PolicyConfig.to_dict()``.
        rules: the ruleset.
        envs: hands played together.
        steps: steps per rollout (sizes the buffer).
        env_seed: the env's seed.
        seed: the collector's seed (action sampling, opponent draws).
        pool: the opponents (``pool_spec``).
        pool_frac: as ``Collector``'s.
        pool_heuristic: as ``Collector``'s.
        reward_scale: as ``Collector``'s.
    """

    def __init__(
        self, config: dict, rules: RuleConfig, envs: int, steps: int, env_seed: int, seed: int,
        pool: PoolSpec, pool_frac: float, pool_heuristic: float, reward_scale: float,
    ) -> None:  # fmt: skip
        single_thread()
        self.net = PolicyNet(PolicyConfig(**config))
        for q in self.net.parameters():
            q.requires_grad_(False)
        cfg = self.net.config
        venv = VectorEnv(envs, rules=rules, seed=env_seed, oracle=cfg.oracle_critic)
        self.coll = Collector(
            self.net, venv, pool_agents(pool), pool_frac, pool_heuristic, reward_scale, seed
        )
        oracle_rows = venv.obs_shape[0] if cfg.oracle_critic else 0
        self.buf = Buffer(envs * steps, cfg.public_rows, oracle_rows, AUX_SIZE if cfg.aux else 0)

    def set_pool(self, pool: PoolSpec) -> None:
        """Replace the opponents (and forget their points, as the single process does)."""
        self.coll.pool = pool_agents(pool)
        self.coll.hand_points = {name: [] for name, _ in self.coll.pool}

    def collect(self, weights: dict[str, torch.Tensor], steps: int, training: bool) -> dict:
        """Load the learner's weights, collect ``steps`` steps; the buffer, timings and points."""
        self.net.load_state_dict(weights)
        self.net.train(training)
        t0, c0 = time.perf_counter(), time.process_time()
        self.coll.collect(steps, self.buf)
        stats = {
            **self.coll.stats,
            "t_collect": time.perf_counter() - t0,
            "cpu_collect": time.process_time() - c0,
        }
        self.coll.stats.update({**dict.fromkeys(STAT_KEYS, 0.0), "steps": 0})
        points = {name: list(pts) for name, pts in self.coll.hand_points.items()}
        for pts in self.coll.hand_points.values():
            pts.clear()
        return {"buffer": export_buffer(self.buf), "stats": stats, "hand_points": points}

    def memory_mib(self) -> float:
        """This worker's resident memory."""
        return rss_mib()


class RayRollouts:
    """``Collector``'s interface (``collect``, ``pool``, ``stats``, ``hand_points``) over Ray actors.

    Args:
        net: the learner's network (its weights are broadcast before every rollout).
        rules: the ruleset.
        pool: the initial opponents.
        args: ``sichuan_env.train.policy.ppo``'s arguments (``ray``, ``workers``, ``envs``, ``steps``, pool options,
            ``reward_scale``).
        env_seed: the single-process env seed (worker ``w`` adds ``w * SEED_STRIDE``).
        seed: the single-process collector seed (worker ``w`` adds ``w * SEED_STRIDE``).
    """

    def __init__(
        self,
        net: PolicyNet,
        rules: RuleConfig,
        pool: list[tuple[str, Agent]],
        args: argparse.Namespace,
        *,
        env_seed: int,
        seed: int,
    ) -> None:
        self._ray = init_ray(args.ray, args.workers)
        self.net = net
        self._pool = list(pool)
        spec = self._ray.put(pool_spec(pool))
        actor = self._ray.remote(**worker_options())(RolloutWorker)
        opts = (args.pool_frac, args.pool_heuristic, args.reward_scale)
        self.workers = [
            actor.remote(
                net.config.to_dict(),
                rules,
                n,
                args.steps,
                env_seed + w * SEED_STRIDE,
                seed + w * SEED_STRIDE,
                spec,
                *opts,
            )
            for w, n in enumerate(split(args.envs, args.workers))
        ]
        self.stats: dict[str, float] = {**dict.fromkeys(STAT_KEYS, 0.0), "steps": 0}
        self.worker_stats: list[dict[str, float]] = []  # each worker's, of the last rollout
        self.hand_points: dict[str, list[float]] = {name: [] for name, _ in pool}

    @property
    def pool(self) -> list[tuple[str, Agent]]:
        """The opponents; assigning sends them to every worker."""
        return self._pool

    @pool.setter
    def pool(self, pool: list[tuple[str, Agent]]) -> None:
        self._pool = list(pool)
        spec = self._ray.put(pool_spec(self._pool))
        self._ray.get([w.set_pool.remote(spec) for w in self.workers])

    def collect(self, steps: int, buf: Buffer) -> None:
        """Every worker plays ``steps`` steps with the learner's current weights; into ``buf``.

        Raises:
            RayUnavailableError: a worker died (its env's hands are lost with it).
        """
        # the workers act on their CPUs whatever --device the learner trains on
        weights = self._ray.put({k: v.detach().cpu() for k, v in self.net.state_dict().items()})
        refs = [w.collect.remote(weights, steps, self.net.training) for w in self.workers]
        try:
            outs = self._ray.get(refs)
        except self._ray.exceptions.RayActorError as exc:
            raise RayUnavailableError(
                f"a Ray rollout worker died ({type(exc).__name__}): its hands cannot be "
                "replayed; the run's files are those of the last iteration (--resume continues)"
            ) from None
        buf.clear()
        for out in outs:  # in worker order: the same buffer whatever finished first
            extend_buffer(buf, out["buffer"])
            for name, pts in out["hand_points"].items():
                self.hand_points.setdefault(name, []).extend(pts)
        self.worker_stats = [o["stats"] for o in outs]
        for key in STAT_KEYS:  # per worker, averaged: shares of wall time
            self.stats[key] += sum(o["stats"][key] for o in outs) / len(outs)
        self.stats["steps"] += sum(o["stats"]["steps"] for o in outs)

    def memory_mib(self) -> list[float]:
        """Each worker's resident memory (MiB)."""
        return list(self._ray.get([w.memory_mib.remote() for w in self.workers]))

    def close(self) -> None:
        """End the workers."""
        for w in self.workers:
            self._ray.kill(w)
        self.workers = []


__all__ = [
    "SEED_STRIDE", "RayRollouts", "RolloutWorker", "export_buffer", "extend_buffer", "pool_agents",
    "pool_spec", "split",
]  # fmt: skip
