"""The batched engine: many hands stepped in one numba call, parallel over the cores.

Hands are an array of ``STATE_DTYPE`` records. ``reset_batch`` deals each
from its seed; ``step_batch`` applies one decision per hand, writes every
seat's point change, marks the hands that ended, and deals the next hand of
those (auto-reset) from the next seed in the hand's own sequence, so a batch
is reproducible from its seeds on any number of cores. A hand's ``n``-th
deal uses seed ``seed_base + n * SEED_STRIDE`` (``n`` = 0 at ``reset_batch``).

``check_state`` is the numba twin of ``invariants.check_invariants`` for soak
runs: it returns 0, or a code naming the first broken invariant.
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from ..kernels.layout import MELD_PONG
from .actions import ACTION_SPACE
from .deal import deal_seed
from .legal import legal_mask
from .selfplay import choose
from .state import PH_EXCHANGE, PH_OVER, PH_ROB, PH_TURN, PH_VOID, RIVER_MELDED, STATE_DTYPE
from .step import apply

SEED_STRIDE = np.uint64(0x9E3779B97F4A7C15)
"""Distance between the seeds of consecutive hands of one slot."""


def _mix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, a bijection of uint64 (vectorised)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def slot_seeds(seed: int, n: int) -> np.ndarray:
    """``uint64[n]``: the first-hand seed of each of ``n`` slots of a run seeded with ``seed``.

    ``mix(mix(seed) + slot)`` with the splitmix64 finaliser: for a fixed slot
    the map from ``seed`` is a bijection of ``[0, 2**64)``, so two different
    run seeds never deal the same hands in the same slot (no wrap-around
    collisions such as ``seed * n + slot`` has).
    """
    mixed = _mix64(np.array([seed], dtype=np.uint64))
    with np.errstate(over="ignore"):
        return _mix64(mixed + np.arange(n, dtype=np.uint64))


BAD_ACTION = 1
"""``step_batch`` status of a hand whose action was not legal (that hand did not move)."""
HAND_DONE = 2
"""``step_one`` result when the decision ended the hand (it was re-dealt)."""


@njit(parallel=True)
def reset_batch(states, seed_base, hand_no, masks, rules, flags) -> None:
    """Deal hand ``hand_no[i]`` of every slot and fill its legal mask."""
    for i in numba.prange(states.shape[0]):
        # int64 index: the parfor's two typing passes see int64 then uint64, which compiled
        # every callee (the whole engine) twice
        deal_seed(states, np.int64(i), seed_base[i] + np.uint64(hand_no[i]) * SEED_STRIDE, rules)
        legal_mask(states[i], rules, flags, masks[i])


@njit
def step_one(
    states, i, a, mask, seed, hand_no, rewards, final, last_log, keep_log, rules, flags, waits
) -> int:
    """One decision of hand ``i``: 0 played, ``BAD_ACTION``, or ``HAND_DONE`` (then re-dealt).

    Writes the point changes into ``rewards`` (``[4]``); when the hand ends,
    its final scores into ``final`` and, with ``keep_log``, its decision log
    into ``last_log`` (``int16[MAX_LOG + 1]``, the count first), then deals the
    next hand. Always refreshes ``mask`` for the next decision.
    """
    st = states[i]
    for s in range(4):
        rewards[s] = 0
    if a < 0 or a >= ACTION_SPACE or not mask[a]:
        return BAD_ACTION
    b0 = st.scores[0]
    b1 = st.scores[1]
    b2 = st.scores[2]
    b3 = st.scores[3]
    apply(st, a, rules, flags, waits)
    rewards[0] = st.scores[0] - b0
    rewards[1] = st.scores[1] - b1
    rewards[2] = st.scores[2] - b2
    rewards[3] = st.scores[3] - b3
    code = 0
    if st.phase == PH_OVER:
        code = HAND_DONE
        for s in range(4):
            final[s] = st.scores[s]
        if keep_log:
            last_log[0] = st.n_log
            for k in range(st.n_log):
                last_log[k + 1] = st.log[k]
        hand_no[i] += 1
        deal_seed(states, np.int64(i), seed + np.uint64(hand_no[i]) * SEED_STRIDE, rules)
    legal_mask(st, rules, flags, mask)
    return code


@njit(parallel=True)
def step_batch(
    states, actions, seed_base, hand_no, masks, rewards, done, final, status, rules, flags, waits
) -> None:
    """One decision per hand; rewards ``[N, 4]``, auto-reset, next legal masks.

    ``masks`` must hold the masks of the current decisions (``reset_batch`` and
    the previous call fill them). A hand whose action is not legal is left
    unchanged with ``status[i] = BAD_ACTION``.
    """
    no_log = np.zeros(1, dtype=np.int16)
    for i in numba.prange(states.shape[0]):
        code = step_one(
            states,
            np.int64(i),  # one signature for both typing passes (see reset_batch)
            actions[i],
            masks[i],
            seed_base[i],
            hand_no,
            rewards[i],
            final[i],
            no_log,
            False,
            rules,
            flags,
            waits,
        )
        done[i] = code == HAND_DONE
        status[i] = BAD_ACTION if code == BAD_ACTION else 0


@njit
def check_state(st) -> int:
    """0 if the record is consistent, else the number of the first broken invariant.

    1 tile conservation, 2 zero-sum scores, 3 a count above 4, 4 a hand size,
    5 the seat to act has won.
    """
    census = np.zeros(27, dtype=np.int64)
    for k in range(st.head, st.tail + 1):
        census[st.wall[k]] += 1
    for s in range(4):
        for t in range(27):
            census[t] += st.hands[s, t]
            if st.hands[s, t] > 4:
                return 3
        for j in range(st.n_melds[s]):
            census[st.melds[s, j, 1]] += 3 if st.melds[s, j, 0] == MELD_PONG else 4
        for k in range(st.n_river[s]):
            if st.river_flag[s, k] != RIVER_MELDED:
                census[st.river[s, k]] += 1
        if st.phase == PH_EXCHANGE:
            for k in range(st.n_picks[s]):
                census[st.picks[s, k]] += 1
    for t in range(27):
        if census[t] != 4:
            return 1
    if st.scores[0] + st.scores[1] + st.scores[2] + st.scores[3] != 0:
        return 2
    for s in range(4):
        size = 3 * np.int64(st.n_melds[s])
        for t in range(27):
            size += st.hands[s, t]
        if st.phase == PH_EXCHANGE:
            size += st.n_picks[s]
        if st.won[s]:
            want = 14 if st.win_from[s] < 0 else 13
        elif (
            ((st.phase == PH_EXCHANGE or st.phase == PH_VOID) and s == st.dealer)
            or (st.phase == PH_TURN and s == st.to_act)
            or (st.phase == PH_ROB and s == st.claim_from)
        ):
            want = 14
        else:
            want = 13
        if size != want:
            return 4
    if st.phase != PH_OVER and st.won[st.to_act]:
        return 5
    return 0


@njit
def _soak_one(states, i, seed, mask, policy, rules, flags, waits, dist) -> int:
    deal_seed(states, i, seed, rules)
    st = states[i]
    rng = seed ^ np.uint64(0x5851F42D4C957F2D)
    k = 0
    code = check_state(st)
    while code == 0 and st.phase != PH_OVER and k < 2000:
        m = legal_mask(st, rules, flags, mask)
        if m == 0:
            return 100 * k + 6
        a, rng = choose(st, mask, m, rng, policy, rules, dist)
        apply(st, a, rules, flags, waits)
        k += 1
        code = check_state(st)
    if code == 0 and st.phase != PH_OVER:
        code = 7
    return 0 if code == 0 else 100 * k + code


@njit(parallel=True)
def _soak_chunk(states, masks, seeds, start, out, policy, rules, flags, waits, dist) -> None:
    n = min(states.shape[0], seeds.shape[0] - start)
    for j in numba.prange(n):
        out[start + j] = _soak_one(
            states, np.int64(j), seeds[start + j], masks[j], policy, rules, flags, waits, dist
        )


def soak(seeds: np.ndarray, policy: int, rules, tables: dict, chunk: int = 4096) -> np.ndarray:
    """Play one hand per seed under a ``selfplay`` policy, checking after every decision.

    ``check_state`` runs after each decision. Returns per hand: 0 clean, else ``100 * decision + code`` of the first failure.
    """
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    out = np.zeros(seeds.shape[0], dtype=np.int64)
    states = np.zeros(chunk, dtype=STATE_DTYPE)
    masks = np.zeros((chunk, ACTION_SPACE), dtype=np.int8)
    for start in range(0, seeds.shape[0], chunk):
        _soak_chunk(
            states,
            masks,
            seeds,
            start,
            out,
            policy,
            rules,
            tables["FLAGS"],
            tables["WAITS"],
            tables["DIST"],
        )
    return out
