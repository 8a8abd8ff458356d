"""Rollout estimates of each draw's luck, ``E[x | s, t]`` for every tile ``t`` (numba).

At a sampled draw of a recorded hand, for every tile ``t`` the drawer could have
drawn, the post-draw state is rebuilt with ``t`` drawn (``swap_draw``), the rest of
the undrawn wall is put in a random order, and the lineup's own policies (rule-based
styles, or a network exported by ``numba_policy.export``) play the hand to its end.
``K`` orders are drawn per event and shared by every ``t`` (common random numbers),
so that the differences across ``t`` — what a luck correction must get right — are
estimated with less noise than the levels. For deterministic policies the mean over
orders is an unbiased estimate of ``E[points to come | s, t]``.
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.eval.luck_features import MAX_EVENTS, draw_event
from sichuan_env.agents.nn.features import AUX_SIZE
from sichuan_env.agents.nn.mlp_kernels import net_action
from sichuan_env.agents.rule_based.fused import style_action

from research.playout_luck.kernels import BAD, OK, swap_draw
from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER, PH_TURN
from sichuan_env.engine.step import apply


@njit
def play_out(w, styles, rules, flags, waits, obs, mask, dist, weights, buf) -> bool:
    """Play ``w`` to the end of the hand with each seat's policy (-1: the network)."""
    while w.phase != PH_OVER:
        if styles[w.to_act] < 0:
            a = net_action(w, weights, rules, flags, buf[0], buf[1], dist, buf[2], buf[3], buf[4],
                           buf[5])  # fmt: skip
        else:
            a = style_action(w, styles[w.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return False
        apply(w, a, rules, flags, waits)
    return True


@njit
def _rollouts(st, work, raw_w, raw_st, probs, keys, styles, rules, flags, waits, obs, mask, dist,
              weights, buf, out) -> bool:  # fmt: skip
    a = st.drawn_tile
    head = int(st.head)
    n = int(st.tail) - head + 1
    tmp = np.zeros(max(n, 1), dtype=np.uint8)
    for r in range(keys.shape[0]):
        order = np.argsort(keys[r, : max(n, 0)])
        for t in range(27):
            if probs[t] == 0.0:
                continue
            raw_w[:] = raw_st
            w = work[0]
            swap_draw(w, a, t)
            for j in range(n):
                tmp[j] = w.wall[head + j]
            for j in range(n):
                w.wall[head + j] = tmp[order[j]]
            if not play_out(w, styles, rules, flags, waits, obs, mask, dist, weights, buf):
                return False
            for s in range(4):
                out[t, r, s] = w.scores[s] - st.scores[s]
    return True


@njit
def _replay_one(states, work, i, wall, dealer, offset, log, n_log, rules, flags, waits, dist,
                styles, want, keys, feats, probs, actual, roll, weights) -> tuple:  # fmt: skip
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
    e = 0
    for j in range(n_log):
        if st.phase == PH_OVER:
            return BAD, e
        seat = log[j] // 128
        act = log[j] % 128
        legal_mask(st, rules, flags, mask)
        if seat != st.to_act or act >= 88 or mask[act] == 0:
            return BAD, e
        before = 0
        for s in range(4):
            before += st.draws[s]
        apply(st, act, rules, flags, waits)
        after = 0
        for s in range(4):
            after += st.draws[s]
        if after > before and st.phase == PH_TURN and st.drawn:
            if e >= MAX_EVENTS:
                return BAD, e
            if want[e]:
                actual[e] = draw_event(st, rules, flags, dist, feats[e], probs[e])
                if not _rollouts(st, work, raw_w, raw_st, probs[e], keys[e], styles, rules, flags,
                                 waits, obs, mask, dist, weights, buf, roll[e]):  # fmt: skip
                    return BAD, e
            e += 1
    if st.phase != PH_OVER:
        return BAD, e
    return OK, e


@njit(parallel=True)
def rollout_events(states, work, walls, dealers, offsets, logs, n_logs, rules, flags, waits, dist,
                   styles, want, keys, feats, probs, actual, roll, status, n_events,
                   weights) -> None:  # fmt: skip
    """Replay every hand; at each wanted draw event ``[i, e]`` fill the rollouts.

    ``want bool[H, MAX_EVENTS]``; ``keys float[H, MAX_EVENTS, K, 55]`` (each event's ``K``
    wall orders, as sort keys); ``feats [27, 4, NF]`` / ``probs [27]`` / ``actual`` as
    ``draw_event`` gives them; ``roll [27, K, 4]`` the points each seat still scores
    with tile ``t`` drawn and order ``k``. ``styles int64[H, 4]`` (-1: the network).
    """
    for i in numba.prange(walls.shape[0]):
        status[i], n_events[i] = _replay_one(
            states, work[i : i + 1], i, walls[i], dealers[i], offsets[i], logs[i], n_logs[i],
            rules, flags, waits, dist, styles[i], want[i], keys[i], feats[i], probs[i], actual[i],
            roll[i], weights,
        )  # fmt: skip
