"""Annotate a replay with an agent's view of each decision (``--agent NAME``).

The agent sees exactly what the env gives it: the observation of its seat in
the agent's ``obs_version`` (looked up in the ``sichuan_env.encoding``
registry and encoded as ``envs/pettingzoo.py`` does) and the legal-action
mask of the decision. Agents with ``action_probs(obs, mask) -> float[88]``
get their top three actions with probabilities; others get the action their
``act`` chooses, shown with probability 1.0 and marked as not a distribution.

Agents are objects; a name typed on the command line becomes one through the
installed agent resolver (``sichuan_env.plugins``), so the library never names
the agents package above it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..encoding.registry import get as get_obs_version
from ..engine.actions import action_to_str
from ..engine.game import Game
from ..plugins import agent_resolver
from ..rules.config import kernel_rules

TOP_K = 3
"""Actions shown per decision."""


def load_agent(spec: str) -> Any:
    """Make the agent ``spec`` names, through the installed agent resolver.

    The resolver is the ``sichuan_env.resolvers`` entry point
    (``sichuan_env.plugins.agent_resolver``): registered names, checkpoint
    paths and ``package.module:Class`` specs.

    Raises:
        ValueError: an unknown spec, or no resolver installed.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent name is a non-empty string, got {spec!r}")
    try:
        return agent_resolver()(spec, 0)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"unknown agent {spec!r}: {exc}") from None


class AgentAnnotator:
    """A replay hook (``replay_snapshots(agent_hook=...)``) asking ``agent`` at each decision.

    Args:
        agent: anything with ``act(obs, mask)`` (and optionally ``action_probs``,
            ``obs_version``, ``oracle``, ``reset``).
        seats: the seats whose decisions are annotated.
        name: the agent's name as shown on the page.

    Raises:
        ValueError: bad seats, an agent without ``act``, or an unknown
            observation version (``agent.obs_version``, default 1).
    """

    def __init__(self, agent: Any, seats: Iterable[int] = range(4), name: str = "agent") -> None:
        if not callable(getattr(agent, "act", None)):
            raise ValueError(
                f"agent must have an act(obs, mask) method, got {type(agent).__name__}"
            )
        self.seats = sorted(set(seats))
        if not self.seats or any(
            not isinstance(s, int) or isinstance(s, bool) or not 0 <= s < 4 for s in self.seats
        ):
            raise ValueError(f"seats must be seat numbers 0..3, got {self.seats!r}")
        self.agent = agent
        self.name = name
        self.oracle = bool(getattr(agent, "oracle", False))
        self._spec = get_obs_version(getattr(agent, "obs_version", 1))
        self.exact = callable(getattr(agent, "action_probs", None))
        self._obs = np.zeros(self._spec.shape(self.oracle), dtype=np.uint8)
        self._rules: Any = None
        if callable(getattr(agent, "reset", None)):
            agent.reset()

    def describe(self) -> dict[str, Any]:
        """What the page says about the annotation."""
        return {"name": self.name, "seats": self.seats, "exact": self.exact}

    def __call__(self, game: Game, seat: int, chosen: str) -> dict[str, Any] | None:
        """The agent's top actions at the decision ``game`` is waiting on (None: not its seat)."""
        if seat not in self.seats:
            return None
        if self._rules is None:
            self._rules = kernel_rules(game.rules)
        states = np.empty(1, dtype=game.state.dtype)
        states[0] = game.state
        self._spec.encode_at(states, 0, seat, self.oracle, self._rules, self._obs)
        mask = game.legal_mask().copy()
        picking = game.phase() == "exchange"
        ids = [int(a) for a in game.legal_ids()]
        names = (
            {a: action_to_str(a) for a in ids}
            if picking
            else dict(zip(ids, game.legal(), strict=True))
        )
        if self.exact:
            probs = np.asarray(self.agent.action_probs(self._obs.copy(), mask), dtype=np.float64)
            if probs.shape != mask.shape or not np.all(np.isfinite(probs)):
                raise ValueError(
                    f"{self.name}.action_probs must return {mask.shape[0]} finite floats"
                )
            ranked = sorted(ids, key=lambda a: (-probs[a], a))[:TOP_K]
            top = [[names[a], round(float(probs[a]), 4)] for a in ranked]
            best = ranked[0]
        else:
            best = int(self.agent.act(self._obs.copy(), mask))
            if best not in names:
                raise ValueError(f"{self.name} chose illegal action id {best}")
            top = [[names[best], 1.0]]
        if picking:  # the agent picks one tile at a time; the record names all three
            picked = chosen.removeprefix("exchange ")
            agrees = action_to_str(best).split()[1] in [picked[i : i + 2] for i in (0, 2, 4)]
        else:
            agrees = names[best] == chosen
        return {"top": top, "agrees": bool(agrees), "first_pick": picking}
