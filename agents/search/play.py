"""Hands played with one searching seat, in numba: duplicate matches and search diagnostics.

``play_hand`` deals a wall, lets seat ``search_seat`` choose its own-turn
actions (and, with the ``claims`` knob, its claim answers) by rollout search
(``sichuan_env.agents.search.rollout``) and every other decision (its setup,
all other seats) by the seats' rule-based styles, and
returns the searcher's points. ``play_batch`` runs many (wall, seat) jobs
in parallel over the cores. ``env`` is the tuple ``(styles, rules, flags,
waits, dist)`` and ``knobs`` the search settings ``(n_samples, draws, gap, z, claims, setup)``.
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.rule_based.fused import run_styles, style_action
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.rollout import MAX_CANDIDATES, is_searched, search_action

from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal_seed, splitmix64
from sichuan_env.engine.state import PH_OVER
from sichuan_env.engine.step import apply


@njit
def advantage(scratch, raw, orig, a: int, d: int, n_walls: int, rng: np.uint64, env, obs, mask):
    """Mean gain of action ``a`` over ``d`` for the acting seat, the undrawn wall shuffled ``n_walls`` times.

    The hands stay the true ones; only the order of the undrawn wall (hidden
    from everyone) is drawn again, and every seat plays its style after the
    action. By the performance-difference identity, the sum of these
    advantages over the searcher's decisions estimates (unbiased) how many
    points per hand the search gains over its style, with far less variance
    than a match result. Returns (mean gain, rng).
    """
    styles, rules, flags, waits, dist = env
    total = 0.0
    for _ in range(n_walls):
        raw[0, :] = orig
        st0 = scratch[0]
        me = st0.to_act
        for j in range(st0.tail, st0.head, -1):  # Fisher-Yates on wall[head..tail]
            rng, r = splitmix64(rng)
            k = st0.head + np.int64(r % np.uint64(j - st0.head + 1))
            st0.wall[j], st0.wall[k] = st0.wall[k], st0.wall[j]
        for sign, act in ((1.0, a), (-1.0, d)):
            raw[1, :] = raw[0, :]
            st = scratch[1]
            apply(st, act, rules, flags, waits)
            run_styles(st, styles, -1, rules, flags, waits, obs, mask, dist)
            total += sign * float(st.scores[me])
    return total / max(n_walls, 1), rng


@njit
def play_hand(
    games, raw_games, i: int, scratch, raw, seed: np.uint64, search_seat: int, knobs, env
):
    """Play ``games[i]`` dealt from ``seed`` with ``search_seat`` searching.

    Returns (the searcher's points, its searched decisions, its deviations
    from the style, their summed ``advantage`` over the style). A
    *deviation* is a searched action other than the style's own.
    """
    n_samples, draws, gap, z, claims, setup = knobs
    styles, rules, flags, waits, dist = env
    deal_seed(games, i, seed, rules)
    st = games[i]
    obs = np.zeros((83, 27), dtype=np.uint8)
    mask = np.zeros(88, dtype=np.int8)
    cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
    gains = np.zeros(MAX_CANDIDATES, dtype=np.float64)
    vals = np.zeros((max(n_samples, 1), MAX_CANDIDATES), dtype=np.float64)
    no_bel = np.zeros((0, BELIEF_COLUMNS), dtype=np.float64)
    rng = seed ^ np.uint64(0x9E3779B97F4A7C15)
    searched = 0
    deviations = 0
    gain = 0.0
    while st.phase != PH_OVER:
        a = -1
        if st.to_act == search_seat and is_searched(st, claims, setup):
            rng, r = splitmix64(rng)
            a = search_action(
                scratch, raw, raw_games[i], n_samples, draws, gap, z, claims, setup, no_bel, -1, r,
                styles, rules, flags, waits, obs, mask, dist, cands, gains, vals,
            )  # fmt: skip
            searched += 1
            d = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
            if a != d:
                deviations += 1
                rng, r = splitmix64(rng)
                g, _ = advantage(scratch, raw, raw_games[i], a, d, 32, r, env, obs, mask)
                gain += g
        if a < 0:
            a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        apply(st, a, rules, flags, waits)
    return st.scores[search_seat], searched, deviations, gain


@njit(parallel=True)
def play_batch(
    games, scratch, seeds, seats, knobs, env, points, searched, deviations, gain
) -> None:
    """``play_hand`` for job ``j`` = (``seeds[j]``, ``seats[j]``) on ``games[j]``, ``scratch[j]``."""
    raw_games = games.view(np.uint8).reshape(games.shape[0], -1)
    for j in numba.prange(seeds.shape[0]):
        raw = scratch[j].view(np.uint8).reshape(2, -1)
        p, s, dv, g = play_hand(
            games, raw_games, j, scratch[j], raw, seeds[j], seats[j], knobs, env
        )
        points[j] = p
        searched[j] = s
        deviations[j] = dv
        gain[j] = g
