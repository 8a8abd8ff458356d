"""What ``SingleSeatEnv`` and ``SingleSeatVectorEnv`` share: settings, spaces, seats, frames.

Env ``i`` of the batched env (``sichuan_env.agents.gym.vector``) is exactly a
``SingleSeatEnv`` (``sichuan_env.agents.gym.env``) with the same arguments; what
makes them agree is written once, here, in the mixin ``SeatEnvCore``: the
checked settings (``_configure``: what ``sichuan_env.agents.gym.args.check_env_args``
returns, as the attributes both envs expose), the spaces of one env, the learner's
seat in each hand and the opponents' styles around it, and one render frame of
the learner's view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from sichuan_env.agents.gym.args import EnvArgs

from sichuan_env import Game, RuleConfig
from sichuan_env.encoding.registry import ObsVersion
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.envs.render import render_rgb, render_seat


class SeatEnvCore:
    """The settings and helpers of a single-seat env (one hand or a batch of them)."""

    rules: RuleConfig
    oracle: bool
    seat_rule: int | str
    reward_scale: float
    illegal_action: str
    illegal_penalty: float
    render_mode: str | None
    opponent_specs: tuple[Any, ...]
    _spec: ObsVersion
    _r: np.ndarray

    def _configure(self, args: EnvArgs) -> EnvArgs:
        """Keep the checked constructor arguments (``check_env_args``'s) as the env's settings."""
        self.rules = args.rules
        self._spec = args.spec
        self.oracle = args.oracle
        self.seat_rule = args.seat
        self.reward_scale = args.reward_scale
        self.illegal_action = args.illegal_action
        self.illegal_penalty = args.illegal_penalty
        self.render_mode = args.render_mode
        self.opponent_specs = args.opponents
        self._r = self.rules.as_array().copy()
        return args

    def _single_spaces(self) -> tuple[spaces.Box, spaces.Discrete]:
        """One env's observation space (``Box(0, 1, (rows, 27), uint8)``) and ``Discrete(88)``."""
        box = spaces.Box(0, 1, self._spec.shape(self.oracle), dtype=np.uint8)
        return box, spaces.Discrete(ACTION_SPACE)

    def _seat_of(self, hands: int) -> int:
        """The learner's seat in the hand dealt after ``hands`` hands since the last seeded reset."""
        return hands % 4 if self.seat_rule == "rotate" else int(self.seat_rule)

    @staticmethod
    def _seat_styles(styles: np.ndarray, seat: int, codes: Any) -> None:
        """Fill one hand's ``styles[4]``: the opponents' style codes in turn order after ``seat``."""
        for k in range(3):
            styles[(seat + 1 + k) % 4] = codes[k]

    def _frame(self, game: Game, seat: int) -> str | np.ndarray:
        """The learner's view: an image (``rgb_array``) or text (the other modes)."""
        return (
            render_rgb(game, seat) if self.render_mode == "rgb_array" else render_seat(game, seat)
        )


__all__ = ["SeatEnvCore"]
