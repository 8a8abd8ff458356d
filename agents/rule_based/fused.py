"""Rule-based seats played inside numba, straight from the engine state.

The rule-based agents (``heuristic``, ``value``, ``defensive``) decide from
observation v1 and a mask; here the same kernels (``sichuan_env.agents.rule_based.heuristic.decide``,
``sichuan_env.agents.rule_based.population.decide_style``) are called on an observation encoded in
numba from the engine state, so a seat plays without a Python round trip.
The answers are exactly those of the agent objects (the kernels are the
same, and they are deterministic). Used by the Gymnasium env
(``sichuan_env.agents.gym.env``: opponents between the learner's decisions) and by
rollout search (``sichuan_env.agents.search.rollout``: hands played to the end many times).

Style codes: ``HEURISTIC`` 0, ``VALUE`` 1, ``DEFENSIVE`` 2 (``STYLES`` maps the
registered agent names to them).
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.rule_based.heuristic import decide
from sichuan_env.agents.rule_based.population import DEFENSIVE, VALUE, decide_style

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER
from sichuan_env.engine.step import apply

HEURISTIC = 0
STYLES = {"heuristic": HEURISTIC, "value": VALUE, "defensive": DEFENSIVE}
"""Registered agent names that can be played in numba, and their style codes."""


@njit
def style_action(st, style: int, rules, flags, obs, mask, dist) -> int:
    """The action of the seat to act under ``style`` (``obs``/``mask`` are scratch buffers)."""
    legal_mask(st, rules, flags, mask)
    encode_v1(st, st.to_act, False, rules, obs)
    if style == HEURISTIC:
        return decide(obs, mask, dist)
    return decide_style(obs, mask, dist, style)


@njit
def run_styles(st, styles, stop_seat: int, rules, flags, waits, obs, mask, dist) -> int:
    """Seats play by ``styles[seat]`` until ``stop_seat`` owes a decision or the hand is over.

    ``stop_seat`` -1 plays the hand to the end. Returns the decisions played,
    or -1 if a style had no answer (an empty mask: never for a legal state).
    """
    n = 0
    while st.phase != PH_OVER and st.to_act != stop_seat:
        a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return -1
        apply(st, a, rules, flags, waits)
        n += 1
    return n


@njit
def run_styles_at(
    states, i: int, styles, stop_seat: int, rules, flags, waits, obs, mask, dist
) -> int:
    """``run_styles`` on ``states[i]``."""
    return run_styles(states[i], styles, stop_seat, rules, flags, waits, obs, mask, dist)


def style_codes(names: list[str] | tuple[str, ...]) -> np.ndarray | None:
    """``int64`` style codes for agent names, or None if any name cannot be played in numba."""
    if not all(isinstance(n, str) and n in STYLES for n in names):
        return None
    return np.array([STYLES[n] for n in names], dtype=np.int64)


@njit
def learner_step_at(
    states, i: int, action: int, styles, seat: int, rules, flags, waits, obs, mask, dist, out
) -> int:
    """The learner's step of the single-seat env, in one call.

    Applies ``seat``'s ``action`` (legal: the caller checked it) to ``states[i]``,
    lets the other seats play by ``styles`` until ``seat`` owes a decision or
    the hand is over, and writes ``seat``'s legal mask into ``out`` (zeros
    once the hand is over). Returns ``seat``'s point change over the span.
    """
    st = states[i]
    before = st.scores[seat]
    apply(st, action, rules, flags, waits)
    run_styles(st, styles, seat, rules, flags, waits, obs, mask, dist)
    if st.phase == PH_OVER:
        out[:] = 0
    else:
        legal_mask(st, rules, flags, out)
    return st.scores[seat] - before
