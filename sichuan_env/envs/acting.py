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
it remembers which (table, seat) pairs have begun a new hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..encoding.registry import get as get_obs_version
from ..engine.state import STATE_DTYPE
from ..rules.config import RuleConfig, kernel_rules


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


def ask(agent: Any, decisions: Decisions, rows: np.ndarray | None = None) -> np.ndarray:
    """``agent``'s actions (``int64``) for ``rows`` of ``decisions`` (default: every row).

    Raises:
        ValueError: a stateful agent asked without a ``SeatMemory``.
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
            return np.array([agent.act(obs[0], masks[0])], dtype=np.int64)  # single-decision path
        else:
            got = agent.act_batch(obs, masks)
    return np.asarray(got, dtype=np.int64).reshape(n)


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
    return int(agent.act(obs, mask))
