"""``SingleSeatVectorEnv``: N single-seat hands against rule-based opponents in one numba call.

    import gymnasium, sichuan_env
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=1024)
    obs, infos = envs.reset(seed=0)                       # uint8[N, rows, 27]
    obs, rewards, terminations, truncations, infos = envs.step(envs.action_masks().argmax(1))

The batched twin of ``SingleSeatEnv`` (``sichuan_env.agents.gym.env``), reached
through the id's ``vector_entry_point`` (entry point group
``sichuan_env.gym_vector``). Env ``i`` is exactly a ``SingleSeatEnv`` with the
same arguments: reset with the same seed and given the same actions, it deals
the same hands, seats the learner the same way and returns the same
observations, rewards, terminations and infos. All N hands (the learner's
action, the opponents' decisions up to the learner's next one, the next legal
mask and observation) advance in one numba call, parallel over the cores.
Only rule-based opponents named by string (``heuristic``, ``value``,
``defensive``; ``sichuan_env.agents.rule_based.fused``) can be played there;
for any other opponent use
``gymnasium.make_vec(..., vectorization_mode="sync")`` (N ``SingleSeatEnv``).

Gymnasium's ``VectorEnv`` API (1.x):

- ``reset(seed=..., options=...)`` -> ``(obs, infos)``. ``seed`` None keeps
  each env's random stream, an integer ``s`` seeds env ``i`` with ``s + i``, a
  sequence gives one seed (or None) per env; seeds are integers in
  ``[0, 2**64)``. ``options={"reset_mask": bool[N]}`` resets only those envs
  (the others keep their hands; the infos then carry only the reset envs, as
  their ``_key`` masks say). Other option keys are ignored.
- ``step(actions)`` -> ``(obs, rewards, terminations, truncations, infos)``:
  ``actions`` is N action ids (an integer array or a list of integer
  scalars); rewards are ``float64[N]``, ``truncations`` always False.
- Autoreset: ``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``,
  as Gymnasium defines it. The step at which env ``i``'s hand ends returns its
  final observation and ``terminations[i] = True``; the next ``step`` resets
  env ``i`` (its action is ignored, not even checked) and returns the new
  hand's first observation, a reward of 0, ``terminations[i] = False`` and
  the reset's infos.
- ``infos``: a dict of arrays, Gymnasium's layout (what ``SyncVectorEnv``
  builds from the single envs' infos): ``"action_mask"`` ``bool[N, 88]``,
  ``"seat"`` ``int64[N]``, ``"illegal_action"`` ``bool[N]``, each with its
  ``"_key"`` mask ``bool[N]`` of the envs whose info it holds.
- ``single_observation_space`` / ``single_action_space`` and the batched
  ``observation_space`` (``Box`` ``(N, rows, 27)``) / ``action_space``
  (``MultiDiscrete([88] * N)``).

``action_masks()`` (``bool[N, 88]``, for sb3-contrib-style masked policies)
gives the actions the next ``step`` accepts in each env: the legal actions, or
all 88 for an env that the next step resets (whatever it is given is
ignored), so no row is empty. Actions follow the contract of every env
(``sichuan_env.envs.action_check``): a batch with an action that is not an
integer scalar (a float array, a string, None, ``[2]``) is a ``TypeError``,
and one with an integer outside ``[0, 88)`` in an env that steps an
``IllegalActionError``, whatever ``illegal_action`` says. An id that is not
legal now is handled per env as in ``SingleSeatEnv``: with
``illegal_action="penalize"`` that env does not move and gets
``-illegal_penalty`` and ``infos["illegal_action"][i] = True`` while the
others step; with ``"raise"`` the whole batch is rejected before anything
moves (``IllegalActionError`` naming the envs). A rejected call (bad actions,
seeds or options) changes nothing.

Observation versions 1 and 2 are encoded inside the same numba call
(``sichuan_env.agents.gym.kernels``); another registered version is encoded
afterwards, env by env (correct, slower). The constructor's arguments, seeds
and options are checked as ``SingleSeatEnv`` checks them
(``sichuan_env.agents.gym.args``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from sichuan_env.agents.gym.args import check_env_args, check_options, reset_mask, seed_list
from sichuan_env.agents.gym.core import SeatEnvCore
from sichuan_env.agents.gym.kernels import RESET, SKIP, step_envs
from sichuan_env.agents.rule_based.fused import style_codes

from sichuan_env import Game, RuleConfig
from sichuan_env.encoding import v1 as _v1
from sichuan_env.encoding import v2 as _v2
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.envs.action_check import action_ids
from sichuan_env.kernels.tables import get_tables
from sichuan_env.tiles import echo

_T = get_tables()
MAX_ENVS = 1 << 20
"""Most envs of one ``SingleSeatVectorEnv`` (about 3 KB of engine state each)."""


class SingleSeatVectorEnv(SeatEnvCore, VectorEnv):
    """``num_envs`` single-seat hands against rule-based opponents; see the module docstring.

    Args:
        num_envs: how many envs (1 .. 2**20).
        opponents: three rule-based opponents by name (``heuristic``, ``value``,
            ``defensive``), in turn order after the learner.
        rules: as ``SingleSeatEnv`` (the same checks and ranges, for each argument).
        obs_version: as ``SingleSeatEnv``.
        seat: as ``SingleSeatEnv``.
        oracle: as ``SingleSeatEnv``.
        reward_scale: as ``SingleSeatEnv``.
        illegal_action: as ``SingleSeatEnv``.
        illegal_penalty: as ``SingleSeatEnv``.
        render_mode: None, ``"ansi"`` or ``"rgb_array"``: ``render()`` returns one
            frame per env.
        fused_opponents: must be True (the batched env only plays opponents in numba).
        copy: return copies of the observation buffer (False: the env's own
            buffer, overwritten by the next call), as Gymnasium's ``copy``.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: a bad value, or opponents that cannot be played in numba
            (the message points to ``vectorization_mode="sync"``).
    """

    metadata = {  # noqa: RUF012 - gymnasium's convention
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
    }

    def __init__(
        self,
        num_envs: int = 1,
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
        copy: bool = True,
    ) -> None:
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an integer, got {echo(num_envs)}")
        if not 1 <= num_envs <= MAX_ENVS:
            raise ValueError(f"num_envs must be in [1, {MAX_ENVS}], got {num_envs}")
        # the checks and settings both envs share (core.py)
        args = self._configure(check_env_args(
            opponents, rules, obs_version, seat, oracle, reward_scale, illegal_action,
            illegal_penalty, render_mode, fused_opponents, render_modes=("ansi", "rgb_array"),
        ))  # fmt: skip
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy must be True or False, got {echo(copy)}")
        codes = style_codes(args.opponents)
        if codes is None or not args.fused_opponents:
            raise ValueError(
                "the batched env plays only rule-based opponents given by name "
                "('heuristic', 'value', 'defensive') inside numba, got "
                f"{echo(args.opponents)} (fused_opponents={args.fused_opponents}); for other "
                "opponents use gymnasium.make_vec('SichuanMahjong-v0', num_envs=..., "
                "vectorization_mode='sync', opponents=...)"
            )
        n = self.num_envs = int(num_envs)
        self.copy = bool(copy)
        self._enc = {_v1.encode_at: 1, _v2.encode_at: 2}.get(args.spec.encode_at, 0)
        self.single_observation_space, self.single_action_space = self._single_spaces()
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._codes = codes
        self._states = np.zeros(n, dtype=STATE_DTYPE)
        self._masks = np.zeros((n, ACTION_SPACE), dtype=np.int8)
        self._obs = np.zeros((n, *args.spec.shape(args.oracle)), dtype=np.uint8)
        self._styles = np.zeros((n, 4), dtype=np.int64)
        self._seats = np.zeros(n, dtype=np.int64)
        self._deal_seeds = np.zeros(n, dtype=np.uint64)
        self._deltas = np.zeros(n, dtype=np.int64)
        self._illegal = np.zeros(n, dtype=bool)
        self._over = np.zeros(n, dtype=bool)
        self._autoreset = np.zeros(n, dtype=bool)  # envs the next step resets (NEXT_STEP)
        self._hands = np.zeros(n, dtype=np.int64)  # hands dealt since each env's last seeded reset
        self._rngs: list[np.random.Generator | None] = [None] * n
        self._ready = False

    # ------------------------------------------------------------------ api
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal new hands (every env, or ``options["reset_mask"]``'s) up to the learners' decisions.

        Raises:
            TypeError, ValueError: a bad seed, seed list or options; nothing changes then.
        """
        seeds = seed_list(seed, self.num_envs)
        mask = reset_mask(check_options(options), self.num_envs)
        if not self._ready and not mask.all():
            raise RuntimeError("the first reset() must reset every env (no reset_mask)")
        rows = np.flatnonzero(mask)
        for i in rows:
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
                self._hands[i] = 0
        actions = np.full(self.num_envs, SKIP, dtype=np.int64)
        actions[rows] = RESET
        self._begin_hands(rows)
        self._run(actions)
        self._autoreset[rows] = False
        self._ready = True
        return self._observations(), self._infos(mask)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per env (ignored for the envs that this step resets).

        Args:
            actions: N action ids: an integer array of shape ``(N,)`` or a list/tuple of
                integer scalars.

        Raises:
            RuntimeError: before ``reset``.
            ValueError: not N actions.
            TypeError: an action that is not an integer scalar, in any env
                (``ActionTypeError``), whatever ``illegal_action`` says.
            IllegalActionError: an integer outside ``[0, 88)`` in an env that this step
                does not reset, whatever ``illegal_action`` says; with
                ``illegal_action="raise"``, an id that is not legal now. The errors
                name the envs; no env moves.
        """
        if not self._ready:
            raise RuntimeError("step() before reset(): call reset() first")
        resetting = self._autoreset
        ids = action_ids(actions, self.num_envs, skip=resetting)  # the envs' one contract
        if self.illegal_action == "raise":
            self._check_legal(ids, resetting)
        ids[resetting] = RESET
        rows = np.flatnonzero(resetting)
        self._begin_hands(rows)
        self._run(ids)
        rewards = self._deltas * self.reward_scale
        rewards[self._illegal] = -self.illegal_penalty
        terminations = self._over.copy()
        terminations[rows] = False
        self._autoreset = terminations.copy()
        truncations = np.zeros(self.num_envs, dtype=bool)
        return self._observations(), rewards, terminations, truncations, self._infos(None)

    def action_masks(self) -> np.ndarray:
        """``bool[N, 88]``: the actions the next ``step`` accepts (all, in an env it resets).

        Raises:
            RuntimeError: before ``reset``.
        """
        if not self._ready:
            raise RuntimeError("action_masks() before reset(): call reset() first")
        out = self._masks.astype(bool)
        out[self._autoreset] = True
        return out

    def render(self) -> tuple[Any, ...] | None:
        """One frame per env of the learner's view: text (``ansi``) or an image (``rgb_array``).

        Replays every env's hand (a debugging aid, not fast). None without a render mode.

        Raises:
            RuntimeError: before ``reset`` (when a render mode is set).
        """
        if self.render_mode is None:
            return None
        return tuple(self._frame(self.game(i), int(self._seats[i])) for i in range(self.num_envs))

    def game(self, i: int) -> Game:
        """A ``Game`` replaying env ``i``'s current hand (a copy: stepping it moves nothing).

        Raises:
            RuntimeError: before ``reset``. TypeError, ValueError: a bad env index.
        """
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"env index must be an integer, got {echo(i)}")
        if not 0 <= i < self.num_envs:
            raise ValueError(f"env index must be in [0, {self.num_envs}), got {i}")
        if not self._ready:
            raise RuntimeError("game() before reset(): call reset() first")
        st = self._states[i]
        game = Game(self.rules, seed=int(self._deal_seeds[i]))
        for code in st["log"][: st["n_log"]]:
            game.step_id(int(code) % 128)
        return game

    @property
    def seats(self) -> np.ndarray:
        """``int64[N]``: each env's learner seat in its current hand (a copy)."""
        return self._seats.copy()

    # ------------------------------------------------------------ internals
    def _begin_hands(self, rows: np.ndarray) -> None:
        """Seat, opponents' styles and deal seed of the next hand of each env in ``rows``.

        The same draws as ``SingleSeatEnv.reset``: the learner's seat from the hand
        count, then one ``integers(0, 2**63)`` of the env's generator for the deal.
        """
        for i in rows:
            rng = self._rngs[i]
            if rng is None:
                rng = self._rngs[i] = seeding.np_random()[0]
            self._seats[i] = seat = self._seat_of(int(self._hands[i]))
            self._seat_styles(self._styles[i], seat, self._codes)
            self._hands[i] += 1
            self._deal_seeds[i] = int(rng.integers(0, 2**63))

    def _run(self, actions: np.ndarray) -> None:
        """The one numba call of a step or reset (then the fallback encoder, if any)."""
        step_envs(
            self._states, actions, self._deal_seeds, self._styles, self._seats, self._masks,
            self._obs, self._deltas, self._illegal, self._over, self._enc, self.oracle,
            self._r, _T["FLAGS"], _T["WAITS"], _T["DIST"],
        )  # fmt: skip
        if self._enc == 0:  # an observation version without a fused encoder
            for i in np.flatnonzero((actions != SKIP) & ~self._illegal):
                self._spec.encode_at(
                    self._states, i, int(self._seats[i]), self.oracle, self._r, self._obs[i]
                )

    def _check_legal(self, ids: np.ndarray, resetting: np.ndarray) -> None:
        """``illegal_action="raise"``: reject the batch if an env that steps has an illegal id."""
        bad = ~resetting & (self._masks[np.arange(self.num_envs), ids] == 0)
        if bad.any():
            rows = np.flatnonzero(bad)[:10]
            raise IllegalActionError(
                f"illegal actions in envs {rows.tolist()} (actions {ids[rows].tolist()}); "
                "no env moved"
            )

    def _observations(self) -> np.ndarray:
        return self._obs.copy() if self.copy else self._obs

    def _infos(self, mask: np.ndarray | None) -> dict[str, Any]:
        """Gymnasium's dict of arrays; ``mask`` (None: every env) marks the envs that have infos."""
        has = np.ones(self.num_envs, dtype=bool) if mask is None else mask
        action_mask = self._masks.astype(bool)
        seat = self._seats.copy()
        illegal = self._illegal.copy()
        if mask is not None:
            illegal[:] = False  # a reset is never an illegal action
            if not mask.all():
                action_mask[~mask] = False
                seat[~mask] = 0
        return {
            "action_mask": action_mask,
            "_action_mask": has.copy(),
            "seat": seat,
            "_seat": has.copy(),
            "illegal_action": illegal,
            "_illegal_action": has.copy(),
        }


__all__ = ["MAX_ENVS", "SingleSeatVectorEnv"]
