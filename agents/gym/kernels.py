"""The numba kernels of ``SingleSeatVectorEnv``: every env's step in one parallel call.

``step_envs`` takes one code per env (an action id, ``BAD``, ``RESET`` or
``SKIP``), applies the learner's action or deals a new hand, plays the
rule-based opponents (``sichuan_env.agents.rule_based.fused``) up to the
learner's next decision and writes the next legal mask and observation.
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.rule_based.fused import learner_step_at, run_styles

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.encoding.v2 import encode_v2
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.engine.deal import deal_seed
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER

BAD, RESET, SKIP = -1, -2, -3
"""Action codes of the kernel besides action ids: not an action id, deal a new hand, leave alone."""
_CHUNKS = 64
"""Work items of one batched step (each with its own scratch buffers), shared among the cores."""


@njit
def _encode(enc: int, states, i: int, seat: int, oracle: bool, rules, out) -> None:
    """Seat ``seat``'s observation of ``states[i]`` in version ``enc`` (1 or 2; else nothing)."""
    if enc == 1:
        encode_v1(states[i], seat, oracle, rules, out)
    elif enc == 2:
        encode_v2(states[i], seat, oracle, rules, out)


@njit
def _play(
    states, i: int, a: int, seed, styles, seat: int, rules, flags, waits, dist, v1, scratch, mask
) -> int:
    """Env ``i``'s step: deal ``seed`` (``a == RESET``) or apply ``a``; then the opponents.

    Writes the learner's next legal mask into ``mask`` (zeros once the hand is
    over) and returns the learner's point change.
    """
    if a != RESET:
        return learner_step_at(
            states, i, a, styles, seat, rules, flags, waits, v1, scratch, dist, mask
        )
    deal_seed(states, i, seed, rules)
    run_styles(states[i], styles, seat, rules, flags, waits, v1, scratch, dist)
    if states[i].phase == PH_OVER:
        mask[:] = 0
    else:
        legal_mask(states[i], rules, flags, mask)
    return 0


@njit(parallel=True)
def step_envs(
    states, actions, seeds, styles, seats, masks, obs, deltas, illegal, over, enc, oracle,
    rules, flags, waits, dist,
) -> None:  # fmt: skip
    """Every env's step in one call (``actions``: ids, ``BAD``, ``RESET`` or ``SKIP``), parallel.

    An env given ``BAD`` or an action its mask does not allow is left as it is
    with ``illegal[i] = True``; a ``SKIP`` env is not touched at all.
    """
    n = states.shape[0]
    chunks = min(n, _CHUNKS)
    for c in numba.prange(chunks):
        v1 = np.zeros((83, 27), dtype=np.uint8)  # the rule-based opponents' scratch
        scratch = np.zeros(ACTION_SPACE, dtype=np.int8)
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            a = actions[i]
            if a == SKIP:
                continue
            deltas[i] = 0
            illegal[i] = a != RESET and (a < 0 or a >= ACTION_SPACE or masks[i, a] == 0)
            if illegal[i]:
                continue
            deltas[i] = _play(
                states, i, a, seeds[i], styles[i], seats[i], rules, flags, waits, dist, v1,
                scratch, masks[i],
            )  # fmt: skip
            over[i] = states[i].phase == PH_OVER
            _encode(enc, states, i, seats[i], oracle, rules, obs[i])
