"""Kernels of the policy-aware belief filter (numba): a forced replay of a wall, and its labels.

A *particle* is a whole wall (108 tiles in draw order). The observer's own
tiles (its deal and draws) and the tiles revealed by 摸切 discards and
self-draw wins sit at fixed positions; every other position may hold any of
the remaining tiles. ``replay`` deals that wall with the engine and replays
the public history up to the observer's current decision:

- the observer takes its own past actions (it knows them);
- every opponent decision is computed by the heuristic (``sichuan_env.agents.rule_based.heuristic
  .decide`` on the engine's own v1 observation and legal mask) and compared
  with what the public events say it did; the public action is applied;
- an action the engine does not allow, a 摸切/手切 flag that differs, a public
  event left over, or an observer observation (v2) that differs from the
  real one makes the wall infeasible.

The energy of a wall is ``BIG`` plus the events not yet consumed when it is
infeasible, else the number of opponent decisions where the heuristic would
have acted otherwise. Walls of energy 0 are exactly those consistent with
everything public and with heuristic opponents; ``research.hand_reading.filter_moves
.chain`` samples them uniformly after an annealed burn-in, and averages the
engine's exact labels (``engine.labels.opponent_labels``, ``_labels``) of the
replayed state over the samples. ``resume`` continues a replay from a saved
engine state, so a wall that differs only from some draw on is replayed from
there.
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.rule_based.heuristic import decide

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.encoding.v2 import encode_v2
from sichuan_env.engine.actions import DISCARD, HU, KONG, PASS, PONG, SELF_KONG, VOID
from sichuan_env.engine.deal import deal
from sichuan_env.engine.labels import opponent_labels
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import MAX_LOG, PH_CLAIM, PH_OVER, PH_ROB, PH_TURN, PH_VOID
from sichuan_env.engine.step import apply
from sichuan_env.kernels.layout import MELD_PONG

# public event kinds (columns of an event row: kind, absolute seat, tile, 摸切 flag)
EV_DRAW = 0
EV_DISCARD = 1
EV_PONG = 2
EV_KONG = 3
EV_ADDED = 4
EV_CONCEALED = 5
EV_HU_SELF = 6
EV_HU_ON = 7
EV_END = 8

BIG = 1000
"""Energy floor of an infeasible wall (plus the public events it failed to reach)."""
FREE = -2
"""``_turn_action``: the public history says nothing yet about this turn."""


@njit
def _skip_draws(ev, n_ev: int, c: int) -> int:
    while c < n_ev and ev[c, 0] == EV_DRAW:
        c += 1
    return c


@njit
def _has_pong(st, s: int, t: int) -> bool:
    for j in range(st.n_melds[s]):
        if st.melds[s, j, 0] == MELD_PONG and st.melds[s, j, 1] == t:
            return True
    return False


@njit
def _turn_action(st, s: int, ev, n_ev: int, c: int) -> tuple:
    """``(action, events used)`` the public history shows for seat ``s``'s turn (``c`` past draws).

    ``(FREE, 0)`` when the history ends here, ``(-1, 0)`` when it contradicts the turn.
    """
    if c >= n_ev:
        return FREE, 0
    kind, seat, t = ev[c, 0], ev[c, 1], ev[c, 2]
    if seat == s:
        if kind == EV_DISCARD:
            return DISCARD + t, 1
        if kind == EV_ADDED or kind == EV_CONCEALED:
            return SELF_KONG + t, 1
        if kind == EV_HU_SELF:
            return HU, 1
        return -1, 0
    if kind == EV_HU_ON and _has_pong(st, s, t):  # an added kong robbed: no kong token
        return SELF_KONG + t, 0
    return -1, 0


@njit
def _outcome_len(ev, n_ev: int, c: int, tile: int) -> int:
    """Events at ``c`` that are the claims (wins, pong, kong) on the window's ``tile``."""
    j = c
    while j < n_ev and ev[j, 2] == tile:
        k = ev[j, 0]
        if k != EV_HU_ON and k != EV_PONG and k != EV_KONG:
            break
        j += 1
    return j - c


@njit
def _window_answer(s: int, h: int, tile: int, ev, n_ev: int, c: int) -> tuple:
    """``(answer, mismatch)`` of opponent ``s`` in the open window; ``h`` is the heuristic's."""
    if c >= n_ev:  # the window is still open in the public history
        return h, 0
    any_hu = False
    for j in range(c, c + _outcome_len(ev, n_ev, c, tile)):
        kind = ev[j, 0]
        if ev[j, 1] == s:
            a = HU if kind == EV_HU_ON else (PONG if kind == EV_PONG else KONG)
            return a, np.int64(h != a)
        if kind == EV_HU_ON:
            any_hu = True
    if any_hu:  # someone won: a pong answer is hidden, a win would have shown
        if h == HU:
            return PASS, 1
        return h, 0
    return PASS, np.int64(h != PASS)


@njit
def replay(
    states, wall, dealer: int, rules, flags, waits, dist, me: int,
    ev, n_ev: int, voids, own, n_own: int, target, obs1, obs2, mask, fail,
) -> int:  # fmt: skip
    """Energy of ``wall`` (module docstring); leaves the replayed state in ``states[0]``.

    ``fail`` (``int64[3]``) gets ``(seat, tile, event index)`` of the first opponent
    action the wall could not make, or the first opponent it does not explain (tile
    -1); -1 otherwise. ``chain`` uses it for targeted repairs.
    """
    deal(states, 0, wall, dealer, 0, rules)
    fail[0] = -1
    fail[1] = -1
    fail[2] = n_ev
    return resume(states, rules, flags, waits, dist, me, ev, n_ev, voids, own, n_own, target,
                  obs1, obs2, mask, fail, 0, 0, 0, BIG, -1, states, fail)  # fmt: skip


@njit
def resume(
    states, rules, flags, waits, dist, me: int, ev, n_ev: int, voids, own, n_own: int,
    target, obs1, obs2, mask, fail, c: int, k: int, mism: int, cap: int, rec: int, ck, ckv,
) -> int:  # fmt: skip
    """``replay`` from the replayed state in ``states[0]`` (``c`` events, ``k`` own actions used).

    Stops early with ``mism`` once more than ``cap`` opponent decisions differ (a
    lower bound on the energy). With ``rec`` a wall position, the state and
    ``(c, k, mism, *fail)`` (``ckv``, ``int64[6]``) are copied into ``ck[0]`` at
    every decision taken before that position is drawn: the last copy is where a
    wall differing only at ``rec`` and at undrawn positions can be replayed from.
    """
    st = states[0]
    for _ in range(MAX_LOG):
        if rec >= 0 and st.head <= rec <= st.tail:
            ck[0] = states[0]
            ckv[0], ckv[1], ckv[2] = c, k, mism
            ckv[3], ckv[4], ckv[5] = fail[0], fail[1], fail[2]
        ph = st.phase
        if ph == PH_OVER:
            return BIG + n_ev - c
        s = st.to_act
        legal_mask(st, rules, flags, mask)
        window = ph == PH_CLAIM or ph == PH_ROB
        last = window and st.claim_pos == st.n_claim - 1
        tile = st.claim_tile
        used = 0
        if s == me:
            if k == n_own:
                break
            a = own[k]
            k += 1
            if ph == PH_TURN:
                c = _skip_draws(ev, n_ev, c)
                f, used = _turn_action(st, s, ev, n_ev, c)
                if f != a:
                    return BIG + n_ev - c
        else:
            encode_v1(st, s, False, rules, obs1)
            h = decide(obs1, mask, dist)
            if ph == PH_VOID:
                a = h if voids[s] < 0 else VOID + voids[s]
                mism += a != h
            elif ph == PH_TURN:
                c = _skip_draws(ev, n_ev, c)
                a, used = _turn_action(st, s, ev, n_ev, c)
                if a == FREE:  # only an added kong whose robbing window I am in is hidden
                    if h < SELF_KONG or h >= PONG or not _has_pong(st, s, h - SELF_KONG):
                        return BIG + n_ev - c
                    a = h
                elif a < 0:
                    return BIG + n_ev - c
                mism += a != h
            else:
                a, m = _window_answer(s, h, tile, ev, n_ev, c)
                mism += m
            if mism > 0 and fail[0] < 0:
                fail[0] = s  # the first opponent the wall does not explain
                fail[2] = c
            if a < 0 or not mask[a]:
                if a >= 0:
                    fail[0] = s
                    fail[2] = c
                    fail[1] = (a - DISCARD) if a < DISCARD + 27 else tile
                    if SELF_KONG <= a < PONG:
                        fail[1] = a - SELF_KONG
                return BIG + n_ev - c
            if mism > cap:
                return mism
        if a < 0 or not mask[a]:
            return BIG + n_ev - c
        n_river = st.n_river[s]
        apply(st, a, rules, flags, waits)
        c += used
        discarded = ph == PH_TURN and DISCARD <= a < DISCARD + 27
        if discarded and st.river_tsumo[s, n_river] != ev[c - 1, 3]:
            if s != me:
                fail[0] = s
                fail[1] = a - DISCARD
                fail[2] = c
            return BIG + n_ev - c
        if last:
            c += _outcome_len(ev, n_ev, c, tile)
    else:
        return BIG + n_ev - c
    c = _skip_draws(ev, n_ev, c)
    if c < n_ev:
        return BIG + n_ev - c
    encode_v2(st, me, False, rules, obs2)
    for i in range(target.shape[0]):
        for t in range(27):
            if obs2[i, t] != target[i, t]:
                return BIG
    return mism


@njit
def _labels(st, me: int, rules, flags, dist, lab, cur) -> None:
    """The replayed state's exact labels into ``cur``: tenpai[3], waits[3, 27], held[3, 27], deal-in[27]."""
    tenpai, waits_, shan, hand, deal_in, active = lab
    opponent_labels(st, me, rules, flags, dist, tenpai, waits_, shan, hand, deal_in, active)
    for r in range(3):
        cur[r, 27] = tenpai[r]
        for t in range(27):
            cur[r, t] = waits_[r, t]
            cur[3 + r, t] = hand[r, t] > 0
    for t in range(27):
        cur[6, t] = deal_in[0, t] > 0 or deal_in[1, t] > 0 or deal_in[2, t] > 0
