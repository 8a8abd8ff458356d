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
(docs/rules.md §10). Slot ``i`` deals its ``n``-th hand from
``seed_i + n * SEED_STRIDE``, where ``seed_i = slot_seeds(seed, N)[i]`` mixes
the run's seed and the slot with splitmix64 (distinct seeds never deal the
same hands in a slot), so a run is reproducible from ``seed`` whatever the
number of cores.

A batch with any bad action is rejected whole before anything moves
(``IllegalActionError`` naming the slots). ``observe(version, oracle)``
re-encodes the current decisions in another observation version, so agents
that read different versions can share a table.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from .._jit import njit
from ..encoding.registry import get as get_obs_version
from ..engine.actions import ACTION_SPACE, as_action_id
from ..engine.batch import BAD_ACTION, HAND_DONE, SEED_STRIDE, reset_batch, slot_seeds, step_one
from ..engine.game import Game, IllegalActionError, validate_seed
from ..engine.labels import LABEL_FIELDS, label_arrays, opponent_labels_batch
from ..engine.state import MAX_LOG, STATE_DTYPE
from ..kernels.tables import get_tables
from ..rules.config import RuleConfig, kernel_rules

MAX_ENVS = 1 << 22
"""Most slots of one ``VectorEnv``."""


@njit(parallel=True)
def _step_all(
    states, actions, seed_base, hand_no, masks, rewards, done, final, status, last_log, last_seed,
    rules, flags, waits,
) -> None:  # fmt: skip
    for i in numba.prange(states.shape[0]):
        seed = seed_base[i] + np.uint64(hand_no[i]) * SEED_STRIDE
        code = step_one(  # an int64 index: the engine compiled once, as in the serial callers
            states, np.int64(i), actions[i], masks[i], seed_base[i], hand_no, rewards[i], final[i],
            last_log[i], True, rules, flags, waits,
        )  # fmt: skip
        done[i] = code == HAND_DONE
        status[i] = BAD_ACTION if code == BAD_ACTION else 0
        if code == HAND_DONE:
            last_seed[i] = seed


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _seed_array(seeds: object, n: int) -> np.ndarray:
    """``seeds`` as ``uint64[n]``, every value checked to lie in ``[0, 2**64)``."""
    arr = np.asarray(seeds, dtype=object) if isinstance(seeds, (list, tuple)) else np.asarray(seeds)
    if arr.shape != (n,):
        raise ValueError(f"seeds must be {n} integers (one per slot), got shape {arr.shape}")
    if arr.dtype == object:
        if not all(_is_int(s) for s in arr):
            raise TypeError("seeds must be integers")
        if not all(0 <= s < 2**64 for s in arr):
            raise ValueError("seeds must be integers in [0, 2**64)")
        return np.array([int(s) for s in arr], dtype=np.uint64)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"seeds must be integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.signedinteger) and n and arr.min() < 0:
        raise ValueError(f"seeds must be in [0, 2**64), got {int(arr.min())}")
    return arr.astype(np.uint64)


class VectorEnv:
    """``num_envs`` hands of 血战到底 stepped together; see the module docstring.

    Args:
        num_envs: hands stepped together (1 .. 2**22).
        rules: the ruleset of every hand.
        obs_version: observation version (``sichuan_env.encoding.versions()``).
        seed: base seed of the run, in ``[0, 2**64)`` (None: random).
        oracle: append the hidden information (other hands, wall order) to observations.
        labels: with every step, ``info["labels"]``: the exact hidden-state labels of
            the acting seat's three opponents in every slot (``engine/labels.py``:
            ``tenpai`` [N, 3], ``waits`` [N, 3, 27], ``shanten``, ``hand``,
            ``deal_in`` [N, 3, 27], ``active``); ``labels()`` gives them at any time.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an argument out of range, or an unknown observation version.
    """

    def __init__(
        self,
        num_envs: int,
        rules: RuleConfig | None = None,
        obs_version: int = 1,
        seed: int | None = None,
        oracle: bool = False,
        labels: bool = False,
    ) -> None:
        if not _is_int(num_envs):
            raise TypeError(f"num_envs must be an integer, got {num_envs!r}")
        if not 1 <= num_envs <= MAX_ENVS:
            raise ValueError(f"num_envs must be in [1, {MAX_ENVS}], got {num_envs}")
        self.rules = RuleConfig() if rules is None else rules
        if not isinstance(self.rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(self.rules).__name__}")
        if not isinstance(oracle, (bool, np.bool_)):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        if not isinstance(labels, (bool, np.bool_)):
            raise TypeError(f"labels must be True or False, got {labels!r}")
        self._spec = get_obs_version(obs_version)
        self.with_labels = bool(labels)
        self.num_envs = int(num_envs)
        self.obs_version = int(obs_version)
        self.oracle = bool(oracle)
        self.obs_shape = self._spec.shape(self.oracle)
        self._r = kernel_rules(self.rules)
        self._t = get_tables()
        n = self.num_envs
        self._states = np.zeros(n, dtype=STATE_DTYPE)
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
        self._rows = np.arange(n)
        self._ready = False
        self.seed(seed)

    @property
    def states(self) -> np.ndarray:
        """A read-only copy of the hand records (``STATE_DTYPE[N]``)."""
        snapshot = self._states.copy()
        snapshot.flags.writeable = False
        return snapshot

    def states_of(self, rows: np.ndarray) -> np.ndarray:
        """A copy of the hand records of ``rows`` (indices into the N slots), for agents that read them.

        Raises:
            ValueError: for rows that are not integer indices in ``[0, N)``.
        """
        idx = np.asarray(rows)
        if idx.dtype == np.bool_ or not np.issubdtype(idx.dtype, np.integer) or idx.ndim != 1:
            raise ValueError(f"rows must be a 1-d array of slot indices, got {rows!r}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_envs):
            raise ValueError(f"rows must be slot indices in [0, {self.num_envs})")
        return self._states[idx]

    def seed(self, seed: int | None) -> None:
        """Set the base seed (used by the next ``reset``); None draws one at random.

        Raises:
            TypeError: not an integer. ValueError: outside ``[0, 2**64)``.
        """
        if seed is None:
            seed = int(np.random.default_rng().integers(0, 2**63))
        self._seed_base[:] = slot_seeds(validate_seed(seed), self.num_envs)

    def reset(
        self, seed: int | None = None, *, seeds: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every slot; returns ``(obs, mask, seat)`` of the first decisions.

        ``seeds`` (one per slot, each in ``[0, 2**64)``) overrides the base
        seed: slots with equal seeds deal the same hands, as duplicate matches
        need. The arrays returned are the env's buffers, reused by the next
        call (the mask is a copy: the env keeps its own).
        """
        if seed is not None and seeds is not None:
            raise ValueError("give seed or seeds, not both")
        base = None if seeds is None else _seed_array(seeds, self.num_envs)
        if seed is not None:
            self.seed(seed)
        if base is not None:
            self._seed_base[:] = base
        self._hand_no[:] = 0
        self._last_log[:, 0] = 0
        reset_batch(
            self._states, self._seed_base, self._hand_no, self._masks, self._r, self._t["FLAGS"]
        )
        self._spec.encode_batch(self._states, self._seats, self.oracle, self._r, self._obs)
        self._ready = True
        return self._obs, self._masks.copy(), self._seats

    def _check_actions(self, actions: object) -> np.ndarray:
        """``actions`` as ``int64[N]``: an integer array, or a list/tuple of integer scalars."""
        if isinstance(actions, (list, tuple)):
            if len(actions) != self.num_envs:
                raise ValueError(
                    f"actions must be {self.num_envs} integers (one per slot), got {len(actions)}"
                )
            ids = np.empty(self.num_envs, dtype=np.int64)
            i = 0
            try:
                for i, x in enumerate(actions):
                    ids[i] = as_action_id(x)
            except TypeError as e:
                raise TypeError(f"actions[{i}]: {e}") from None
            except ValueError as e:
                raise IllegalActionError(f"actions[{i}]: {e}; no slot moved") from None
            actions = ids
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(
                f"actions must be {self.num_envs} integers (shape ({self.num_envs},), one per "
                f"slot), got shape {a.shape}"
            )
        if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integer action ids, got dtype {a.dtype}")
        out = (a < 0) | (a >= ACTION_SPACE)
        if out.any():
            bad = np.flatnonzero(out)[:10]
            raise IllegalActionError(
                f"actions out of range [0, {ACTION_SPACE}) in slots {bad.tolist()} "
                f"(actions {[int(x) for x in a[bad]]}); no slot moved"
            )
        a = a.astype(np.int64)
        illegal = self._masks[self._rows, a] == 0
        if illegal.any():
            bad = np.flatnonzero(illegal)[:10]
            raise IllegalActionError(
                f"illegal actions in slots {bad.tolist()} (actions {a[bad].tolist()}); no slot moved"
            )
        return a

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision per slot; returns ``(obs, mask, seat, rewards, done, info)``.

        The arrays are the env's buffers, reused by the next call: copy what
        you keep (the mask is a copy already: the env checks actions against
        its own).

        ``actions`` is an integer array of shape ``(N,)`` or a list/tuple of N
        integer scalars (ints, numpy integers, 0-d integer arrays).

        Raises:
            RuntimeError: before the first ``reset``.
            TypeError: actions that are not integers (bools, floats, strings, None).
            ValueError: a wrong shape or length.
            IllegalActionError: an action out of range or not legal, naming the
                slots; the whole batch is rejected and no slot moves.
        """
        if not self._ready:
            raise RuntimeError("VectorEnv.step() before reset(): call reset() first")
        a = self._check_actions(actions)
        _step_all(
            self._states, a, self._seed_base, self._hand_no, self._masks, self._rewards,
            self._done, self._final, self._status, self._last_log, self._last_seed,
            self._r, self._t["FLAGS"], self._t["WAITS"],
        )  # fmt: skip
        if self._status.any():  # cannot happen after _check_actions: the engine's own guard
            raise RuntimeError(
                f"engine rejected checked actions in slots {np.flatnonzero(self._status)}"
            )
        self._spec.encode_batch(self._states, self._seats, self.oracle, self._r, self._obs)
        info: dict[str, Any] = {"final_scores": self._final, "hands_done": int(self._done.sum())}
        if self.with_labels:
            info["labels"] = self.labels()
        return self._obs, self._masks.copy(), self._seats, self._rewards, self._done, info

    def observe(self, version: int | None = None, oracle: bool | None = None) -> np.ndarray:
        """The current decisions' observations in another version (a new array).

        Args:
            version: an observation version (default: the env's).
            oracle: with the oracle rows (default: the env's setting).

        Raises:
            RuntimeError: before ``reset``. ValueError: an unknown version.
        """
        if not self._ready:
            raise RuntimeError("VectorEnv.observe() before reset(): call reset() first")
        spec = self._spec if version is None else get_obs_version(version)
        oracle = self.oracle if oracle is None else oracle
        if not isinstance(oracle, (bool, np.bool_)):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        obs = np.zeros((self.num_envs, *spec.shape(bool(oracle))), dtype=np.uint8)
        seats = np.zeros(self.num_envs, dtype=np.int8)
        spec.encode_batch(self._states, seats, bool(oracle), self._r, obs)
        return obs

    def labels(self) -> dict[str, np.ndarray]:
        """Exact labels of the acting seat's three opponents in every slot (new arrays).

        Raises:
            RuntimeError: before ``reset``.
        """
        if not self._ready:
            raise RuntimeError("VectorEnv.labels() before reset(): call reset() first")
        out = label_arrays(self.num_envs)
        opponent_labels_batch(
            self._states, self._r, self._t["FLAGS"], self._t["DIST"],
            *(out[k] for k in LABEL_FIELDS),
        )  # fmt: skip
        return out

    def _slot(self, i: object) -> int:
        if not _is_int(i):
            raise TypeError(f"slot must be an integer, got {i!r}")
        if not 0 <= i < self.num_envs:  # type: ignore[operator]
            raise ValueError(f"slot must be in [0, {self.num_envs}), got {i}")
        return int(i)  # type: ignore[call-overload]

    def record(self, i: int) -> dict[str, Any]:
        """The game record of the last hand that ended in slot ``i`` (docs/rules.md §10).

        Raises:
            TypeError, ValueError: a bad slot, or no hand has ended in that slot yet.
        """
        return self.last_game(i).record()

    def last_game(self, i: int) -> Game:
        """A ``Game`` replaying the last hand that ended in slot ``i`` (over; a copy).

        Raises:
            TypeError, ValueError: a bad slot, or no hand has ended in that slot yet.
        """
        i = self._slot(i)
        n = int(self._last_log[i, 0])
        if self._hand_no[i] == 0 or n == 0:
            raise ValueError(f"no hand has ended in slot {i} yet")
        game = Game(self.rules, seed=int(self._last_seed[i]))
        for code in self._last_log[i, 1 : n + 1]:
            game.step_id(int(code) % 128)
        return game

    def game(self, i: int) -> Game:
        """A ``Game`` replaying the hand now running in slot ``i``.

        It is a copy: stepping it does not move the slot.

        Raises:
            RuntimeError: before ``reset``. TypeError, ValueError: a bad slot.
        """
        i = self._slot(i)
        if not self._ready:
            raise RuntimeError("VectorEnv.game() before reset(): call reset() first")
        st = self._states[i]
        seed = (int(self._seed_base[i]) + int(self._hand_no[i]) * int(SEED_STRIDE)) % 2**64
        game = Game(self.rules, seed=seed)
        for code in st["log"][: st["n_log"]]:
            game.step_id(int(code) % 128)
        return game
