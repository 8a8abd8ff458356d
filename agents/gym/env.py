"""``SingleSeatEnv``: a Gymnasium env in which the learner plays one seat against registered agents.

    import gymnasium, sichuan_env
    env = gymnasium.make("SichuanMahjong-v0", opponents=("heuristic",) * 3)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.unwrapped.action_masks().argmax())

Registered as ``SichuanMahjong-v0`` when ``sichuan_env`` is imported (the
entry point is a string, so ``import sichuan_env`` never imports ``agents``).
One episode is one hand. The learner sits in ``seat`` (0..3) or, with
``seat="rotate"``, in seat ``k % 4`` for the ``k``-th hand since the last seeded
reset; the other seats are played by ``opponents`` (registered names, checkpoint
paths or ``"package.module:Class"`` references, ``sichuan_env.agents.registry``,
or agent objects used as they are), each reading its own observation
version. ``step`` applies the learner's action, lets the opponents play until
the learner owes a decision again or the hand ends, and returns the learner's
point change over that span (others' wins, kongs, 退税 and the 流局 settlement
included) times ``reward_scale``. A learner that has won is never asked again:
its episode runs on to the end of the hand (it can still be paid). Observations
are ``Box(0, 1, (rows, 27), uint8)`` of ``obs_version``; ``action_masks()``
gives the legal actions (for sb3-contrib's ``MaskablePPO``), and so does
``info["action_mask"]``.

An action is an integer scalar in ``[0, 88)`` (an ``int``, a numpy integer, or
a 0-d integer array such as sb3's ``model.predict`` returns); anything else (a
string, a float, a bool, None, a list, ``np.float32(1)``) is a ``TypeError``
and an integer out of range an ``IllegalActionError`` (a ``ValueError``),
whatever ``illegal_action`` says (``sichuan_env.envs.action_check``, the
contract every env shares). An id that is not legal now changes nothing: by
default (``illegal_action="penalize"``) the step returns the same observation,
a reward of ``-illegal_penalty`` and ``info["illegal_action"] = True`` (what
``gymnasium.utils.env_checker.check_env`` and unmasked learners need);
``illegal_action="raise"`` raises ``IllegalActionError`` instead. A rejected
call (a bad seed or options to ``reset``, a raising ``step``) leaves the env
exactly as it was, its random generator included.

Render modes: ``"human"`` prints the learner's view at every ``reset`` and
``step`` (and on ``render()``), ``"ansi"`` returns it as text, ``"rgb_array"``
returns the table image (``sichuan_env.envs.render.render_rgb``).

Rule-based opponents given by name (``heuristic``, ``value``, ``defensive``)
play inside numba between the learner's decisions
(``sichuan_env.agents.rule_based.fused``: the same kernels, so the same actions
as the agent objects); ``python -m benchmarks.gym_env`` measures the learner
steps/s. ``gymnasium.make_vec("SichuanMahjong-v0", num_envs=N)`` steps N such
envs in one numba call (``sichuan_env.agents.gym.vector``).
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from sichuan_env.agents.gym.args import (
    MAX_MAGNITUDE,
    RENDER_MODES,
    check_env_args,
    check_options,
    is_int,
)
from sichuan_env.agents.gym.core import SeatEnvCore
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.fused import learner_step_at, run_styles_at, style_codes

from sichuan_env import Game, RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.actions import ACTION_SPACE, action_to_str
from sichuan_env.engine.deal_args import validate_seed
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.engine.state import PH_OVER
from sichuan_env.envs.acting import SeatMemory, ask_one
from sichuan_env.envs.action_check import action_id
from sichuan_env.kernels.tables import get_tables
from sichuan_env.tiles import echo

_T = get_tables()


def _opponent(spec: object, k: int) -> Any:
    """The agent of ``opponents[k]``: a spec resolved by the registry, or an agent object as is."""
    if isinstance(spec, (str, os.PathLike)):
        return make_agent(spec, seed=k)
    if getattr(spec, "reads_state", False):
        if not callable(getattr(spec, "act_states", None)):
            raise TypeError(f"opponents[{k}]: reads_state is set but act_states is missing")
        return spec
    method = "act_stateful" if getattr(spec, "stateful", False) else "act_batch"
    if not callable(getattr(spec, method, None)) or not hasattr(spec, "obs_version"):
        raise TypeError(
            f"opponents[{k}] must be an agent spec (a registered name, a checkpoint path or "
            f"'package.module:Class') or an agent object with obs_version and {method}(), "
            f"got {echo(spec)}"
        )
    if not is_int(spec.obs_version):
        raise TypeError(
            f"opponents[{k}].obs_version must be an integer, got {echo(spec.obs_version)}"
        )
    get_obs_version(int(spec.obs_version))  # ValueError: an unknown version
    return spec


class SingleSeatEnv(SeatEnvCore, gymnasium.Env):
    """One seat of 血战到底 against three agents; see the module docstring.

    Args:
        opponents: three opponents for the other seats, in turn order after the
            learner: agent specs (registered names, checkpoint paths,
            ``"package.module:Class"``) or agent objects (used as they are, never
            fused), mixed as you like.
        rules: the ruleset (default docs/rules.md §9).
        obs_version: the learner's observation version.
        seat: the learner's seat 0..3, or ``"rotate"``.
        oracle: append the hidden information to the learner's observations.
        reward_scale: multiplies the points of every reward; a finite number with
            ``|reward_scale| <= 1e6`` (``MAX_MAGNITUDE``).
        illegal_action: ``"penalize"`` (a no-op step rewarded ``-illegal_penalty``) or ``"raise"``.
        illegal_penalty: the penalty of an illegal action, a finite number in ``[0, 1e6]``.
        render_mode: None, ``"human"``, ``"ansi"`` or ``"rgb_array"``.
        fused_opponents: play rule-based opponents given by name (heuristic, value,
            defensive) inside numba (``sichuan_env.agents.rule_based.fused``; the
            same actions as the agent objects, several times faster).

    Raises:
        TypeError: an argument of the wrong type (an opponent object without
            ``obs_version`` / ``act_batch``, a non-integer ``obs_version``, ...).
        ValueError: a bad value (an unknown agent names the registered ones;
            a number out of range or not finite).
    """

    # gymnasium's convention: a class attribute
    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        opponents: tuple[Any, ...] | list[Any] = ("heuristic", "heuristic", "heuristic"),
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
        # the checks and settings both envs share (core.py)
        args = self._configure(check_env_args(
            opponents, rules, obs_version, seat, oracle, reward_scale, illegal_action,
            illegal_penalty, render_mode, fused_opponents,
        ))  # fmt: skip
        self.opponents = [_opponent(spec, k) for k, spec in enumerate(args.opponents)]
        self.observation_space: spaces.Box
        self.observation_space, self.action_space = self._single_spaces()
        self._game: Game | None = None
        self._hand = 0
        self.seat = self._seat_of(0)
        self._memory = SeatMemory(1)  # stateful opponents: one hidden state per seat
        # rule-based opponents named by string play inside numba (rule_based.fused): the same
        # answers, no Python per decision; agent objects are always asked as they are
        self._codes = style_codes(self.opponent_specs) if args.fused_opponents else None
        self._styles = np.zeros(4, dtype=np.int64)
        self._v1 = np.zeros((83, 27), dtype=np.uint8)
        self._mask_buf = np.zeros(ACTION_SPACE, dtype=np.int8)
        self._next = np.zeros(ACTION_SPACE, dtype=np.int8)
        self._legal = np.zeros(ACTION_SPACE, dtype=bool)  # the learner's mask now

    # ------------------------------------------------------------------ api
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new hand and play the opponents up to the learner's first decision.

        Args:
            seed: an integer in ``[0, 2**64)`` reseeds the env (and the opponents
                that have ``reset(seed)``, with ``seed + k + 1``); None continues
                the current random stream.
            options: None or a dict; no option is defined (keys are ignored).

        Raises:
            TypeError, ValueError: a bad seed or options; nothing changes then
                (the random generator included).
        """
        if seed is not None:
            seed = validate_seed(seed)
        check_options(options)
        if seed is not None:
            for k, agent in enumerate(self.opponents):
                if hasattr(agent, "reset"):
                    agent.reset((seed + k + 1) % 2**64)
        super().reset(seed=seed)
        if seed is not None:
            self._hand = 0
        self.seat = self._seat_of(self._hand)
        if self._codes is not None:
            self._seat_styles(self._styles, self.seat, self._codes)
        self._hand += 1
        self._memory.hand_started()
        self._game = game = Game(self.rules, seed=int(self.np_random.integers(0, 2**63)))
        self._phase = game._st["phase"]  # views into the record: cheap reads every step
        self._scores = game._st["scores"][0]
        self._advance()
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action; the opponents play until the learner owes a decision.

        Args:
            action: an integer scalar in ``[0, 88)`` (an ``int``, a numpy integer or
                a 0-d integer array).

        Raises:
            RuntimeError: before ``reset``, or once the hand is over.
            TypeError: an action that is not an integer scalar (``ActionTypeError``),
                whatever ``illegal_action`` says.
            IllegalActionError: an integer outside ``[0, 88)``, whatever
                ``illegal_action`` says; with ``illegal_action="raise"``, an id that is
                not legal now. Nothing changes in any of these cases.
        """
        game = self._require()
        if self._phase[0] == PH_OVER:
            raise RuntimeError("the hand is over: call reset()")
        a = action_id(action, f"SingleSeatEnv.step (seat {self.seat})", self._legal_strs)
        if not self._legal[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(
                    f"action {a} ({action_to_str(a)}) is not legal for seat {self.seat} now",
                    self._legal_strs(),
                )
            return self._illegal()
        if self._codes is not None:  # one numba call: learner, opponents, next mask
            delta = learner_step_at(
                game._st, 0, a, self._styles, self.seat, self._r, _T["FLAGS"],
                _T["WAITS"], self._v1, self._mask_buf, _T["DIST"], self._next,
            )  # fmt: skip
            game._mask_ok = False  # the state moved on outside Game's own methods
            self._legal = self._next.astype(bool)
        else:
            before = int(self._scores[self.seat])
            game.step_id(a)
            self._advance()
            delta = int(self._scores[self.seat]) - before
        if self.render_mode == "human":
            self.render()
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

    def render(self) -> str | np.ndarray | None:
        """The learner's view: printed (``human``), text (``ansi``) or an image (``rgb_array``).

        Returns:
            The text for ``"ansi"``, ``uint8[H, W, 3]`` for ``"rgb_array"``, else None.

        Raises:
            RuntimeError: before ``reset`` (when a render mode is set).
        """
        if self.render_mode is None:
            return None
        frame = self._frame(self._require(), self.seat)
        if self.render_mode == "human":
            print(frame, flush=True)
            return None
        return frame

    @property
    def game(self) -> Game:
        """The engine's ``Game`` of the current hand (``game.record()`` replays it)."""
        return self._require()

    # ------------------------------------------------------------ internals
    def _require(self) -> Game:
        if self._game is None:
            raise RuntimeError("the env has no hand yet: call reset() first")
        return self._game

    def _legal_strs(self) -> list[str]:
        return [str(int(a)) for a in np.flatnonzero(self._legal)]

    def _illegal(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The no-op step of an illegal action in ``"penalize"`` mode."""
        info = self._info()
        info["illegal_action"] = True
        return self._observe(), -self.illegal_penalty, False, False, info

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
            while (s := game.to_act()) is not None and s != self.seat:  # None: the hand is over
                agent = self.opponents[(s - self.seat - 1) % 4]
                mask = game.legal_mask()
                game.step_id(
                    ask_one(agent, game.state_view(), mask, self.rules, s, self._memory, 0)
                )
        over = game.is_over()
        self._legal = np.zeros(ACTION_SPACE, dtype=bool) if over else game._mask().astype(bool)

    def _observe(self) -> np.ndarray:
        game = self._require()
        out = np.zeros(self.observation_space.shape, dtype=np.uint8)
        self._spec.encode_at(game._st, 0, self.seat, self.oracle, self._r, out)
        return out

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._legal.copy(), "seat": self.seat, "illegal_action": False}


__all__ = ["MAX_MAGNITUDE", "IllegalActionError", "SingleSeatEnv"]
