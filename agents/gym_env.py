"""``SingleSeatEnv``: a Gymnasium env in which the learner plays one seat against registered agents.

    import gymnasium, sichuan_env
    env = gymnasium.make("SichuanMahjong-v0", opponents=("heuristic",) * 3)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.unwrapped.action_masks().argmax())

Registered as ``SichuanMahjong-v0`` when ``sichuan_env`` is imported (the
entry point is a string, so ``import sichuan_env`` never imports ``agents``).
One episode is one hand. The learner sits in ``seat`` (0..3) or, with
``seat="rotate"``, in seat ``k % 4`` for the ``k``-th hand since the last seeded
reset; the other seats are played by ``opponents`` (registered names or
checkpoint paths, ``sichuan_env.agents.registry``), each reading its own observation
version. ``step`` applies the learner's action, lets the opponents play until
the learner owes a decision again or the hand ends, and returns the learner's
point change over that span (others' wins, kongs, 退税 and the 流局 settlement
included) times ``reward_scale``. A learner that has won is never asked again:
its episode runs on to the end of the hand (it can still be paid). Observations
are ``Box(0, 1, (rows, 27), uint8)`` of ``obs_version``; ``action_masks()``
gives the legal actions (for sb3-contrib's ``MaskablePPO``), and so does
``info["action_mask"]``. An illegal action changes nothing: by default
(``illegal_action="penalize"``) the step returns the same observation, a reward
of ``-illegal_penalty`` and ``info["illegal_action"] = True`` (what
``gymnasium.utils.env_checker.check_env`` and unmasked learners need);
``illegal_action="raise"`` raises ``IllegalActionError`` instead.

Rule-based opponents (``heuristic``, ``value``, ``defensive``) play inside
numba between the learner's decisions (``sichuan_env.agents.rule_based.fused``: the same kernels,
so the same actions as the agent objects); ``python -m benchmarks.gym_env``
measures the learner steps/s.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.fused import learner_step_at, run_styles_at, style_codes

from sichuan_env import Game, RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.engine.game import validate_seed
from sichuan_env.engine.state import PH_OVER
from sichuan_env.envs.render import render_seat
from sichuan_env.kernels.tables import get_tables

_T = get_tables()


class SingleSeatEnv(gymnasium.Env):
    """One seat of 血战到底 against three agents; see the module docstring.

    Args:
        opponents: three agent specs for the other seats, in turn order after the learner.
        rules: the ruleset (default RULES.md §9).
        obs_version: the learner's observation version.
        seat: the learner's seat 0..3, or ``"rotate"``.
        oracle: append the hidden information to the learner's observations.
        reward_scale: multiplies the points of every reward.
        illegal_action: ``"penalize"`` (a no-op step rewarded ``-illegal_penalty``) or ``"raise"``.
        illegal_penalty: the penalty of an illegal action (>= 0).
        render_mode: None or ``"ansi"``.
        fused_opponents: play rule-based opponents (heuristic, value, defensive) inside numba
            (``sichuan_env.agents.rule_based.fused``; the same actions as the agent objects, several times faster).

    Raises:
        ValueError, TypeError: bad arguments (an unknown agent names the registered ones).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012 - gymnasium's convention

    def __init__(
        self,
        opponents: tuple[str, ...] | list[str] = ("heuristic", "heuristic", "heuristic"),
        rules: RuleConfig | None = None,
        obs_version: int = 1,
        seat: int | str = "rotate",
        oracle: bool = False,
        reward_scale: float = 1.0,
        illegal_action: str = "penalize",
        illegal_penalty: float = 1.0,
        render_mode: str | None = None,
        fused_opponents: bool = True,
    ) -> None:
        if not isinstance(opponents, (list, tuple)) or len(opponents) != 3:
            raise ValueError(f"opponents must name 3 agents, got {opponents!r}")
        self.rules = RuleConfig() if rules is None else rules
        if not isinstance(self.rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(self.rules).__name__}")
        if seat != "rotate" and (isinstance(seat, bool) or seat not in (0, 1, 2, 3)):
            raise ValueError(f"seat must be 0..3 or 'rotate', got {seat!r}")
        if not isinstance(oracle, (bool, np.bool_)):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        if not isinstance(reward_scale, (int, float)) or not np.isfinite(reward_scale):
            raise ValueError(f"reward_scale must be a finite number, got {reward_scale!r}")
        if illegal_action not in ("penalize", "raise"):
            raise ValueError(
                f"illegal_action must be 'penalize' or 'raise', got {illegal_action!r}"
            )
        if not isinstance(illegal_penalty, (int, float)) or not 0 <= illegal_penalty < float("inf"):
            raise ValueError(
                f"illegal_penalty must be a finite number >= 0, got {illegal_penalty!r}"
            )
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self._spec = get_obs_version(obs_version)
        self.oracle = bool(oracle)
        self.seat_rule = seat
        self.reward_scale = float(reward_scale)
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.opponent_specs = tuple(opponents)
        self.opponents = [make_agent(spec, seed=k) for k, spec in enumerate(opponents)]
        self._other_specs = {a.obs_version: get_obs_version(a.obs_version) for a in self.opponents}
        self.observation_space = spaces.Box(0, 1, self._spec.shape(self.oracle), dtype=np.uint8)
        self.action_space = spaces.Discrete(ACTION_SPACE)
        self._game: Game | None = None
        self._hand = 0
        self.seat = 0 if seat == "rotate" else int(seat)
        self._r = self.rules.as_array().copy()
        self._obs_buf = {v: np.zeros(s.shape(), np.uint8) for v, s in self._other_specs.items()}
        # rule-based opponents play inside numba (sichuan_env.agents.rule_based.fused): the same answers, no Python per decision
        if not isinstance(fused_opponents, (bool, np.bool_)):
            raise TypeError(f"fused_opponents must be True or False, got {fused_opponents!r}")
        self._codes = style_codes(self.opponent_specs) if fused_opponents else None
        self._styles = np.zeros(4, dtype=np.int64)
        self._v1 = np.zeros((83, 27), dtype=np.uint8)
        self._mask_buf = np.zeros(ACTION_SPACE, dtype=np.int8)
        self._next = np.zeros(ACTION_SPACE, dtype=np.int8)
        self._legal = np.zeros(ACTION_SPACE, dtype=bool)  # the learner's mask now

    # ------------------------------------------------------------------ api
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new hand and play the opponents up to the learner's first decision."""
        super().reset(seed=seed)
        if seed is not None:
            validate_seed(seed)
            self._hand = 0
            for k, agent in enumerate(self.opponents):
                if hasattr(agent, "reset"):
                    agent.reset(seed + k + 1)
        if self.seat_rule == "rotate":
            self.seat = self._hand % 4
        if self._codes is not None:
            for k in range(3):
                self._styles[(self.seat + 1 + k) % 4] = self._codes[k]
        self._hand += 1
        self._game = game = Game(self.rules, seed=int(self.np_random.integers(0, 2**63)))
        self._phase = game._st["phase"]  # views into the record: cheap reads every step
        self._scores = game._st["scores"][0]
        self._advance()
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action; the opponents play until the learner owes a decision."""
        game = self._require()
        if self._phase[0] == PH_OVER:
            raise RuntimeError("the hand is over: call reset()")
        legal = (
            isinstance(action, (int, np.integer))
            and not isinstance(action, (bool, np.bool_))
            and 0 <= action < ACTION_SPACE
            and bool(self._legal[action])
        )
        if not legal and self.illegal_action == "penalize":
            info = self._info()
            info["illegal_action"] = True
            return self._observe(), -self.illegal_penalty, False, False, info
        if legal and self._codes is not None:  # one numba call: learner, opponents, next mask
            delta = learner_step_at(
                game._st, 0, int(action), self._styles, self.seat, self._r, _T["FLAGS"],
                _T["WAITS"], self._v1, self._mask_buf, _T["DIST"], self._next,
            )  # fmt: skip
            game._mask_ok = False  # the state moved on outside Game's own methods
            self._legal = self._next.astype(bool)
        else:
            before = int(self._scores[self.seat])
            game.step_id(action)  # IllegalActionError (nothing changes) if not legal
            self._advance()
            delta = int(self._scores[self.seat]) - before
        return (
            self._observe(),
            delta * self.reward_scale,
            bool(self._phase[0] == PH_OVER),
            False,
            self._info(),
        )

    def action_masks(self) -> np.ndarray:
        """``bool[88]``: the learner's legal actions now (all False once the hand is over)."""
        self._require()
        return self._legal.copy()

    def render(self) -> str | None:
        """``ansi``: the learner's view as text."""
        game = self._require()
        return render_seat(game, self.seat) if self.render_mode == "ansi" else None

    @property
    def game(self) -> Game:
        """The engine's ``Game`` of the current hand (``game.record()`` replays it)."""
        return self._require()

    # ------------------------------------------------------------ internals
    def _require(self) -> Game:
        if self._game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        return self._game

    def _advance(self) -> None:
        """Opponents act until the learner owes a decision or the hand is over."""
        game = self._require()
        if self._codes is not None:
            run_styles_at(
                game._st,
                0,
                self._styles,
                self.seat,
                self._r,
                _T["FLAGS"],
                _T["WAITS"],
                self._v1,
                self._mask_buf,
                _T["DIST"],
            )
            game._mask_ok = False  # the state moved on outside Game's own methods
        else:
            while not game.is_over() and game.to_act() != self.seat:
                s = game.to_act()
                agent = self.opponents[(s - self.seat - 1) % 4]
                if getattr(agent, "reads_state", False):  # a search agent reads the hand record
                    mask = game._mask()[None]
                    game.step_id(int(agent.act_states(game._st.copy(), mask, self.rules)[0]))
                    continue
                spec = self._other_specs[agent.obs_version]
                obs = self._obs_buf[agent.obs_version]
                spec.encode_at(game._st, 0, s, False, self._r, obs)
                game.step_id(int(agent.act(obs, game._mask())))
        over = game.is_over()
        self._legal = np.zeros(ACTION_SPACE, dtype=bool) if over else game._mask().astype(bool)

    def _observe(self) -> np.ndarray:
        game = self._require()
        out = np.zeros(self.observation_space.shape, dtype=np.uint8)
        self._spec.encode_at(game._st, 0, self.seat, self.oracle, self._r, out)
        return out

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._legal.copy(), "seat": self.seat, "illegal_action": False}


__all__ = ["IllegalActionError", "SingleSeatEnv"]
