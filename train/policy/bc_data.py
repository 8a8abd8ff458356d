"""Behaviour cloning's data: a teacher's decisions, streamed in chunks, and a held-out set.

``teacher_stream`` plays a teacher in all four seats of a ``VectorEnv`` and yields
its decisions with two or more legal actions, chunk by chunk (memory stays flat);
``collect_validation`` draws held-out decisions from every stage of a hand.
``sichuan_env.train.policy.bc`` re-exports both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from sichuan_env.agents.base import Agent

from sichuan_env import RuleConfig
from sichuan_env.envs.acting import Decisions, SeatMemory, ask
from sichuan_env.envs.vector import VectorEnv


def teacher_stream(
    teacher: Agent,
    venv: VectorEnv,
    steps: int,
    select: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Chunks ``(obs, masks, actions)`` of the teacher's decisions with 2+ legal actions.

    Each chunk is ``steps`` steps of every slot of ``venv`` (reset first);
    the stream is endless, the env's hands continuing across chunks.
    ``select`` (engine states ``-> bool[num_envs]``) keeps only the decisions it marks
    (all of them are still played).
    """
    obs, mask, seat = venv.reset()
    memory = SeatMemory(venv.num_envs)
    every = np.arange(venv.num_envs)
    while True:
        o_buf, m_buf, a_buf = [], [], []
        for _ in range(steps):
            decisions = Decisions(
                venv.states_of(every), mask, venv.rules, seat,
                obs=obs, obs_version=venv.obs_version, memory=memory,
            )  # fmt: skip
            actions = ask(teacher, decisions)  # a search teacher reads the records
            keep = mask.sum(axis=1) > 1
            if select is not None:
                keep &= select(decisions.states)
            o_buf.append(obs[keep].copy())
            m_buf.append(mask[keep])
            a_buf.append(actions[keep])
            obs, mask, seat, _, done, _ = venv.step(actions)
            memory.hand_started(np.flatnonzero(done))  # autoreset: those slots deal anew
        yield np.concatenate(o_buf), np.concatenate(m_buf), np.concatenate(a_buf)


def collect_validation(
    teacher: Agent, rules: RuleConfig, n: int, seed: int, envs: int = 64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` held-out decisions from hands of seed ``seed``, drawn from every stage of a hand.

    The stream's hands all start together, so its first chunk holds only
    opening decisions; chunks of 256 steps (longer than a hand) are drawn
    until there are ``4 n`` decisions, then ``n`` of them picked at random.
    """
    stream = teacher_stream(teacher, VectorEnv(envs, rules=rules, seed=seed), 256)
    parts, got = [], 0
    while got < 4 * n:
        part = next(stream)
        parts.append(part)
        got += len(part[2])
    pick = np.sort(np.random.default_rng(seed).choice(got, size=n, replace=False))
    return tuple(np.concatenate([p[k] for p in parts])[pick] for k in range(3))  # type: ignore[return-value]
