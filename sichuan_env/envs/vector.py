"""``VectorEnv``: N hands stepped in one numba call, for a shared policy playing all four seats.

Each slot holds one hand. ``reset()`` deals every slot; ``step(actions)``
takes one decision per slot (the decision of the seat to act in that hand),
returns every seat's point change, re-deals the slots whose hand ended
(auto-reset) and encodes the next decision's observation for the seat that
owes it::

    venv = VectorEnv(1024, seed=0)
    obs, mask, seat = venv.reset()             # uint8[N, 83, 27], int8[N, 88], int8[N]
    obs, mask, seat, rewards, done, info = venv.step(actions)   # rewards int64[N, 4]

Rewards are points, zero-sum per row, delivered to all four seats at the step
that moved them (a seat that has won still receives 退税 refunds). ``done[i]``
marks a slot whose hand ended at this step; ``info["final_scores"][i]`` then
holds that hand's scores, and ``record(i)`` its replayable game record
(RULES.md §10). Slot ``i`` deals its ``n``-th hand from
``seed_i + n * SEED_STRIDE`` (``seed_i = seed * num_envs + i``), so a run is
reproducible from ``seed`` whatever the number of cores.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .._jit import njit
from ..encoding.observation import encode_v1, obs_rows
from ..engine.actions import ACTION_SPACE
from ..engine.batch import BAD_ACTION, HAND_DONE, SEED_STRIDE, reset_batch, step_one
from ..engine.game import Game, IllegalActionError
from ..engine.state import MAX_LOG, STATE_DTYPE
from ..kernels.tables import get_tables
from ..rules.config import RuleConfig, kernel_rules


@njit(parallel=True)
def _encode_all(states, obs, seats, oracle, rules) -> None:
    for i in numba.prange(states.shape[0]):
        seats[i] = states[i].to_act
        encode_v1(states[i], states[i].to_act, oracle, rules, obs[i])


@njit(parallel=True)
def _step_all(
    states,
    actions,
    seed_base,
    hand_no,
    masks,
    rewards,
    done,
    final,
    status,
    last_log,
    last_seed,
    obs,
    seats,
    oracle,
    rules,
    flags,
    waits,
) -> None:
    for i in numba.prange(states.shape[0]):
        seed = seed_base[i] + np.uint64(hand_no[i]) * SEED_STRIDE
        code = step_one(
            states[i],
            actions[i],
            masks[i],
            seed_base[i],
            hand_no,
            i,
            rewards[i],
            final[i],
            last_log[i],
            True,
            rules,
            flags,
            waits,
        )
        done[i] = code == HAND_DONE
        status[i] = BAD_ACTION if code == BAD_ACTION else 0
        if code == HAND_DONE:
            last_seed[i] = seed
        seats[i] = states[i].to_act
        encode_v1(states[i], states[i].to_act, oracle, rules, obs[i])


class VectorEnv:
    """``num_envs`` hands of 血战到底 stepped together; see the module docstring.

    Args:
        num_envs: hands stepped together.
        rules: the ruleset of every hand.
        obs_version: observation layout (``sichuan_env.encoding.observation``).
        seed: base seed of the run (None: random).
        oracle: append the hidden information (other hands, wall order) to observations.

    Raises:
        ValueError: bad arguments.
    """

    def __init__(
        self,
        num_envs: int,
        rules: RuleConfig | None = None,
        obs_version: int = 1,
        seed: int | None = None,
        oracle: bool = False,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.rules = RuleConfig() if rules is None else rules
        if not isinstance(self.rules, RuleConfig):
            raise ValueError(f"rules must be a RuleConfig, got {type(self.rules).__name__}")
        if obs_version != 1:
            raise ValueError(f"unknown obs_version {obs_version}; known: [1]")
        self.num_envs = int(num_envs)
        self.obs_version = obs_version
        self.oracle = bool(oracle)
        self.obs_shape = (obs_rows(obs_version, self.oracle), 27)
        self._r = kernel_rules(self.rules)
        self._t = get_tables()
        n = self.num_envs
        self.states = np.zeros(n, dtype=STATE_DTYPE)
        self._masks = np.zeros((n, ACTION_SPACE), dtype=np.int8)
        self._obs = np.zeros((n, *self.obs_shape), dtype=np.uint8)
        self._seats = np.zeros(n, dtype=np.int8)
        self._rewards = np.zeros((n, 4), dtype=np.int64)
        self._done = np.zeros(n, dtype=np.bool_)
        self._final = np.zeros((n, 4), dtype=np.int64)
        self._status = np.zeros(n, dtype=np.int8)
        self._last_log = np.zeros((n, MAX_LOG + 1), dtype=np.int16)
        self._last_seed = np.zeros(n, dtype=np.uint64)
        self._hand_no = np.zeros(n, dtype=np.int64)
        self._seed_base = np.zeros(n, dtype=np.uint64)
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Set the base seed (used by the next ``reset``)."""
        if seed is None:
            seed = int(np.random.default_rng().integers(0, 2**31))
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        base = np.uint64(seed) * np.uint64(self.num_envs)
        self._seed_base[:] = base + np.arange(self.num_envs, dtype=np.uint64)

    def reset(
        self, seed: int | None = None, *, seeds: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every slot; returns ``(obs, mask, seat)`` of the first decisions.

        ``seeds`` (one per slot) overrides the base seed: slots with equal seeds
        deal the same hands, as duplicate matches need.
        """
        if seed is not None:
            self.seed(seed)
        if seeds is not None:
            arr = np.asarray(seeds)
            if arr.shape != (self.num_envs,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"seeds must be {self.num_envs} integers, got shape {arr.shape}")
            self._seed_base[:] = arr.astype(np.uint64)
        self._hand_no[:] = 0
        reset_batch(
            self.states, self._seed_base, self._hand_no, self._masks, self._r, self._t["FLAGS"]
        )
        _encode_all(self.states, self._obs, self._seats, self.oracle, self._r)
        return self._obs, self._masks, self._seats

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision per slot; returns ``(obs, mask, seat, rewards, done, info)``.

        The arrays are reused by the next call: copy what you keep.

        Raises:
            IllegalActionError: naming the slots whose action was not legal (those
                slots did not move; the others did).
        """
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers, got shape {a.shape}")
        a = a.astype(np.int64, copy=False)
        _step_all(
            self.states,
            a,
            self._seed_base,
            self._hand_no,
            self._masks,
            self._rewards,
            self._done,
            self._final,
            self._status,
            self._last_log,
            self._last_seed,
            self._obs,
            self._seats,
            self.oracle,
            self._r,
            self._t["FLAGS"],
            self._t["WAITS"],
        )
        if self._status.any():
            bad = np.flatnonzero(self._status)
            raise IllegalActionError(
                f"illegal actions in slots {bad[:10].tolist()} (actions {a[bad[:10]].tolist()})"
            )
        info = {"final_scores": self._final, "hands_done": int(self._done.sum())}
        return self._obs, self._masks, self._seats, self._rewards, self._done, info

    def record(self, i: int) -> dict[str, Any]:
        """The game record of the last hand that ended in slot ``i`` (RULES.md §10).

        Raises:
            ValueError: no hand has ended in that slot yet.
        """
        if not 0 <= i < self.num_envs:
            raise ValueError(f"slot must be in [0, {self.num_envs}), got {i}")
        n = int(self._last_log[i, 0])
        if self._hand_no[i] == 0 or n == 0:
            raise ValueError(f"no hand has ended in slot {i} yet")
        game = Game(self.rules, seed=int(self._last_seed[i]))
        for code in self._last_log[i, 1 : n + 1]:
            game.step_id(int(code) % 128)
        return game.record()

    def game(self, i: int) -> Game:
        """A ``Game`` replaying the hand now running in slot ``i``.

        It is a copy: stepping it does not move the slot.
        """
        st = self.states[i]
        seed = int(self._seed_base[i] + np.uint64(self._hand_no[i]) * SEED_STRIDE)
        game = Game(self.rules, seed=seed)
        for code in st["log"][: st["n_log"]]:
            game.step_id(int(code) % 128)
        return game
