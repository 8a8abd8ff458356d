"""Luck corrections whose counterfactual draws are played forward to the next draw (numba).

The shipped corrections score the state right after each draw with a value model
``V`` of the post-draw state. What happens next — the drawer's discard, whether it
deals in, who claims it — is a decision, and ``V`` must guess it. Here every
counterfactual draw ``t`` is played forward by a proxy policy (the heuristic at
every seat) until the *next* draw from the wall (or the hand's end); its value is
the points scored on the way plus the exact expectation of ``V`` over that next
draw (``draw_event`` gives all of its slots):

    W(s, t) = gain(s + t) + sum_t' p(t') V(play(s + t) with t' drawn)

The correction at the draw is ``W(s, actual) - sum_t p(t) W(s, t)``: zero-mean given
the past for any ``W`` that is a function of the state before the draw and ``t``
(the proxy plays on the counterfactual state; the next draw enters only through its
exact expectation, never the wall's order).
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.eval.luck_features import MAX_EVENTS, NF, draw_event
from sichuan_env.agents.nn.features import AUX_SIZE
from sichuan_env.agents.nn.mlp_kernels import net_action
from sichuan_env.agents.rule_based.fused import style_action

from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER, PH_TURN
from sichuan_env.engine.step import apply

OK = 0
BAD = 1


@njit
def swap_draw(w, a: int, t: int) -> None:
    """Make the post-draw state ``w`` one where the drawer drew ``t`` instead of ``a``."""
    if t == a:
        return
    d = w.to_act
    w.hands[d, a] -= 1
    w.hands[d, t] += 1
    w.drawn_tile = t
    pos = w.tail + 1 if w.replacement else w.head - 1
    for j in range(w.head, w.tail + 1):
        if w.wall[j] == t:
            w.wall[j] = a
            break
    w.wall[pos] = t


@njit
def play_next(w, styles, rules, flags, waits, obs, mask, dist, weights, buf) -> bool:
    """Play the decision owed at ``w`` and every one after it until the next draw happened.

    ``styles[seat]`` -1: the network ``weights`` plays that seat (``buf``: its scratch).
    """
    first = True
    while w.phase != PH_OVER and (
        first or not (w.phase == PH_TURN and w.drawn and w.drawn_tile >= 0)
    ):
        first = False
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
def _event(st, work, raw_w, raw_st, probs, styles, rules, flags, waits, obs, mask, dist,
           gain, over, feats2, probs2, weights, buf) -> None:  # fmt: skip
    a = st.drawn_tile
    for t in range(27):
        if probs[t] == 0.0:
            continue
        raw_w[:] = raw_st
        w = work[0]
        swap_draw(w, a, t)
        play_next(w, styles, rules, flags, waits, obs, mask, dist, weights, buf)
        for s in range(4):
            gain[t, s] = w.scores[s] - st.scores[s]
        if w.phase == PH_OVER:
            over[t] = 1
        else:
            over[t] = 0
            draw_event(w, rules, flags, dist, feats2[t], probs2[t])


@njit
def _replay_one(states, work, i, wall, dealer, offset, log, n_log, rules, flags, waits, dist,
                styles, feats, probs, actual, gain, over, feats2, probs2, weights) -> tuple:  # fmt: skip
    deal(states, i, wall, dealer, offset, rules)
    st = states[i]
    raw_st = states[i : i + 1].view(np.uint8)
    raw_w = work.view(np.uint8)
    mask = np.zeros(88, dtype=np.int8)
    obs = np.zeros((83, 27), dtype=np.uint8)
    h = weights[0].shape[1]
    buf = (
        np.zeros((83, 27), np.uint8),
        np.zeros(88, np.int8),
        np.zeros(AUX_SIZE, np.float32),
        np.zeros(h, np.float32),
        np.zeros(h, np.float32),
        np.zeros(88, np.float32),
    )
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
            actual[e] = draw_event(st, rules, flags, dist, feats[e], probs[e])
            _event(st, work, raw_w, raw_st, probs[e], styles, rules, flags, waits, obs, mask,
                   dist, gain[e], over[e], feats2[e], probs2[e], weights, buf)  # fmt: skip
            e += 1
    if st.phase != PH_OVER:
        return BAD, e
    return OK, e


@njit(parallel=True)
def playout_events(states, work, walls, dealers, offsets, logs, n_logs, rules, flags, waits,
                   dist, styles, feats, probs, actual, gain, over, feats2, probs2, status,
                   n_events, weights) -> None:  # fmt: skip
    """Replay every hand and fill, at each draw event (no deal event here), the playouts.

    Indexed ``[i, e]``: ``feats [27, 4, NF]`` / ``probs [27]`` / ``actual`` as ``draw_event`` gives them for
    the state that happened, and for each counterfactual slot ``t``: ``gain [t, 4]`` the
    points scored while the proxy plays to the next draw, ``over [t]`` the hand ended
    on the way, ``feats2 [t, 27, 4, NF]`` / ``probs2 [t, 27]`` the next draw's slots.
    ``styles int64[H, 4]``: the proxy policy of each hand's seats (-1: the network
    ``weights``, ``numba_policy.export``).
    """
    for i in numba.prange(walls.shape[0]):
        status[i], n_events[i] = _replay_one(
            states, work[i : i + 1], i, walls[i], dealers[i], offsets[i], logs[i], n_logs[i],
            rules, flags, waits, dist, styles[i], feats[i], probs[i], actual[i], gain[i], over[i],
            feats2[i], probs2[i], weights,
        )  # fmt: skip


def empty(h: int) -> dict[str, np.ndarray]:
    """The output arrays of ``playout_events`` for ``h`` hands."""
    e = MAX_EVENTS
    return {
        "feats": np.zeros((h, e, 27, 4, NF), np.float32),
        "probs": np.zeros((h, e, 27), np.float32),
        "actual": np.zeros((h, e), np.int64),
        "gain": np.zeros((h, e, 27, 4), np.float64),
        "over": np.zeros((h, e, 27), np.int8),
        "feats2": np.zeros((h, e, 27, 27, 4, NF), np.float32),
        "probs2": np.zeros((h, e, 27, 27), np.float32),
        "status": np.zeros(h, np.int64),
        "n_events": np.zeros(h, np.int64),
    }
