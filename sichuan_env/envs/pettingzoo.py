"""Sichuan Mahjong, 血战到底 ("blood battle to the end"), as a PettingZoo AEC env.

| Creation     | ``sichuan_env.env(rules=RuleConfig(), obs_version=1, oracle=False, render_mode=None)`` |
| Agents       | ``player_0`` … ``player_3``; ``player_i`` sits in seat i (the dealer is drawn by seed) |
| Actions      | ``Discrete(88)``, named ranges below; ``action_to_str`` / ``action_from_str``          |
| Observation  | ``{"observation": uint8[83, 27], "action_mask": int8[88]}`` (oracle: ``uint8[150, 27]``) |
| Rewards      | point changes of every seat at every step (zero-sum, unscaled: they sum to the scores) |
| Episode      | one hand; every agent terminates when it ends; no truncation                         |

**Actions** (``sichuan_env.engine.actions``): ``0–26`` discard tile t;
``27–53`` pick tile t for 换三张 (three picks, one per step); ``54–56`` declare
void suit m/p/s; ``57–83`` concealed kong, or added kong on a pong, of tile t;
``84`` pong; ``85`` kong (direct, of the discard); ``86`` hu; ``87`` pass.
``action_to_str(id)`` gives the record syntax of RULES.md §10 ("discard 5p",
"void s", "pong"; picks are "pick 3m"); ``action_from_str`` the inverse.

**Observation** (v1): ``uint8[83, 27]``, every entry 0/1, planes over the
27 tile types (columns = tile index, 1m..9m, 1p..9p, 1s..9s), relative to
the observing seat; ``@rel`` blocks repeat for me, next, opposite, previous:

| rows | block | meaning |
| --- | --- | --- |
| 0–3 | hand | own concealed tiles, count >= 1, 2, 3, 4 |
| 4–15 | melds@rel | per seat: pong, exposed kong, concealed kong (one-hot tile) |
| 16–31 | discards@rel | per seat: tiles discarded, count >= 1..4 |
| 32–47 | recent@rel | per seat: the 4 latest discards, latest first |
| 48–51 | void@rel | void suit (9 columns); others' hidden until all four declared |
| 52–59 | won@rel | per seat: all ones once won; the winning tile |
| 60–63 | win_from@rel | per winner: the payer's relative seat (column 4 = self-draw) |
| 64–67 | visible | tiles I can see anywhere, count >= 1..4 |
| 68 | claim | the tile I may claim or rob |
| 69 | phase | columns 0–5: exchange, void, turn, claim, rob, over |
| 70 | drawn | the tile I just drew |
| 71 | picks | my 换三张 picks before the exchange |
| 72 | wall | tiles left: columns < ceil(left / 2) |
| 73 | dealer | the dealer's relative seat |
| 74–81 | scores@rel | per seat: plus row, minus row, ``bit_length(abs(points) / base)`` columns |
| 82 | exchange | the 换三张 offset once exchanged |

``oracle=True`` appends rows 83–94 (the other seats' hands, next, opposite,
previous, count >= 1..4) and 95–149 (the remaining wall in draw order, one
tile per row), for oracle-guided training and centralised critics.
``action_mask`` is all zero for an agent that is not to act (and for
winners, who never act again). ``sichuan_env.encoding.observation`` holds
the same table as data (``OBS_SPEC``, ``block_offsets``).

**Turns**: the engine asks one seat at a time (RULES.md §10): the dealer's
turn, then claim windows where each seat with a claim answers in turn, and
so on. Winners stay in ``agents`` until the hand ends, are never selected,
and keep receiving rewards, since payments (退税) can reach them after they
win. ``infos[agent]["legal_actions"]`` holds the decoded legal actions of the
agent to act (empty for the others). ``env.unwrapped.game`` is the engine's
``Game``, so ``env.unwrapped.game.record()`` is the replayable game record.

An illegal action raises ``IllegalActionError`` listing the legal ones.

Glossary: 碰 pong · 杠 kong · 胡 hu (win) · 定缺 declare a void suit · 换三张
exchange three · 根 root (four of a kind) · 花猪 flower pig (a void tile kept).

Version history
* v1: initial release (observation v1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..encoding.registry import get as get_obs_version
from ..engine.actions import ACTION_SPACE, action_from_str, action_to_str
from ..engine.game import Game, IllegalActionError, validate_seed
from ..rules.config import RuleConfig, kernel_rules
from .render import render_seat

AGENTS = [f"player_{i}" for i in range(4)]


class LegalActions(Sequence):
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

    def __getitem__(self, i):  # type: ignore[override]
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __eq__(self, other: object) -> bool:
        return self._list() == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._list())


def env(**kwargs: Any) -> AECEnv:
    """The AEC env in PettingZoo's order-enforcing wrapper.

    Out-of-range and illegal actions are caught by the raw env itself
    (``IllegalActionError``), so no bounds wrapper is stacked on top.
    """
    return OrderEnforcing(raw_env(**kwargs))


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with ``last()`` answered by the raw env.

    The checks are the same (nothing before ``reset``); ``last()`` skips the
    per-attribute forwarding that otherwise costs more than the env's step.
    """

    def last(self, observe: bool = True) -> tuple:
        """``(observation, cumulative reward, terminated, truncated, info)`` of the selected agent."""
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset")
        return self.env.last(observe)


class raw_env(AECEnv):
    """One hand of 血战到底 per episode; see the module docstring for the full spec."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "sichuan_xuezhan_v1",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: RuleConfig | None = None,
        obs_version: int = 1,
        oracle: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.rules = RuleConfig() if rules is None else rules
        if not isinstance(self.rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(self.rules).__name__}")
        if not isinstance(oracle, (bool, np.bool_)):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self._spec = get_obs_version(obs_version)
        self.obs_version = int(obs_version)
        self.oracle = bool(oracle)
        self.render_mode = render_mode
        self._r = kernel_rules(self.rules)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        shape = self._spec.shape(self.oracle)
        self._obs_shape = shape
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, shape, dtype=np.uint8),
                "action_mask": spaces.Box(0, 1, (ACTION_SPACE,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(ACTION_SPACE) for a in AGENTS}
        self._rng = np.random.default_rng()
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of an agent (the same for all)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(88)`` for every agent."""
        return self.action_spaces[agent]

    @staticmethod
    def action_to_str(action: int) -> str:
        """Record syntax of an action id (RULES.md §10)."""
        return action_to_str(action)

    @staticmethod
    def action_from_str(text: str) -> list[int]:
        """Action ids of a record action (three picks for ``exchange``)."""
        return action_from_str(text)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand; ``seed`` (an integer in ``[0, 2**64)``) makes the sequence reproducible."""
        if seed is not None:
            self._rng = np.random.default_rng(validate_seed(seed))
        self.game = Game(self.rules, seed=int(self._rng.integers(0, 2**63)))
        self.agents = list(AGENTS)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = AGENTS[self.game.to_act()]
        self._update_infos()

    def _update_infos(self) -> None:
        legal = LegalActions(self.game) if not self.game.is_over() else []
        for a in self.agents:
            self.infos[a] = {"legal_actions": legal if a == self.agent_selection else []}

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        return self.game

    def _seat(self, agent: object) -> int:
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; agents: {AGENTS}")
        return AGENTS.index(agent)  # type: ignore[arg-type]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``agent``."""
        return self.observe_as(agent, self.obs_version, self.oracle)

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

    def last(self, observe: bool = True) -> tuple:
        """``(observation, cumulative reward, terminated, truncated, info)`` of the selected agent.

        Raises:
            RuntimeError: before ``reset``, or once every agent has left after the hand's end.
        """
        self._game()
        if not self.agents:
            raise RuntimeError("the hand is over and every agent has left: call reset()")
        return super().last(observe)

    def step(self, action: int | None) -> None:
        """Take the selected agent's action (None for agents whose episode ended).

        Raises:
            RuntimeError: before ``reset``, or after every agent has left.
            IllegalActionError: an action that is not an integer id (``None``, a
                string, a float, a bool) or not legal now; nothing changes, not
                even the agent's accumulated reward.
        """
        game = self._game()
        if not self.agents:
            raise RuntimeError("the hand is over and every agent has left: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        ok = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if not ok or not 0 <= action < ACTION_SPACE or not game._mask()[action]:  # type: ignore[operator]
            raise IllegalActionError(
                f"{agent}: action must be a legal integer action id in [0, {ACTION_SPACE}), "
                f"got {action!r}",
                [str(a) for a in game.legal_ids()],
            )
        scores = game._st["scores"][0]
        before = scores.tolist()
        self._cumulative_rewards[agent] = 0
        game.step_id(int(action))  # type: ignore[arg-type]
        after = scores.tolist()
        self.rewards = {a: after[i] - before[i] for i, a in enumerate(AGENTS)}
        self._accumulate_rewards()
        if game.is_over():
            self.terminations = {a: True for a in self.agents}
        else:
            self.agent_selection = AGENTS[game.to_act()]  # type: ignore[index]
        self._update_infos()

    def render(self) -> str | None:
        """``ansi``: the selected agent's view as text."""
        game = self._game()
        if self.render_mode is None:
            return None
        return render_seat(game, AGENTS.index(self.agent_selection))

    def close(self) -> None:
        """Nothing to release."""
