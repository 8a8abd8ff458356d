"""The hand reader's walk through one hand (numba): ``read_hand``.

It keeps each opponent's particles (``research.hand_reading.smc_steps``) and its
public events, updates them decision by decision, and writes the beliefs at
every decision of the observing seat. A claim window's outcome is applied
once the window is resolved, so no decision inside a window sees it.
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.rule_based.heuristic import unseen_of

from research.hand_reading.smc_kernels import (
    EV_TURN,
    EV_VOID,
    EV_WINDOW,
    outcome_of,
    predict,
    sample_hand,
    scrub,
)
from research.hand_reading.smc_steps import after_event, branch, deal, resample, window_step
from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.actions import DISCARD, SELF_KONG
from sichuan_env.engine.state import PH_CLAIM, PH_OVER, PH_ROB, PH_TURN, PH_VOID
from sichuan_env.kernels.layout import MELD_PONG


@njit
def read_hand(states, actions, n: int, me: int, p: int, seed: int, cfg, rules, flags, dist, rows,
              tenpai_out, waits_out, hand_out, deal_out, stats, lost_at, ev, un, n_ev, tmp, obs,
              mask, lab) -> None:  # fmt: skip
    """Run the filter through ``states[0..n]`` (the hand before each decision, then the end).

    ``actions[k]`` is decision ``k``'s action; only those of own turns (public) are read.
    ``cfg``: ``int64[5]`` rejuvenation moves per particle, the collapse factor (rejuvenate
    when the distinct current hands times it fall below ``p``), repair tries and budget,
    restarts (fresh particle sets run through the events when none explains one).
    Writes, for each ``rows[j]`` (decisions of ``me``, increasing; ``n`` for a pending one),
    P(tenpai), P(wait | tenpai), P(holds >= 1) per opponent and P(some opponent wins on my
    discard) per tile, and in ``lost_at[j]`` the unexplained events so far. ``stats``:
    ``int64[4]`` unexplained events, repairs, accepted moves, dropped events (too many).
    A window's outcome is used once it is resolved, never at a decision inside it. ``ev``
    (``int64[3, EV_MAX, 7]``), ``un`` (``int64[3, EV_MAX, 27]``) and ``n_ev`` (``int64[3]``)
    receive each opponent's events (``kernels.replay`` reads them).
    """
    np.random.seed(seed)  # noqa: NPY002 (numba's own generator, seeded per call)
    big = ev.shape[1]
    h0 = np.zeros((3, p, 27), dtype=np.uint8)
    hc = np.zeros((3, p, 27), dtype=np.uint8)
    dr = np.full((3, p, big), -1, dtype=np.int8)
    w = np.ones((3, p), dtype=np.float64)
    ev[:] = 0
    un[:] = 0
    n_ev[:] = 0
    c0 = np.zeros((27 * p, 27), dtype=np.uint8)
    chc = np.zeros((27 * p, 27), dtype=np.uint8)
    cdr = np.zeros((27 * p, big), dtype=np.int8)
    cw = np.zeros(27 * p, dtype=np.float64)
    ph0 = np.zeros(27, dtype=np.uint8)
    ph = np.zeros(27, dtype=np.uint8)
    pdr = np.zeros(big, dtype=np.int8)
    unseen = np.zeros(27, dtype=np.int64)
    pool0 = np.zeros(27, dtype=np.int64)
    buf = np.zeros(108, dtype=np.int64)
    acc = np.zeros((10, 28), dtype=np.float64)
    first = states[0]
    for t in range(27):
        pool0[t] = 4 - first.hands[me, t]
    for r in range(3):
        o = (me + 1 + r) % 4
        for i in range(p):
            sample_hand(pool0, 14 if o == first.dealer else 13, buf, h0[r, i])
            hc[r, i, :] = h0[r, i]
    j = 0
    pending = -1  # the decision that opened a window not yet resolved
    p_origin = p_tile = 0
    p_rob = False
    for k in range(n + 1):
        st = states[k]
        if pending >= 0 and not (st.phase == PH_CLAIM or st.phase == PH_ROB):
            a = states[pending]
            tmp[0] = st
            scrub(tmp[0], me)
            encode_v1(tmp[0], me, False, rules, obs)
            unseen_of(obs, unseen)  # what ``me`` cannot see once the window is resolved
            for r in range(3):
                o = (me + 1 + r) % 4
                if o == p_origin or a.won[o]:
                    continue
                e = n_ev[r]
                if e >= big:
                    stats[3] += 1
                    continue
                out, any_hu = outcome_of(a, st, o)
                ev[r, e, 0], ev[r, e, 1], ev[r, e, 2], ev[r, e, 3] = EV_WINDOW, pending, p_tile, out
                ev[r, e, 4], ev[r, e, 5], ev[r, e, 6] = any_hu, p_origin, p_rob
                un[r, e, :] = unseen
                n_ev[r] = e + 1
                alive = window_step(tmp, a, me, r, p_origin, p_tile, p_rob, out, any_hu, hc[r],
                                    w[r], unseen, rules, flags, dist, obs, mask)  # fmt: skip
                after_event(tmp, states, me, r, ev[r], un[r], e + 1, pool0, buf, h0[r], dr[r],
                             hc[r], w[r], alive, cfg, rules, flags, dist, obs, mask, ph0, pdr,
                             ph, c0, cdr, chc, cw, stats)  # fmt: skip
            pending = -1
        if j < rows.shape[0] and rows[j] == k:
            predict(tmp, st, me, hc, w, rules, flags, dist, lab, acc)
            for r in range(3):
                tot = acc[r, 27]
                ten = acc[3 + r, 27]
                tenpai_out[j, r] = ten / tot if tot > 0 else 0.0
                for t in range(27):
                    waits_out[j, r, t] = acc[r, t] / ten if ten > 0 else 0.0
                    hand_out[j, r, t] = acc[3 + r, t] / tot if tot > 0 else 0.0
            for t in range(27):
                deal_out[j, t] = acc[9, t]
            lost_at[j] = stats[0]
            j += 1
        if j >= rows.shape[0] or k == n or st.phase == PH_OVER:
            break
        seat = st.to_act
        action = actions[k]
        if st.phase == PH_VOID:
            nxt = states[k + 1]
            if nxt.phase != PH_VOID:  # all four have declared: the voids are public
                for r in range(3):
                    o = (me + 1 + r) % 4
                    ev[r, 0, 0], ev[r, 0, 1], ev[r, 0, 2] = EV_VOID, k + 1, nxt.void[o]
                    n_ev[r] = 1
                    stats[0] += deal(tmp, nxt, me, o, nxt.void[o], pool0, 14 if o == first.dealer
                                      else 13, buf, h0[r], dr[r], hc[r], w[r], rules, flags,
                                      dist, obs, mask)  # fmt: skip
            continue
        if st.phase != PH_TURN:
            continue  # claim and robbing windows: only their resolved outcome counts
        if seat != me and st.won[seat] == 0:  # an opponent's own turn
            r = (seat - me - 1) % 4
            e = n_ev[r]
            if e < big:
                tmp[0] = st
                scrub(tmp[0], me)
                encode_v1(tmp[0], me, False, rules, obs)
                unseen_of(obs, unseen)
                tsumo = False
                if DISCARD <= action < DISCARD + 27:
                    nr = states[k + 1].n_river[seat]
                    tsumo = states[k + 1].river_tsumo[seat, nr - 1] != 0
                ev[r, e, 0], ev[r, e, 1], ev[r, e, 2] = EV_TURN, k, action
                ev[r, e, 3], ev[r, e, 4] = tsumo, st.drawn_tile >= 0  # that it drew is public
                un[r, e, :] = unseen
                n_ev[r] = e + 1
                m = branch(tmp, st, me, r, e, ev[r], unseen, h0[r], dr[r], hc[r], w[r], c0, cdr,
                            chc, cw, rules, flags, dist, obs, mask)  # fmt: skip
                if m > 0:
                    resample(c0, cdr, chc, cw, m, h0[r], dr[r], hc[r], w[r])
                after_event(tmp, states, me, r, ev[r], un[r], e + 1, pool0, buf, h0[r], dr[r],
                             hc[r], w[r], m, cfg, rules, flags, dist, obs, mask, ph0, pdr, ph,
                             c0, cdr, chc, cw, stats)  # fmt: skip
            else:
                stats[3] += 1
        if DISCARD <= action < DISCARD + 27:
            pending, p_origin, p_tile, p_rob = k, seat, action - DISCARD, False
        elif SELF_KONG <= action < SELF_KONG + 27:
            t = action - SELF_KONG
            for q in range(st.n_melds[seat]):
                if st.melds[seat, q, 0] == MELD_PONG and st.melds[seat, q, 1] == t:
                    pending, p_origin, p_tile, p_rob = k, seat, t, True
