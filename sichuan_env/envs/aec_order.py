"""``OrderEnforcing``: PettingZoo's order-enforcing wrapper, raising ``RuntimeError`` out of order.

``sichuan_env.env()`` wraps the AEC env (``sichuan_env.envs.pettingzoo.raw_env``) in
it; the call-order contract it keeps is in that module's docstring ("Call order").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` raising ``RuntimeError`` for calls out of order.

    PettingZoo's own wrapper raises ``AssertionError`` for a call before
    ``reset`` and only warns for a ``step`` after every agent has left; this
    one raises the ``RuntimeError`` the project promises (README, "Errors and
    guarantees"). Attribute reads before ``reset`` keep PettingZoo's
    ``AttributeError``. ``last()`` skips the per-attribute forwarding that
    otherwise costs more than the env's step.
    """

    def _require_reset(self, call: str) -> None:
        if not self._has_reset:
            raise RuntimeError(f"{call} before reset(): call reset() first")

    def step(self, action: Any) -> None:
        """The raw env's ``step``; RuntimeError before ``reset`` or after every agent left."""
        self._require_reset("step()")
        if not self.env.agents:
            raise RuntimeError("the hand is over and every agent has left: call reset()")
        self._has_updated = True
        self.env.step(action)

    def observe(self, agent: str) -> Any:
        """The raw env's ``observe``; RuntimeError before ``reset``."""
        self._require_reset("observe()")
        return self.env.observe(agent)

    def render(self) -> Any:
        """The raw env's ``render``; RuntimeError before ``reset``."""
        self._require_reset("render()")
        return self.env.render()

    def state(self) -> np.ndarray:
        """The raw env's ``state``; RuntimeError before ``reset``."""
        self._require_reset("state()")
        return self.env.state()

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """PettingZoo's checked agent iterator; RuntimeError before ``reset``.

        Yields the selected agent while agents remain, at most ``max_iter``
        times, and (as PettingZoo's) raises ``AssertionError`` when a loop
        body called neither ``step`` nor ``reset``.
        """
        self._require_reset("agent_iter()")
        return _AgentIterable(self, max_iter)

    def last(self, observe: bool = True) -> tuple:
        """``(observation, cumulative reward, terminated, truncated, info)`` of the selected agent."""
        if not self._has_reset:
            raise RuntimeError("last() before reset(): call reset() first")
        return self.env.last(observe)


class _AgentIterable:
    """What ``OrderEnforcing.agent_iter`` returns: each ``iter()`` a fresh checked iterator."""

    __slots__ = ("max_iter", "wrapper")

    def __init__(self, wrapper: OrderEnforcing, max_iter: int) -> None:
        self.wrapper = wrapper
        self.max_iter = max_iter

    def __iter__(self) -> Any:
        return _agents(self.wrapper, self.wrapper.env, self.max_iter)


def _agents(wrapper: OrderEnforcing, raw: AECEnv, left: int) -> Any:
    """PettingZoo's ``AECOrderEnforcingIterator`` as a generator, reading the raw env directly."""
    while left > 0 and raw.agents:
        left -= 1
        if not wrapper._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        wrapper._has_updated = False
        yield raw.agent_selection


__all__ = ["OrderEnforcing"]
