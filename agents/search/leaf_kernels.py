"""Numba kernels of the value-leaf search (``value_leaf.ValueLeafSearch`` is their facade).

``leaf_rows`` finds every candidate's leaves (determinize, apply, play the styles to
the next draw, ``depth`` more draws), ``choose_rows`` and ``paired_rows`` turn the
leaves' values into a choice and into paired candidate values.
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.eval.metrics import paired_stats
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.agent import _public_seed
from sichuan_env.agents.search.rollout import (
    MAX_CANDIDATES,
    add_candidate,
    draw_sample,
    search_choice,
    search_start,
)

from sichuan_env._jit import njit
from sichuan_env.engine.actions import HU
from sichuan_env.engine.state import PH_OVER, PH_TURN
from sichuan_env.engine.step import apply

MAX_LEAF_CANDIDATES = 16
"""Candidates scored per decision (the style's or the prior's action among them)."""


@njit
def play_to_draw(st, styles, rules, flags, waits, obs, mask, dist) -> bool:
    """Seats play their styles until a draw from the wall has just happened or the hand is over.

    Returns False if a style had no answer (an empty mask: never for a legal state).
    """
    while st.phase != PH_OVER and not (st.phase == PH_TURN and st.drawn and st.drawn_tile >= 0):
        a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return False
        apply(st, a, rules, flags, waits)
    return True


@njit(parallel=True)
def leaf_rows(states, scratch, seed: np.uint64, knobs, env, bel, prior, extra, leaves, gain,
              cands_out, n_out, base_out) -> None:  # fmt: skip
    """The leaves of every candidate of every row, for ``V`` to score.

    The arrays, in order:

    - ``states``: ``STATE_DTYPE[N]``: own-turn decisions (others give ``n_out`` 0).
    - ``scratch``: ``STATE_DTYPE[N, 2]`` work area.
    - ``seed``: the agent's seed (mixed with each row's public facts).
    - ``knobs``: ``(samples, draws, gap, depth)``.
    - ``env``: ``(styles, rules, flags, waits, dist)``.
    - ``bel``: ``float64[N, 0 or 4, 28]`` belief rows of the determinizations.
    - ``prior``: ``int64[N]``: the default action of each row (-1: the style's).
    - ``extra``: ``int64[N, E]``: actions added to each row's candidates when legal
      (-1: none; ``E`` may be 0).
    - ``leaves``: ``STATE_DTYPE[N, samples, MAX_LEAF_CANDIDATES]``: out, the leaf states.
    - ``gain``: ``float64[N, samples, MAX_LEAF_CANDIDATES]``: out, ``me``'s points on the way.
    - ``cands_out``: ``int64[N, MAX_CANDIDATES]``: out, the candidates.
    - ``n_out``: ``int64[N]``: out, candidates per row (1: nothing to score, the answer is
      ``cands_out[i, 0]``: the prior or the style's).
    - ``base_out``: ``int64[N]``: out, the default's index among the candidates.
    """
    n_samples, draws, gap, depth = knobs
    styles, rules, flags, waits, dist = env
    n = states.shape[0]
    raw_states = states.view(np.uint8).reshape(n, -1)
    for i in numba.prange(n):
        work = scratch[i]
        raw = work.view(np.uint8).reshape(2, -1)
        obs = np.zeros((83, 27), dtype=np.uint8)
        mask = np.zeros(88, dtype=np.int8)
        cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
        gains = np.zeros(MAX_CANDIDATES, dtype=np.float64)
        k_n, base, _default = search_start(work, raw, raw_states[i], prior[i], gap, False, False,
                                          styles, rules, flags, obs, mask, dist, cands, gains)  # fmt: skip
        if k_n > 0 and not mask[HU]:  # a legal win is always taken: nothing is added to it
            for e in range(extra.shape[1]):
                k_n = add_candidate(cands, k_n, extra[i, e], mask)
        if k_n > MAX_LEAF_CANDIDATES:  # keep the default and the first others
            if base >= MAX_LEAF_CANDIDATES:
                cands[MAX_LEAF_CANDIDATES - 1] = cands[base]
                base = MAX_LEAF_CANDIDATES - 1
            k_n = MAX_LEAF_CANDIDATES
        if k_n <= 0:  # not an own turn: the prior, else the style's answer
            raw[0, :] = raw_states[i]
            a = prior[i]
            if a < 0:
                a = style_action(work[0], styles[work[0].to_act], rules, flags, obs, mask, dist)
            k_n, base, cands[0] = 1, 0, a
        n_out[i] = k_n
        base_out[i] = base
        cands_out[i, :] = cands
        if k_n <= 1:
            continue
        leaf_raw = leaves[i].view(np.uint8).reshape(n_samples, MAX_LEAF_CANDIDATES, -1)
        me = work[0].to_act
        rng = _public_seed(states[i], seed)
        for k in range(n_samples):
            rng, before = draw_sample(work, raw, raw_states[i], me, rng, draws, bel[i], styles,
                                      rules, flags, waits, obs, mask, dist)  # fmt: skip
            for c in range(k_n):
                raw[1, :] = raw[0, :]
                st = work[1]
                apply(st, cands[c], rules, flags, waits)
                play_to_draw(st, styles, rules, flags, waits, obs, mask, dist)
                for _ in range(depth):  # d more draws from the determinized wall
                    if st.phase == PH_OVER:
                        break
                    a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
                    if a < 0:
                        break
                    apply(st, a, rules, flags, waits)
                    play_to_draw(st, styles, rules, flags, waits, obs, mask, dist)
                leaf_raw[k, c, :] = raw[1, :]
                gain[i, k, c] = float(st.scores[me] - before)


@njit
def choose_rows(vals, n_samples: int, z: float, cands, n_c, base, out) -> None:
    """Each row's choice from its candidates' values ``vals[N, samples, C]`` (``search_choice``)."""
    gains = np.zeros(MAX_CANDIDATES, dtype=np.float64)
    for i in range(vals.shape[0]):
        if n_c[i] <= 1:
            out[i] = cands[i, max(base[i], 0)]
            continue
        out[i] = search_choice(vals[i], n_samples, n_c[i], base[i], z, cands[i], gains)


@njit
def paired_rows(vals, n_samples: int, n_c, base, mean, se) -> None:
    """Each candidate's mean gain over the row's default and its standard error (``paired_stats``)."""
    for i in range(vals.shape[0]):
        if n_c[i] <= 1:
            continue
        for c in range(n_c[i]):
            mean[i, c], se[i, c] = paired_stats(vals[i], n_samples, c, base[i])
