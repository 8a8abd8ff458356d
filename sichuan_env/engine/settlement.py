"""Who pays whom (numba): wins, kongs, the exhaustive-draw settlement and the end (docs/rules.md §7-§8).

Every payment of a hand goes through ``pay``; the engine's ledger of what a
kong earned (``kong_paid``, for 退税 and 呼叫转移) is kept here too.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.fan import best_wait
from ..kernels.layout import (
    BONUS_BASE,
    KFD_DISCARDER,
    MELD_CONCEALED_KONG,
    MELD_KONG,
    R_ADDED_KONG_PAYS,
    R_BASE_POINTS,
    R_CONCEALED_KONG_PAYS,
    R_DECLARE_VOID,
    R_DIRECT_KONG_PAYS,
    R_FLOWER_PIG_PAYS,
    R_KONG_FLOWER_DIRECT_PAYS,
    R_SELF_DRAW_BONUS,
)
from .core import void_of
from .state import PH_OVER


@njit
def pay(st, frm: int, to: int, amount: int) -> None:
    """Move points between seats."""
    st.scores[frm] -= amount
    st.scores[to] += amount


@njit
def record_win(st, seat, tile, frm, fan, base, roots, extras, rules) -> int:
    """Write one win into the record; return its points (``base_points * 2 ** (fan - 1)``)."""
    st.won[seat] = st.n_win_events
    st.win_order[st.n_won] = seat
    st.n_won += 1
    st.win_tile[seat] = tile
    st.win_from[seat] = frm
    st.win_fan[seat] = fan
    st.win_base[seat] = base
    st.win_roots[seat] = roots
    st.win_extras[seat] = extras
    pts = rules[R_BASE_POINTS] << (fan - 1)
    st.win_points[seat] = pts
    return pts


@njit
def pay_self_draw(st, seat: int, pts: int, rules) -> None:
    """自摸: every active seat pays (点杠花: the kong's discarder alone, when the rules say so)."""
    share = pts + (rules[R_BASE_POINTS] if rules[R_SELF_DRAW_BONUS] == BONUS_BASE else 0)
    giver = st.last_kong_from
    if (
        st.replacement
        and rules[R_KONG_FLOWER_DIRECT_PAYS] == KFD_DISCARDER
        and st.last_kong_seat == seat
        and giver >= 0
    ):
        pay(st, giver, seat, share)
    else:
        for p in range(4):
            if p != seat and st.won[p] == 0:
                pay(st, p, seat, share)


@njit
def kong_transfer(st, discarder: int) -> int:
    """呼叫转移: the income of the discarder's own latest kong when its discard is won on, else 0."""
    transfer = 0
    if st.claim_after_kong and st.last_kong_seat == discarder:
        for p in range(4):
            transfer += st.last_kong_pay[p]
    return transfer


@njit
def drop_transferred_kong(st, discarder: int) -> None:
    """A kong income handed on by 呼叫转移 is not refunded again (退税)."""
    for p in range(4):
        st.kong_paid[discarder, p] = max(0, st.kong_paid[discarder, p] - st.last_kong_pay[p])


@njit
def kong_payment(st, konger: int, kind: int, giver: int, rules) -> None:
    """刮风下雨: pay for a kong now and remember it for 呼叫转移 and 退税 (docs/rules.md §7.2)."""
    base = rules[R_BASE_POINTS]
    for p in range(4):
        st.last_kong_pay[p] = 0
    if kind == MELD_KONG and giver >= 0:  # direct kong: the discarder pays
        amount = rules[R_DIRECT_KONG_PAYS] * base
        pay(st, giver, konger, amount)
        st.last_kong_pay[giver] = amount
        st.kong_paid[konger, giver] += amount
    else:
        per = rules[R_CONCEALED_KONG_PAYS if kind == MELD_CONCEALED_KONG else R_ADDED_KONG_PAYS]
        for p in range(4):
            if p != konger and st.won[p] == 0:
                amount = per * base
                pay(st, p, konger, amount)
                st.last_kong_pay[p] = amount
                st.kong_paid[konger, p] += amount
    st.last_kong_seat = konger
    st.last_kong_from = giver if kind == MELD_KONG else -1


@njit
def end_hand(st, reason: int) -> None:
    """Close the hand and fix the next dealer (docs/rules.md §8)."""
    st.phase = PH_OVER
    st.to_act = -1
    st.end_reason = reason
    if st.n_won == 0:
        st.next_dealer = st.dealer
        return
    first = st.win_order[0]
    multi = st.n_won > 1 and st.won[st.win_order[1]] == 1
    st.next_dealer = st.win_from[first] if multi else first


@njit
def _is_flower_pig(st, s: int, rules) -> bool:
    h = st.hands[s]
    if rules[R_DECLARE_VOID]:
        v = st.void[s]
        return h[9 * v : 9 * v + 9].sum() > 0
    suits = 0
    for t in range(27):
        if h[t]:
            suits |= 1 << (t // 9)
    for j in range(st.n_melds[s]):
        suits |= 1 << (st.melds[s, j, 1] // 9)
    return suits == 7


@njit
def settle_draw(st, rules: np.ndarray, flags: np.ndarray, waits: np.ndarray) -> None:
    """流局 settlement among the players still active (docs/rules.md §7.3)."""
    before = st.scores.copy()
    active = np.zeros(4, dtype=np.bool_)
    n_active = 0
    for s in range(4):
        if st.won[s] == 0:
            active[s] = True
            n_active += 1
    if n_active < 2:
        return
    base = rules[R_BASE_POINTS]
    tenpai_pts = np.zeros(4, dtype=np.int64)
    for s in range(4):
        if not active[s]:
            continue
        pig = _is_flower_pig(st, s, rules)
        st.settle_pig[s] = pig
        fan, _, _, _ = best_wait(
            st.hands[s], st.melds[s], st.n_melds[s], void_of(st, s, rules), rules, flags, waits
        )
        if fan >= 0 and not pig:
            st.settle_tenpai[s] = 1
            tenpai_pts[s] = base << (fan - 1)
    # 1. 查花猪
    for s in range(4):
        if active[s] and st.settle_pig[s]:
            for o in range(4):
                if o != s and active[o] and not st.settle_pig[o]:
                    pay(st, s, o, rules[R_FLOWER_PIG_PAYS] * base)
    # 2. 查大叫
    for s in range(4):
        if active[s] and not st.settle_pig[s] and not st.settle_tenpai[s]:
            for o in range(4):
                if active[o] and st.settle_tenpai[o]:
                    pay(st, s, o, tenpai_pts[o])
    # 3. 退税: non-tenpai players (pigs included) return their kong income
    for s in range(4):
        if active[s] and not st.settle_tenpai[s]:
            for p in range(4):
                amount = st.kong_paid[s, p]
                if amount:
                    pay(st, s, p, amount)
                    st.kong_paid[s, p] = 0
    for s in range(4):
        st.settle_delta[s] = st.scores[s] - before[s]
