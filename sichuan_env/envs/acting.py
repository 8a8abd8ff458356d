"""One way to ask an agent for actions, for every host: matches, envs, training, play, the viewer.

A host holds hands (engine records, ``STATE_DTYPE``) waiting on decisions and
asks its agents about some of them. ``Decisions`` is what it knows at one
step: the records, the legal masks, the rules, and optionally observations it
has already encoded. ``ask(agent, decisions, rows)`` then calls the agent the
way the agent wants to be called (``sichuan_env.agents.base`` has the protocol):

- an agent with ``reads_state = True`` gets ``act_states(states, masks, rules)``
  (copies of the records: it must use only what its seat may see);
- an agent with ``stateful = True`` (a recurrent policy) gets
  ``act_stateful(obs, masks, keys, starts)``: ``keys`` name the (table, seat)
  each row belongs to, ``starts`` is True at that seat's first decision of a
  new hand, so the agent keeps one hidden state per key and clears it there;
- any other agent gets ``act_batch(obs, masks)`` (``act(obs, mask)`` for a single row),

with observations in the agent's own ``obs_version``, encoded once per step
and version. ``SeatMemory`` is the host's side of ``keys`` and ``starts``:
it remembers which (table, seat) pairs have begun a new hand. Every answer is
checked before a host sees it (``check_answer``): one integral, finite action
per row, legal under its mask, else an error naming the agent and the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..encoding.registry import get as get_obs_version
from ..engine.errors import IllegalActionError
from ..engine.state import STATE_DTYPE
from ..rules.config import RuleConfig, kernel_rules
from ..tiles import InputTypeError


class SeatMemory:
    """Which (table, seat) pairs start a new hand at their next decision.

    Args:
        tables: how many tables (hands played side by side: VectorEnv slots).

    A key is ``4 * table + seat``. After ``hand_started(tables)`` (a reset, or a
    slot's next hand after autoreset) the next decision of each seat there is a
    start.
    """

    def __init__(self, tables: int) -> None:
        if isinstance(tables, bool) or not isinstance(tables, (int, np.integer)) or tables < 1:
            raise ValueError(f"tables must be an integer >= 1, got {tables!r}")
        self._fresh = np.ones((int(tables), 4), dtype=bool)

    @property
    def tables(self) -> int:
        """The number of tables."""
        return self._fresh.shape[0]

    def hand_started(self, tables: np.ndarray | None = None) -> None:
        """Mark a new hand at ``tables`` (all tables when None)."""
        if tables is None:
            self._fresh[:] = True
        else:
            self._fresh[np.asarray(tables, dtype=np.int64)] = True

    def take(self, tables: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, starts)`` of decisions at ``tables`` by ``seats``; the starts are consumed."""
        t = np.asarray(tables, dtype=np.int64)
        s = np.asarray(seats, dtype=np.int64)
        starts = self._fresh[t, s].copy()
        self._fresh[t, s] = False
        return 4 * t + s, starts


class Decisions:
    """The decisions a host is waiting on at one step.

    Args:
        states: the hand records (``STATE_DTYPE[N]``), read only.
        masks: the legal-action masks ``int8[N, 88]`` of the seats to act.
        rules: the rules the hands are played under.
        seats: the seat to act in each hand (``int[N]``).
        obs: observations the host has already encoded (``uint8[N, rows, 27]``) ...
        obs_version: ... in this version.
        oracle: whether observations carry the oracle rows.
        tables: each row's table (default ``arange(N)``), for ``SeatMemory`` keys.
        memory: the host's ``SeatMemory`` (needed only to ask stateful agents).
    """

    def __init__(
        self,
        states: np.ndarray,
        masks: np.ndarray,
        rules: RuleConfig,
        seats: np.ndarray,
        *,
        obs: np.ndarray | None = None,
        obs_version: int | None = None,
        oracle: bool = False,
        tables: np.ndarray | None = None,
        memory: SeatMemory | None = None,
    ) -> None:
        if not isinstance(states, np.ndarray) or states.dtype != STATE_DTYPE or states.ndim != 1:
            raise ValueError("states must be a 1-d array of STATE_DTYPE hand records")
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        n = states.shape[0]
        if np.shape(masks) != (n, 88) or np.shape(seats) != (n,):
            raise ValueError(f"masks must be ({n}, 88) and seats ({n},)")
        self.states, self.masks, self.rules = states, masks, rules
        self.seats = np.asarray(seats, dtype=np.int64)
        self.oracle = bool(oracle)
        self.tables = np.arange(n) if tables is None else np.asarray(tables, dtype=np.int64)
        self.memory = memory
        self._obs: dict[int, np.ndarray] = {}
        if obs is not None:
            if obs_version is None:
                raise ValueError("obs needs its obs_version")
            self._obs[int(obs_version)] = obs

    def __len__(self) -> int:
        return self.states.shape[0]

    def observe(self, version: int) -> np.ndarray:
        """Every row's observation in ``version`` (encoded once per version, then reused)."""
        if version not in self._obs:
            spec = get_obs_version(version)
            out = np.zeros((len(self), *spec.shape(self.oracle)), dtype=np.uint8)
            rules = kernel_rules(self.rules)
            if len(self) == 1:  # one hand: no parallel launch (its thread start costs ~100 us)
                spec.encode_at(self.states, 0, int(self.seats[0]), self.oracle, rules, out[0])
            else:
                seats = np.zeros(len(self), dtype=np.int8)
                spec.encode_batch(self.states, seats, self.oracle, rules, out)
            self._obs[version] = out
        return self._obs[version]


def _agent_name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return repr(name if isinstance(name, str) else type(agent).__name__)[:80]


def _rows_text(bad: np.ndarray, rows: np.ndarray | None) -> str:
    """``rows [3, 7, ...]`` of ``decisions`` (the asked rows' own indices)."""
    where = bad if rows is None else rows[bad]
    shown = ", ".join(str(int(r)) for r in where[:5]) + (", ..." if len(where) > 5 else "")
    return f"row{'s' if len(where) > 1 else ''} [{shown}]"


def check_answer(
    agent: Any, got: object, masks: np.ndarray, rows: np.ndarray | None = None
) -> np.ndarray:
    """``agent``'s answer ``got`` for ``masks`` as ``int64[N]``, after checking it whole.

    Every host asks through ``ask`` / ``ask_one``, which call this: an agent's answer is one
    action per row (``N`` values; a scalar for one row), of an integer dtype or floats with
    integral values, finite, and legal under that row's mask. ``rows`` (the decisions'
    indices of the asked rows) only name the offending rows in messages.

    Raises:
        TypeError: an answer that is not numbers (strings, objects, booleans, complex): an
            ``InputTypeError``, a ``ValueError`` too.
        IllegalActionError: the wrong count, non-finite or non-integral values, or actions
            outside 0..87 or not legal under the mask; the message names the agent and
            the offending rows (a ``ValueError``).
    """
    n = masks.shape[0]
    who = f"agent {_agent_name(agent)}"
    try:
        a = np.asarray(got)
    except Exception as exc:  # noqa: BLE001  (an answer of any type)
        raise InputTypeError(
            f"{who} answered {type(got).__name__}, not action ids: {exc}"
        ) from None
    if a.dtype == np.bool_ or not (
        np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)
    ):
        raise InputTypeError(f"{who} answered {a.dtype} values, not integer action ids")
    if a.size != n or a.ndim > 2 or (a.ndim == 2 and a.shape[1] != 1):
        raise IllegalActionError(
            f"{who} answered shape {a.shape} for {n} decision{'s' * (n != 1)} (one action a row)"
        )
    a = a.reshape(n)
    if np.issubdtype(a.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.isfinite(a) | (a != np.round(a)) | (np.abs(a) > 2**31))
        if bad.size:
            raise IllegalActionError(
                f"{who} answered non-integral or non-finite actions {a[bad[:5]].tolist()} at "
                f"{_rows_text(bad, rows)}"
            )
    out = a.astype(np.int64)  # a copy: the agent's array is not handed on
    inside = (out >= 0) & (out < masks.shape[1])
    legal = inside.copy()
    legal[inside] = masks[np.flatnonzero(inside), out[inside]] == 1
    bad = np.flatnonzero(~legal)
    if bad.size:
        raise IllegalActionError(
            f"{who} answered actions {out[bad[:5]].tolist()} that are not legal at "
            f"{_rows_text(bad, rows)}"
        )
    return out


def ask(agent: Any, decisions: Decisions, rows: np.ndarray | None = None) -> np.ndarray:
    """``agent``'s actions (``int64``) for ``rows`` of ``decisions`` (default: every row).

    The answer is checked whole (``check_answer``) before it is returned, for every agent.

    Raises:
        ValueError: a stateful agent asked without a ``SeatMemory``.
        TypeError: an answer that is not numbers.
        IllegalActionError: the wrong count, non-integral, non-finite or illegal actions
            (the message names the agent and the rows).
    """
    if rows is None:  # every row: views, no copies
        idx: Any = slice(None)
        n = len(decisions)
        masks = decisions.masks
    else:
        idx = np.asarray(rows, dtype=np.int64)
        n = idx.size
        masks = decisions.masks[idx]
    if getattr(agent, "reads_state", False):
        got = agent.act_states(decisions.states[idx].copy(), masks, decisions.rules)
    else:
        obs = decisions.observe(agent.obs_version)
        obs = obs if rows is None else obs[idx]
        if getattr(agent, "stateful", False):
            if decisions.memory is None:
                raise ValueError(
                    f"{getattr(agent, 'name', agent)!r} is stateful: its host must keep a "
                    "SeatMemory (Decisions(..., memory=...))"
                )
            keys, starts = decisions.memory.take(decisions.tables[idx], decisions.seats[idx])
            got = agent.act_stateful(obs, masks, keys, starts)
        elif n == 1 and callable(getattr(agent, "act", None)):
            got = agent.act(obs[0], masks[0])  # the single-decision path
        else:
            got = agent.act_batch(obs, masks)
    return check_answer(agent, got, masks, None if rows is None else idx)


def ask_one(agent: Any, state: np.void | np.ndarray, mask: np.ndarray, rules: RuleConfig,
            seat: int, memory: SeatMemory | None = None, table: int = 0) -> int:  # fmt: skip
    """``ask`` for one hand: the agent's action as an int (the per-decision hosts' fast path).

    Args:
        agent: the agent asked.
        state: the hand's record (``Game.state``, or a one-row ``STATE_DTYPE`` array).
        mask: the legal-action mask of the seat to act.
        rules: the hand's rules.
        seat: the seat to act.
        memory: the host's ``SeatMemory`` (stateful agents only).
        table: the hand's table for ``memory``'s keys.
    """
    if isinstance(state, np.ndarray) and state.shape == (1,) and state.dtype == STATE_DTYPE:
        states = state.copy()  # writeable: the kernels' one compiled specialisation, and safe
    else:
        states = np.empty(1, dtype=STATE_DTYPE)
        states[0] = state
    if getattr(agent, "reads_state", False) or getattr(agent, "stateful", False):
        decisions = Decisions(
            states, np.asarray(mask)[None], rules, np.array([seat]),
            tables=np.array([table]), memory=memory,
        )  # fmt: skip
        return int(ask(agent, decisions)[0])
    spec = get_obs_version(agent.obs_version)
    obs = np.zeros(spec.shape(False), dtype=np.uint8)
    spec.encode_at(states, 0, int(seat), False, kernel_rules(rules), obs)
    got = agent.act(obs, mask)
    if type(got) is int and 0 <= got < len(mask) and mask[got] == 1:  # the common case, fast
        return got
    return int(check_answer(agent, got, np.asarray(mask).reshape(1, -1))[0])
