"""Replaying a hand's log for its chance events (numba): ``replay_events``.

Each hand is dealt from its wall and replayed decision by decision; at the deal
and after every draw from the wall the features of ``luck_features`` are taken
(``deal_event``, ``draw_event``), with the points so far.
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.eval.luck_features import MAX_EVENTS, deal_event, draw_event

from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER, PH_TURN
from sichuan_env.engine.step import apply
from sichuan_env.kernels.layout import MELD_PONG

# replay_events status codes (per hand)
OK = 0
BAD_ACTION = 1  # an action of the log is not legal where it stands
NOT_OVER = 2  # the log ends before the hand does
TOO_MANY = 3  # more events than MAX_EVENTS (cannot happen for a legal hand)


@njit
def table_planes(st, tiles, wallc, voids) -> None:
    """The whole table as tile counts.

    Writes ``tiles uint8[4, 3, 27]`` (per seat: concealed, melded, discarded), ``wallc
    uint8[27]`` (the undrawn wall's composition, not its order) and ``voids int8[4]``
    (declared void suit, -1 before declaring).
    """
    tiles[:] = 0
    wallc[:] = 0
    for k in range(4):
        for t in range(27):
            tiles[k, 0, t] = st.hands[k, t]
        for m in range(st.n_melds[k]):
            tiles[k, 1, st.melds[k, m, 1]] += 3 if st.melds[k, m, 0] == MELD_PONG else 4
        for j in range(st.n_river[k]):
            tiles[k, 2, st.river[k, j]] += 1
        voids[k] = st.void[k]
    for j in range(st.head, st.tail + 1):
        wallc[st.wall[j]] += 1


@njit
def _replay_one(
    states,
    i: int,
    wall,
    dealer,
    offset,
    log,
    n_log,
    rules,
    flags,
    waits,
    dist,
    feats,
    probs,
    actual,
    drawer,
    scores_at,
    final,
    tiles,
    wallc,
    voids,
) -> tuple:
    """Replay hand ``i`` in ``states[i]``; returns ``(status, events)``. Event 0 is the deal."""
    deal(states, i, wall, dealer, offset, rules)
    st = states[i]
    mask = np.zeros(88, dtype=np.int8)
    deal_event(st, rules, flags, dist, feats[0, 0])
    table_planes(st, tiles[0], wallc[0], voids[0])
    probs[0, :] = 0.0
    probs[0, 0] = 1.0
    actual[0] = 0
    drawer[0] = -1
    for s in range(4):
        scores_at[0, s] = 0
    e = 1
    for j in range(n_log):
        if st.phase == PH_OVER:
            return BAD_ACTION, e
        seat = log[j] // 128
        a = log[j] % 128
        legal_mask(st, rules, flags, mask)
        if seat != st.to_act or a >= 88 or mask[a] == 0:
            return BAD_ACTION, e
        before = 0
        for s in range(4):
            before += st.draws[s]
        apply(st, a, rules, flags, waits)
        after = 0
        for s in range(4):
            after += st.draws[s]
        if after > before and st.phase == PH_TURN and st.drawn:
            if e >= MAX_EVENTS:
                return TOO_MANY, e
            actual[e] = draw_event(st, rules, flags, dist, feats[e], probs[e])
            table_planes(st, tiles[e], wallc[e], voids[e])
            drawer[e] = st.to_act
            for s in range(4):
                scores_at[e, s] = st.scores[s]
            e += 1
    if st.phase != PH_OVER:
        return NOT_OVER, e
    for s in range(4):
        final[s] = st.scores[s]
    return OK, e


@njit(parallel=True)
def replay_events(
    states,
    walls,
    dealers,
    offsets,
    logs,
    n_logs,
    rules,
    flags,
    waits,
    dist,
    feats,
    probs,
    actual,
    drawer,
    scores_at,
    final,
    status,
    n_events,
    tiles,
    wallc,
    voids,
) -> None:
    """``_replay_one`` for every hand ``i`` (its wall, dealer, 换三张 offset and decision log).

    Output arrays are indexed ``[i, event, ...]``: ``feats float32[H, MAX_EVENTS, 27, 4, NF]``,
    ``probs float32[H, MAX_EVENTS, 27]``, ``actual int64[H, MAX_EVENTS]`` (the slot that
    happened), ``drawer`` (-1 for the deal), ``scores_at int64[H, MAX_EVENTS, 4]`` (points
    so far), ``final int64[H, 4]``, ``status`` (``OK`` ...), ``n_events`` and the whole
    table of each event's state as it happened (``table_planes``): ``tiles uint8[H,
    MAX_EVENTS, 4, 3, 27]``, ``wallc uint8[H, MAX_EVENTS, 27]``, ``voids int8[H, MAX_EVENTS, 4]``.
    """
    for i in numba.prange(walls.shape[0]):
        status[i], n_events[i] = _replay_one(
            states, i, walls[i], dealers[i], offsets[i], logs[i], n_logs[i], rules, flags, waits,
            dist, feats[i], probs[i], actual[i], drawer[i], scores_at[i], final[i], tiles[i],
            wallc[i], voids[i],
        )  # fmt: skip


@njit(parallel=True)
def state_rows(
    states, rules, flags, dist, feats, probs, tiles, wallc, voids, drawn, drawer, ok
) -> None:
    """Each post-draw state's features (all 27 draws), probabilities and planes.

    For ``table_states.state_values``; ``ok[i]`` is 0 for a state not right after a draw.
    """
    for i in numba.prange(states.shape[0]):
        st = states[i]
        if st.phase != PH_TURN or not st.drawn or st.drawn_tile < 0:
            ok[i] = 0
            continue
        ok[i] = 1
        drawn[i] = draw_event(st, rules, flags, dist, feats[i], probs[i])  # leaves st as it was
        drawer[i] = st.to_act
        table_planes(st, tiles[i], wallc[i], voids[i])
