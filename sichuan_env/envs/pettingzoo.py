"""Sichuan Mahjong, 血战到底 ("blood battle to the end"), as a PettingZoo AEC env.

| Creation     | ``sichuan_env.env(rules=RuleConfig(), obs_version=1, oracle=False, render_mode=None)`` |
| Options      | ``illegal_action="raise"``, ``illegal_penalty=1.0``, ``info_legal_names=False``      |
| Agents       | ``player_0`` … ``player_3``; ``player_i`` sits in seat i (the dealer is drawn by seed) |
| Actions      | ``Discrete(88)``, named ranges below; ``action_to_str`` / ``action_from_str``          |
| Observation  | ``{"observation": uint8[83, 27], "action_mask": int8[88]}`` (oracle: ``uint8[150, 27]``) |
| Rewards      | point changes of every seat at every step (zero-sum, unscaled: they sum to the scores) |
| Episode      | one hand; every agent terminates when it ends; no truncation                         |
| Infos        | ``{"illegal_action": bool}`` per agent (arrays and numbers only; names are opt-in)   |
| Render modes | ``"human"`` (prints), ``"ansi"`` (text), ``"rgb_array"`` (``uint8[H, W, 3]``)           |

**Actions** (``sichuan_env.engine.actions``): ``0–26`` discard tile t;
``27–53`` pick tile t for 换三张 (three picks, one per step); ``54–56`` declare
void suit m/p/s; ``57–83`` concealed kong, or added kong on a pong, of tile t;
``84`` pong; ``85`` kong (direct, of the discard); ``86`` hu; ``87`` pass.
``action_to_str(id)`` gives the record syntax of docs/rules.md §10 ("discard 5p",
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

**Turns**: the engine asks one seat at a time (docs/rules.md §10): the dealer's
turn, then claim windows where each seat with a claim answers in turn, and
so on. Winners stay in ``agents`` until the hand ends, are never selected,
and keep receiving rewards, since payments (退税) can reach them after they
win. ``env.unwrapped.game`` is the engine's ``Game``, so
``env.unwrapped.game.record()`` is the replayable game record.

**Infos** hold numbers only, so that wrappers which turn infos into tensors
(TorchRL's ``PettingZooWrapper``, Tianshou's ``Collector``) take them as they
are: ``infos[agent]["illegal_action"]`` is True for the agent whose last
action was penalised (see below) and False otherwise. The legal actions are the
observation's ``action_mask``; their names (record syntax, "discard 5p") come
from ``env.unwrapped.legal_action_names(agent)``, and with
``info_legal_names=True`` also as ``infos[agent]["legal_actions"]`` (a list of
strings for the agent to act, empty for the others; decoded on first use).

**Action values** may be any integer scalar: a Python ``int``, a numpy integer or a
0-d integer array (what sb3's ``model.predict`` returns). A bool, a float, a
string, None for a live agent, an array with dimensions or an id outside
``[0, 88)`` always raises ``IllegalActionError`` (a ``ValueError``) and changes
nothing. A well-formed id that is not legal now is handled as
``illegal_action`` says:

* ``"raise"`` (default): ``IllegalActionError`` listing the legal ids; nothing changes.
* ``"penalize"``: nothing changes in the hand and the same agent still owes the
  decision; its reward for the step is ``-illegal_penalty`` (the others get 0)
  and ``infos[agent]["illegal_action"]`` is True.
* ``"terminate"``: the hand ends for every agent (all terminate; the engine's
  hand is left unfinished, so its record stops there) with the offender's
  reward ``-illegal_penalty`` and the others 0; ``infos[agent]["illegal_action"]``
  flags the offender.

The last two are for samplers that ignore the mask (RLlib's env pre-check
samples the bare action space).

**Rendering**: ``"ansi"`` returns the selected agent's view as text,
``"human"`` prints it (after every ``reset`` and ``step`` too, as Gymnasium
does) and returns None, ``"rgb_array"`` returns it as an image
(``render.render_rgb``: numpy only, a fixed shape ``render.RGB_SHAPE``).

**No Parallel API**: Sichuan Mahjong is turn-based. One seat decides at a
time, and who decides next depends on that decision (a discard opens a claim
window for the seats that can claim it, a kong draws again, a win may end a
seat's play), so there is no step at which every agent acts together, and
PettingZoo's ``aec_to_parallel`` (which steps the agents in a fixed cycle)
cannot convert it: the metadata says ``is_parallelizable: False``, and the
conversion raises ``NotImplementedError`` saying so, as does ``parallel_env()``.
Batches of hands are ``sichuan_env.VectorEnv``'s job.

**Call order**: through ``env()`` every call before ``reset`` (``step``,
``observe``, ``last``, ``render``, ``state``, ``agent_iter``), and ``step`` or
``last`` once every agent has left after the hand's end, raises
``RuntimeError`` saying to call ``reset()``; reading ``rewards``,
``terminations``, ``truncations``, ``infos``, ``agent_selection``,
``num_agents`` or ``agents`` before ``reset`` raises PettingZoo's
``AttributeError`` (so ``hasattr`` keeps working). ``raw_env`` raises the same
``RuntimeError`` for ``step``, ``observe``, ``last`` and ``render``.

Glossary: 碰 pong · 杠 kong · 胡 hu (win) · 定缺 declare a void suit · 换三张
exchange three · 根 root (four of a kind) · 花猪 flower pig (a void tile kept).

Version history
* v1: initial release (observation v1).
* v1, same spaces: infos hold numbers only (names opt-in: ``info_legal_names``),
  integer-scalar actions, ``illegal_action`` modes, ``human`` and ``rgb_array``
  rendering, ``RuntimeError`` for calls out of order through ``env()``.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ..encoding.registry import get as get_obs_version
from ..engine.actions import ACTION_SPACE, action_to_str
from ..engine.game import Game, IllegalActionError, validate_seed
from ..engine.step import ILLEGAL, decide_at
from ..kernels.tables import get_tables
from ..rules.config import RuleConfig, kernel_rules
from .action_check import action_id
from .aec_order import OrderEnforcing
from .aec_views import (
    AGENTS,
    ILLEGAL_ACTION_MODES,
    RENDER_MODES,
    AECViews,
    LegalActions,
    check_options,
)

_SEATS = {a: i for i, a in enumerate(AGENTS)}
_NO_DELTAS = [0, 0, 0, 0]
_NO_REWARDS: dict[str, float] = dict.fromkeys(AGENTS, 0)


NO_PARALLEL = (
    "sichuan_env has no PettingZoo Parallel API: Sichuan Mahjong is turn-based (one seat "
    "decides at a time, and who decides next depends on that decision: claims, kongs, wins), "
    "so no step has every agent act together; use the AEC env (sichuan_env.env()), or "
    "sichuan_env.VectorEnv for batches of hands (docs/environments.md)"
)
"""Why ``aec_to_parallel`` and ``parallel_env`` are refused."""


class _Metadata(dict[str, Any]):
    """The env's metadata; PettingZoo's ``aec_to_parallel`` is told why it cannot convert.

    ``metadata["is_parallelizable"]`` is False, and so is ``metadata.get(...)`` for every
    caller but PettingZoo's conversion, whose own refusal (an ``AssertionError`` asking
    to set the key to True) would suggest that the env could be converted.
    """

    def get(self, key: Any, default: Any = None) -> Any:
        if key == "is_parallelizable":
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller == "pettingzoo.utils.conversions":
                raise NotImplementedError(NO_PARALLEL)
        return super().get(key, default)


def parallel_env(**kwargs: Any) -> None:
    """Refused: the env is turn-based, so there is no Parallel API (module docstring).

    Raises:
        NotImplementedError: always, saying why and what to use instead.
    """
    raise NotImplementedError(NO_PARALLEL)


def env(**kwargs: Any) -> AECEnv:
    """The AEC env in PettingZoo's order-enforcing wrapper.

    Out-of-range and illegal actions are caught by the raw env itself
    (``IllegalActionError``), so no bounds wrapper is stacked on top.
    """
    return OrderEnforcing(raw_env(**kwargs))


class raw_env(AECViews, AECEnv):
    """One hand of 血战到底 per episode; see the module docstring for the full spec.

    Args:
        rules: the ruleset.
        obs_version: observation version (``sichuan_env.encoding.versions()``).
        oracle: append the hidden information (other hands, wall order) to observations.
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.
        illegal_action: what a well-formed but illegal action does: ``"raise"``,
            ``"penalize"`` or ``"terminate"`` (module docstring).
        illegal_penalty: the penalty of an illegal action under ``"penalize"`` /
            ``"terminate"``: a finite number >= 0 (the reward is its negative).
        info_legal_names: also put the legal actions' names in
            ``infos[agent]["legal_actions"]`` (strings: off by default, since
            tensor-building wrappers cannot take them).

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an unknown render mode, illegal-action mode or observation
            version, or a negative or non-finite penalty.
    """

    metadata: ClassVar[dict[str, Any]] = _Metadata(
        {
            "render_modes": list(RENDER_MODES),
            "render_fps": 2,
            "name": "sichuan_xuezhan_v1",
            "is_parallelizable": False,  # turn-based: no Parallel API (module docstring)
        }
    )

    def __init__(
        self,
        rules: RuleConfig | None = None,
        obs_version: int = 1,
        oracle: bool = False,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = 1.0,
        info_legal_names: bool = False,
    ) -> None:
        super().__init__()
        self.rules = check_options(
            rules, oracle, render_mode, illegal_action, illegal_penalty, info_legal_names
        )
        self._spec = get_obs_version(obs_version)
        self.obs_version = int(obs_version)
        self.oracle = bool(oracle)
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.info_legal_names = bool(info_legal_names)
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
        tables = get_tables()
        self._flags, self._waits = tables["FLAGS"], tables["WAITS"]
        self._deltas = np.zeros(4, dtype=np.int64)  # decide_at's point changes
        self._encode = self._spec.encode_at
        self._infos_fresh = False  # every info is {"illegal_action": False} (no names)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new hand; ``seed`` (an integer in ``[0, 2**64)``) makes the sequence reproducible."""
        if seed is not None:
            self._rng = np.random.default_rng(validate_seed(seed))
        game = self.game = Game(self.rules, seed=int(self._rng.integers(0, 2**63)))
        self.agents = list(AGENTS)
        self.rewards: dict[str, float] = {a: 0 for a in self.agents}
        self._cumulative_rewards: dict[str, float] = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        mask, deltas = game._scratch, self._deltas
        seat = decide_at(game._st, 0, -1, self._r, self._flags, self._waits, mask, deltas)
        game._mask_ok = True  # decide_at filled the game's legal mask
        self.agent_selection = AGENTS[seat]
        self._infos_fresh = False
        self._update_infos()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``agent``."""
        game = self.game
        seat = _SEATS.get(agent) if type(agent) is str else None
        if game is None or seat is None:
            return self.observe_as(agent, self.obs_version, self.oracle)  # raises
        obs = np.empty(self._obs_shape, dtype=np.uint8)  # the writer sets every entry
        self._encode(game._st, 0, seat, self.oracle, self._r, obs)
        if agent == self.agent_selection and not self.terminations.get(agent, True):
            mask = (game._scratch if game._mask_ok else game._mask()).copy()
        else:
            mask = np.zeros(ACTION_SPACE, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple:
        """``(observation, cumulative reward, terminated, truncated, info)`` of the selected agent.

        Raises:
            RuntimeError: before ``reset``, or once every agent has left after the hand's end.
        """
        if self.game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        if not self.agents:
            raise RuntimeError("the hand is over and every agent has left: call reset()")
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: int | np.integer | np.ndarray | None) -> None:
        """Take the selected agent's action (None for agents whose episode ended).

        ``action`` is an integer scalar: an ``int``, a numpy integer or a 0-d
        integer array. A legal id moves the hand; an illegal one is handled as
        ``illegal_action`` says (module docstring).

        Raises:
            RuntimeError: before ``reset``, or after every agent has left.
            IllegalActionError: an action that is not an integer scalar
                (``None``, a string, a float, a bool, a list, an array with
                dimensions: an ``ActionTypeError``, also a ``TypeError``) or
                outside ``[0, 88)``, whatever ``illegal_action`` says, or
                (``illegal_action="raise"``) not legal now; nothing changes, not
                even the agent's accumulated reward.
        """
        game = self.game
        if game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        if not self.agents:
            raise RuntimeError("the hand is over and every agent has left: call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        aid = action_id(action, agent, lambda: self._legal_strs(game))  # the envs' one contract
        mask = game._mask()  # the current decision's (decide_at keeps it filled)
        seat = decide_at(game._st, 0, aid, self._r, self._flags, self._waits, mask, self._deltas)
        if seat == ILLEGAL:
            if self.illegal_action == "raise":
                raise IllegalActionError(
                    f"{agent}: action {aid} ({action_to_str(aid)}) is not legal now",
                    self._legal_strs(game),
                )
            self._penalize(agent)
            return
        game._mask_ok = True  # decide_at left the next decision's mask in it
        deltas = self._deltas.tolist()
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0
        if deltas == _NO_DELTAS:  # most decisions move no points
            self.rewards = dict(_NO_REWARDS)
        else:
            rewards: dict[str, float] = dict(zip(AGENTS, deltas, strict=True))
            self.rewards = rewards
            for a in AGENTS:  # PettingZoo's _accumulate_rewards: every agent stays to the end
                cumulative[a] += rewards[a]
        if seat < 0:
            self.terminations = {a: True for a in self.agents}
        else:
            self.agent_selection = AGENTS[seat]
        if not self._infos_fresh:
            self._update_infos()
        if self.render_mode == "human":
            self.render()

    def _penalize(self, agent: str) -> None:
        """An illegal action under ``"penalize"`` / ``"terminate"``: the hand does not move."""
        self._cumulative_rewards[agent] = 0
        self.rewards = {a: 0 for a in self.agents}
        self.rewards[agent] = -self.illegal_penalty
        self._accumulate_rewards()
        if self.illegal_action == "terminate":
            self.terminations = {a: True for a in self.agents}
        self._update_infos(offender=agent)


__all__ = [
    "AGENTS",
    "ILLEGAL_ACTION_MODES",
    "NO_PARALLEL",
    "RENDER_MODES",
    "IllegalActionError",
    "LegalActions",
    "OrderEnforcing",
    "env",
    "parallel_env",
    "raw_env",
]
