"""The Agent protocol: what every player of ``sichuan_env`` offers, and a base with the checks.

An agent reads the observations of one version (``obs_version``, see
``sichuan_env.encoding.observation``) and the legal-action mask, and answers
an action id in ``[0, 88)`` that the mask allows:

- ``act(obs, mask) -> int``: one decision, ``obs`` of shape ``(rows, 27)``
  and ``mask`` of shape ``(88,)``;
- ``act_batch(obs, masks) -> int64[N]``: ``N`` decisions at once (the
  ``VectorEnv`` shapes ``(N, rows, 27)`` and ``(N, 88)``);
- ``reset(seed)`` (optional): forget per-hand memory and reseed.

An agent that searches over the engine state (``sichuan_env.agents.search.agent``)
sets ``reads_state = True`` and offers ``act_states(states, masks)`` on the
hand records (``STATE_DTYPE[N]``, ``VectorEnv.states_of``); hosts that hold
the states (``sichuan_env.agents.eval.evaluate``) call that instead of ``act_batch``. Such an
agent must use only what its seat may see (it redraws every hidden fact).

A **stateful** (recurrent) agent sets ``stateful = True`` and offers
``act_stateful(obs, masks, keys, starts) -> int64[N]``: ``keys`` (``int64[N]``)
name the (table, seat) each row belongs to (``4 * table + seat``; a table is a
hand played side by side with others, a ``VectorEnv`` slot), and ``starts``
(``bool[N]``) is True at that key's first decision of a new hand, where the
agent clears the hidden state it keeps for the key. Hosts ask every agent
through ``sichuan_env.envs.acting.ask``, which picks the call the agent wants
(``act_states``, ``act_stateful`` or ``act_batch``), so matches
(``sichuan_env.agents.eval``), the Gymnasium env's opponents, behaviour
cloning's teacher, dataset generation and terminal play all treat agents alike.

``rows`` is ``obs_rows(obs_version, oracle)`` for the public view or the
oracle view; agents that only read public rows accept both.

``BaseAgent`` does the input checks once for every agent: observations of an
integer or bool dtype with entries 0/1 and one of the two shapes of the
agent's version, masks of an integer or bool dtype with entries 0/1, 88
columns, and at least one legal action per row. A bad argument raises
``ValueError`` naming the argument (and the row, in a batch) and what was
expected (``InputTypeError``, a ``ValueError`` too, for a wrong type or
dtype); nothing is changed. Subclasses implement ``_act_batch`` (and may
override ``_act`` for a faster single decision) on checked arrays; an answer
the mask does not allow (a bug in the subclass) raises ``RuntimeError``
instead of reaching the env.
"""

from __future__ import annotations

from typing import Protocol, overload, runtime_checkable

import numpy as np

from sichuan_env.encoding import observation as O
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.tiles import InputTypeError, echo


@runtime_checkable
class Agent(Protocol):
    """Anything that picks legal actions from (observation, mask) pairs.

    Attributes:
        name: a short name for tables and logs (``"heuristic"``).
        obs_version: the observation version the agent reads.
    """

    name: str
    obs_version: int

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """One legal action id for one observation and mask."""
        ...

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One legal action id per row, ``int64[N]``."""
        ...


def _kind_ok(a: np.ndarray) -> bool:
    return a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer)


def _first_bad_row(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))[0])


def check_masks(masks: object, *, batch: bool, arg: str = "masks") -> np.ndarray:
    """``masks`` as a C-contiguous ``int8`` array after checking it.

    Args:
        masks: ``(88,)`` (``batch=False``) or ``(N, 88)`` (``batch=True``),
            integer or bool entries, each 0 or 1, every row with a 1.
        batch: whether a batch of masks is expected.
        arg: the argument name used in error messages.

    Raises:
        ValueError: for a wrong type, dtype, shape, value, or a row with no legal action.
    """
    if not isinstance(masks, np.ndarray):
        if isinstance(masks, (list, tuple)):
            masks = np.asarray(masks)
        else:
            raise InputTypeError(f"{arg} must be a numpy array, got {type(masks).__name__}")
    want = f"(N, {ACTION_SPACE})" if batch else f"({ACTION_SPACE},)"
    if masks.ndim != (2 if batch else 1) or masks.shape[-1] != ACTION_SPACE:
        raise ValueError(f"{arg} must have shape {want}, got {masks.shape}")
    if not _kind_ok(masks):
        raise InputTypeError(f"{arg} must have an integer or bool dtype, got {masks.dtype}")
    if masks.dtype != np.int8 and masks.dtype != np.bool_:
        bad = (masks != 0) & (masks != 1)
        if bad.any():
            where = f" (row {_first_bad_row(bad)})" if batch else ""
            raise ValueError(f"{arg} entries must be 0 or 1{where}")
        masks = masks.astype(np.int8)
    elif masks.dtype == np.int8 and (masks.view(np.uint8) > 1).any():
        bad = masks.view(np.uint8) > 1
        where = f" (row {_first_bad_row(bad)})" if batch else ""
        raise ValueError(f"{arg} entries must be 0 or 1{where}")
    rows = masks.reshape(-1, ACTION_SPACE)
    empty = ~rows.any(axis=1)
    if empty.any():
        where = f" row {int(np.flatnonzero(empty)[0])}" if batch else ""
        raise ValueError(f"{arg}{where} has no legal action (all zeros)")
    return np.ascontiguousarray(masks.view(np.int8))


def check_observations(obs: object, version: int, *, batch: bool, arg: str = "obs") -> np.ndarray:
    """``obs`` as a C-contiguous ``uint8`` array after checking it.

    Args:
        obs: ``(rows, 27)`` or ``(N, rows, 27)`` with ``rows`` the public or
            oracle row count of ``version``; integer or bool entries, each 0 or 1.
        version: the observation version the caller reads.
        batch: whether a batch is expected.
        arg: the argument name used in error messages.

    Raises:
        ValueError: for a wrong type, dtype, shape or value.
    """
    if not isinstance(obs, np.ndarray):
        if isinstance(obs, (list, tuple)):
            obs = np.asarray(obs)
        else:
            raise InputTypeError(f"{arg} must be a numpy array, got {type(obs).__name__}")
    rows = (O.obs_rows(version, False), O.obs_rows(version, True))
    want = " or ".join(f"({'N, ' if batch else ''}{r}, 27)" for r in rows)
    if obs.ndim != (3 if batch else 2) or obs.shape[-2] not in rows or obs.shape[-1] != 27:
        raise ValueError(f"{arg} must have shape {want} (observation v{version}), got {obs.shape}")
    if not _kind_ok(obs):
        raise InputTypeError(f"{arg} must have an integer or bool dtype, got {obs.dtype}")
    if obs.dtype != np.uint8 and obs.dtype != np.bool_:
        bad = (obs != 0) & (obs != 1)
        if bad.any():
            where = f" (row {_first_bad_row(bad)})" if batch else ""
            raise ValueError(f"{arg} entries must be 0 or 1{where}")
        obs = obs.astype(np.uint8)
    elif obs.dtype == np.uint8 and obs.size and obs.max() > 1:
        where = f" (row {_first_bad_row(obs > 1)})" if batch else ""
        raise ValueError(f"{arg} entries must be 0 or 1{where}")
    return np.ascontiguousarray(obs.view(np.uint8))


SEED_LIMIT = 2**64
"""Seeds are integers below this (64 bits: the walls' seeds, numpy's and torch's generators)."""


@overload
def check_seed(seed: None, arg: str = "seed") -> None: ...
@overload
def check_seed(seed: int | np.integer, arg: str = "seed") -> int: ...
@overload
def check_seed(seed: object, arg: str = "seed") -> int | None: ...
def check_seed(seed: object, arg: str = "seed") -> int | None:
    """``seed`` as a Python int, or None.

    A seed is an integer in ``[0, 2**64)`` (``SEED_LIMIT``): the walls' seeds and the
    generators of the agents (numpy's, torch's) take 64 bits at most.

    Raises:
        ValueError: for anything but None or an integer in ``[0, 2**64)`` (bools rejected).
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise InputTypeError(f"{arg} must be None or a non-negative integer, got {echo(seed)}")
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{arg} must be None or an integer in [0, 2**64), got {seed}")
    return int(seed)


class BaseAgent:
    """Shared input checks; subclasses implement ``_act_batch`` (and optionally ``_act``).

    Attributes:
        name: the agent's short name.
        obs_version: the observation version it reads (1 unless a subclass says otherwise).
    """

    name: str = "agent"
    obs_version: int = 1

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """One legal action id for ``obs`` (``(rows, 27)``) and ``mask`` (``(88,)``).

        Raises:
            ValueError: for a bad ``obs`` or ``mask`` (see ``check_observations``,
                ``check_masks``).
        """
        m = check_masks(mask, batch=False, arg="mask")
        o = check_observations(obs, self.obs_version, batch=False)
        a = int(self._act(o, m))
        if not 0 <= a < ACTION_SPACE or not m[a]:
            raise RuntimeError(f"{self!r} chose action {a}, which the mask does not allow")
        return a

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One legal action id per row: ``int64[N]`` for ``(N, rows, 27)`` and ``(N, 88)``.

        Raises:
            ValueError: for bad arrays or different row counts.
        """
        m = check_masks(masks, batch=True)
        o = check_observations(obs, self.obs_version, batch=True)
        if len(o) != len(m):
            raise ValueError(f"obs has {len(o)} rows but masks has {len(m)}")
        if len(m) == 0:
            return np.zeros(0, dtype=np.int64)
        out = np.asarray(self._act_batch(o, m), dtype=np.int64)
        if out.shape != (len(m),):
            raise RuntimeError(f"{self!r} returned shape {out.shape} for {len(m)} decisions")
        ok = (out >= 0) & (out < ACTION_SPACE)
        ok[ok] = m[np.flatnonzero(ok), out[ok]] == 1
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise RuntimeError(
                f"{self!r} chose action {out[i]} in row {i}, not allowed by its mask"
            )
        return out

    def reset(self, seed: int | None = None) -> None:
        """Forget per-hand memory and reseed (nothing to do for a memoryless agent)."""

    def _act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """One decision on checked arrays (default: a batch of one)."""
        return int(self._act_batch(obs[None], mask[None])[0])

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Decisions on checked arrays: ``uint8[N, rows, 27]``, ``int8[N, 88]``, N >= 1."""
        raise NotImplementedError(f"{type(self).__name__} must implement _act_batch")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, obs_version={self.obs_version})"
