"""What the AEC env shows without moving the hand: spaces, names, infos, other views, rendering.

``AECViews`` is the half of ``sichuan_env.envs.pettingzoo.raw_env`` that only reads
the hand (the other half deals, observes and steps): the spaces, action names,
the legal-action names and the infos that carry them (``LegalActions``, decoded
on first use), observations in another version (``observe_as``) and rendering.
``check_options`` checks the env's constructor options. The contract is the
``sichuan_env.envs.pettingzoo`` module docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsIndex, overload

import numpy as np
from gymnasium import spaces

from ..encoding.registry import get as get_obs_version
from ..engine.actions import ACTION_SPACE, action_from_str, action_to_str
from ..engine.game import Game
from ..rules.config import RuleConfig
from .render import render_rgb, render_seat

AGENTS = [f"player_{i}" for i in range(4)]
RENDER_MODES = ("human", "ansi", "rgb_array")
ILLEGAL_ACTION_MODES = ("raise", "penalize", "terminate")


class LegalActions(Sequence[str]):
    """The legal actions of the seat to act as strings, decoded on first use.

    Behaves as a list (``==``, ``in``, indexing, iteration); decoding costs a
    few microseconds, so the env only pays it when a caller looks.
    """

    def __init__(self, game: Game) -> None:
        self._game = game
        self._items: list[str] | None = None

    def _list(self) -> list[str]:
        if self._items is None:
            self._items = self._game.legal()
        return self._items

    @overload
    def __getitem__(self, i: SupportsIndex) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: SupportsIndex | slice) -> str | list[str]:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __eq__(self, other: object) -> bool:
        return self._list() == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._list())


def check_options(
    rules: RuleConfig | None,
    oracle: object,
    render_mode: object,
    illegal_action: object,
    illegal_penalty: object,
    info_legal_names: object,
) -> RuleConfig:
    """The env's rules (default ``RuleConfig()``), once every option is checked.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an unknown render mode or illegal-action mode, or a negative or
            non-finite penalty.
    """
    rules = RuleConfig() if rules is None else rules
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if not isinstance(oracle, (bool, np.bool_)):
        raise TypeError(f"oracle must be True or False, got {oracle!r}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}"
        )
    if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_MODES:
        raise ValueError(
            f"illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}"
        )
    if isinstance(illegal_penalty, (bool, np.bool_)) or not isinstance(
        illegal_penalty, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"illegal_penalty must be a number, got {illegal_penalty!r}")
    if not 0 <= float(illegal_penalty) < float("inf"):
        raise ValueError(f"illegal_penalty must be finite and >= 0, got {illegal_penalty!r}")
    if not isinstance(info_legal_names, (bool, np.bool_)):
        raise TypeError(f"info_legal_names must be True or False, got {info_legal_names!r}")
    return rules


class AECViews:
    """The reading half of ``raw_env`` (a mixin: the env sets these attributes)."""

    game: Game | None
    agents: list[str]
    agent_selection: str
    terminations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    observation_spaces: dict[str, spaces.Space]
    action_spaces: dict[str, spaces.Space]
    obs_version: int
    render_mode: str | None
    info_legal_names: bool
    _spec: Any
    _r: np.ndarray
    _infos_fresh: bool

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of an agent (the same for all)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(88)`` for every agent."""
        return self.action_spaces[agent]

    @staticmethod
    def action_to_str(action: int) -> str:
        """Record syntax of an action id (docs/rules.md §10)."""
        return action_to_str(action)

    @staticmethod
    def action_from_str(text: str) -> list[int]:
        """Action ids of a record action (three picks for ``exchange``)."""
        return action_from_str(text)

    def _update_infos(self, offender: str | None = None) -> None:
        """Fresh infos: ``illegal_action`` (True for ``offender``), names if asked for."""
        if self._infos_fresh and offender is None:
            return  # every info is {"illegal_action": False} already
        for a in self.agents:
            self.infos[a] = {"illegal_action": a == offender}
        self._infos_fresh = offender is None and not self.info_legal_names
        if self.info_legal_names:
            game = self._game()
            live = not game.is_over() and not self.terminations[self.agent_selection]
            legal = LegalActions(game) if live else []
            for a in self.agents:
                self.infos[a]["legal_actions"] = legal if a == self.agent_selection else []

    def legal_action_names(self, agent: str) -> list[str]:
        """The legal actions of ``agent`` in record syntax ("discard 5p", "pong"; [] if not to act).

        Raises:
            RuntimeError: before ``reset``. ValueError: an unknown agent.
        """
        game = self._game()
        self._seat(agent)
        if agent != self.agent_selection or self.terminations.get(agent, True):
            return []
        return game.legal()

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        return self.game

    @staticmethod
    def _agent_to_act(game: Game) -> str:
        seat = game.to_act()
        if seat is None:
            raise RuntimeError("the hand is over: no agent is to act")
        return AGENTS[seat]

    def _seat(self, agent: object) -> int:
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; agents: {AGENTS}")
        return AGENTS.index(agent)

    def observe_as(self, agent: str, version: int, oracle: bool = False) -> dict[str, np.ndarray]:
        """``observe`` in another observation version (agents of several versions at one table).

        Raises:
            RuntimeError: before ``reset``. ValueError: an unknown agent or version.
        """
        game = self._game()
        seat = self._seat(agent)
        spec = self._spec if version == self.obs_version else get_obs_version(version)
        if not isinstance(oracle, (bool, np.bool_)):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        obs = np.zeros(spec.shape(bool(oracle)), dtype=np.uint8)
        spec.encode_at(game._st, 0, seat, bool(oracle), self._r, obs)
        if self.agent_selection == agent and not self.terminations.get(agent, True):
            mask = game.legal_mask()
        else:
            mask = np.zeros(ACTION_SPACE, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    @staticmethod
    def _legal_strs(game: Game) -> list[str]:
        return [str(int(a)) for a in game.legal_ids()]

    def render(self) -> str | np.ndarray | None:
        """The selected agent's view: text (``ansi``), printed (``human``) or an image (``rgb_array``).

        Returns:
            A string for ``ansi``, ``uint8[H, W, 3]`` for ``rgb_array``, None for
            ``human`` (it prints) and without a render mode.

        Raises:
            RuntimeError: before ``reset``.
        """
        game = self._game()
        seat = AGENTS.index(self.agent_selection)
        if self.render_mode == "rgb_array":
            return render_rgb(game, seat)
        if self.render_mode == "ansi":
            return render_seat(game, seat)
        if self.render_mode == "human":
            print(render_seat(game, seat) + "\n", flush=True)
        return None

    def close(self) -> None:
        """Nothing to release."""


__all__ = [
    "AGENTS",
    "ILLEGAL_ACTION_MODES",
    "RENDER_MODES",
    "AECViews",
    "LegalActions",
    "check_options",
]
