"""Rollout estimates of an agent's advantages under a reference policy (numba kernels).

The facade is ``sichuan_env.agents.eval.advantage``; it runs chunks of records on
threads (the kernels release the GIL). This module plays a rule-based reference;
``advantage_net_kernels`` is the same code for a network exported by
``numba_policy.export`` (kept apart so that the common case compiles without the
network's kernels, and without a parallel loop).

A record is replayed against a deterministic reference policy ``mu``. At every
decision, of any seat, whose action ``a`` differs from ``mu``'s in the same state, ``K``
orders of the undrawn wall are drawn; each is played to the end of the hand twice,
after ``a`` and after ``mu``'s action, with ``mu`` in every seat (common random
numbers). The mean difference of every seat's points still to come is an unbiased
estimate of ``A_mu(s, a) = Q_mu(s, a) - V_mu(s)`` for that seat; where ``a`` is
``mu``'s action it is 0 exactly. Wall orders come from a counter-based
generator (splitmix64) keyed by each hand's key (the facade derives it from the seed,
the wall and the rotation), the decision's place in the log and the order's number, so
an estimate depends on neither threads nor how the records are split into calls.
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.nn.features import AUX_SIZE
from sichuan_env.agents.rule_based.fused import style_action

from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER
from sichuan_env.engine.step import apply

OK, BAD, FULL = 0, 1, 2
"""Status per hand: estimated; not replayable; more divergences than room."""
NET = -1
"""The style code of a network reference (``advantage_net_kernels``, its weights beside it)."""


@njit
def splitmix(x: np.uint64) -> np.uint64:
    """One step of splitmix64 (a bijective mix of a 64-bit counter)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit
def shuffle_tail(wall, head: int, n: int, key: np.uint64) -> None:
    """Fisher-Yates shuffle of ``wall[head : head + n]`` driven by ``key``."""
    x = key
    for j in range(n - 1, 0, -1):
        x = splitmix(x)
        k = int(x % np.uint64(j + 1))
        t = wall[head + j]
        wall[head + j] = wall[head + k]
        wall[head + k] = t


@njit
def ref_action(w, style: int, weights, rules, flags, obs, mask, dist, buf) -> int:
    """The reference style's action for the seat to act in ``w`` (-1: none)."""
    return style_action(w, style, rules, flags, obs, mask, dist)


@njit
def play_out(w, style: int, weights, rules, flags, waits, obs, mask, dist, buf) -> bool:
    """Play ``w`` to the end of the hand with the reference policy in every seat."""
    while w.phase != PH_OVER:
        a = ref_action(w, style, weights, rules, flags, obs, mask, dist, buf)
        if a < 0:
            return False
        apply(w, a, rules, flags, waits)
    return True


@njit
def advantage(st, raw_st, work, raw_w, a: int, b: int, reps: int, key: np.uint64, shuffle: bool,
              style: int, weights, rules, flags, waits, obs, mask, dist, buf, mean,
              var) -> bool:  # fmt: skip
    """Every seat's points after ``a`` minus after ``b`` over ``reps`` orders (False: failed).

    Fills ``mean[4]`` and ``var[4]`` (the variance of one order's difference). Without ``shuffle`` the wall keeps its real order (every rep is the same: a check).
    """
    head = int(st.head)
    n = int(st.tail) - head + 1
    s1 = np.zeros(4)
    s2 = np.zeros(4)
    x = np.zeros(4)
    for r in range(reps):
        k = splitmix(key ^ np.uint64(r + 1) * np.uint64(0xD1B54A32D192ED03))
        x[:] = 0.0
        for side in range(2):
            raw_w[:] = raw_st
            w = work[0]
            if shuffle and n > 1:
                shuffle_tail(w.wall, head, n, k)
            apply(w, a if side == 0 else b, rules, flags, waits)
            if not play_out(w, style, weights, rules, flags, waits, obs, mask, dist, buf):
                return False
            for q in range(4):
                d = float(w.scores[q] - st.scores[q])
                x[q] += d if side == 0 else -d
        s1 += x
        s2 += x * x
    for q in range(4):
        m = s1[q] / reps
        mean[q] = m
        var[q] = max((s2[q] - reps * m * m) / (reps - 1), 0.0) if reps > 1 else 0.0
    return True


@njit
def _one(states, work, i, wall, dealer, offset, log, n_log, trust, style, weights, reps, key,
         shuffle, rules, flags, waits, dist, est, var, who, acts) -> tuple:  # fmt: skip
    deal(states, i, wall, dealer, offset, rules)
    st = states[i]
    raw_st = states[i : i + 1].view(np.uint8)
    raw_w = work.view(np.uint8)
    mask = np.zeros(88, dtype=np.int8)
    obs = np.zeros((83, 27), dtype=np.uint8)
    h = weights[0].shape[1]
    buf = (
        np.zeros((83, 27), np.uint8), np.zeros(88, np.int8), np.zeros(AUX_SIZE, np.float32),
        np.zeros(h, np.float32), np.zeros(h, np.float32), np.zeros(88, np.float32),
    )  # fmt: skip
    d = 0
    for j in range(n_log):
        if st.phase == PH_OVER:
            return BAD, d
        s = log[j] // 128
        act = log[j] % 128
        legal_mask(st, rules, flags, mask)
        if s != st.to_act or act >= 88 or mask[act] == 0:
            return BAD, d
        if trust[s]:  # the seat plays the reference's own code: no divergence to look for
            apply(st, act, rules, flags, waits)
            continue
        ref = ref_action(st, style, weights, rules, flags, obs, mask, dist, buf)
        if ref < 0:
            return BAD, d
        if ref != act:
            if d >= est.shape[0]:
                return FULL, d
            k = splitmix(key ^ np.uint64(j + 1) * np.uint64(0x9E3779B97F4A7C15))
            if not advantage(st, raw_st, work, raw_w, act, ref, reps, k, shuffle, style, weights,
                             rules, flags, waits, obs, mask, dist, buf, est[d], var[d]):  # fmt: skip
                return BAD, d
            for q in range(4):
                var[d, q] /= reps
            who[d] = s
            acts[d, 0] = act
            acts[d, 1] = ref
            d += 1
        apply(st, act, rules, flags, waits)
    if st.phase != PH_OVER:
        return BAD, d
    return OK, d


@njit
def advantages(states, work, walls, dealers, offsets, logs, n_logs, trust, style, weights, reps,
               keys, shuffle, rules, flags, waits, dist, est, var, who, acts, status,
               n_div) -> None:  # fmt: skip
    """Replay every hand ``i``; at each decision that is not the reference's, its advantages.

    ``trust bool[H, 4]`` marks the seats that play the reference's own code (their
    decisions are not replayed through it); ``style`` the reference's style code
    (``weights`` unused here: ``advantage_net_kernels`` plays a network); ``keys uint64[H]``; per divergence ``d`` of hand ``i``:
    ``est[i, d] float64[4]`` (every seat's mean advantage) and ``var[i, d]`` (the
    variance of that mean), ``who[i, d]`` (the seat that decided), ``acts[i, d]`` (its
    action, the reference's); ``status`` and ``n_div`` per hand.
    """
    for i in range(walls.shape[0]):
        status[i], n_div[i] = _one(
            states, work[i : i + 1], i, walls[i], dealers[i], offsets[i], logs[i], n_logs[i],
            trust[i], style, weights, reps, np.uint64(keys[i]), shuffle, rules, flags, waits, dist, est[i],
            var[i], who[i], acts[i],
        )  # fmt: skip
