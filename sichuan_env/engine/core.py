"""The rules of a hand as numba transitions on one ``STATE_DTYPE`` record (RULES.md §3-§8).

Every function takes the record ``st`` (``states[i]`` inside numba, so writes
land in the array), the packed rules (``RuleConfig.as_array()`` layout) and
the hand tables (``FLAGS`` for win shapes, ``WAITS`` for 查大叫). These are the
only writers of the state; ``step.py`` validates decisions and dispatches here.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.fan import best_wait, score
from ..kernels.layout import (
    BONUS_BASE,
    CTX_AFTER_KONG,
    CTX_EARTHLY,
    CTX_HEAVENLY,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROBBING_KONG,
    CTX_SELF_DRAW,
    KFD_DISCARDER,
    MELD_CONCEALED_KONG,
    MELD_KONG,
    MELD_PONG,
    R_ADDED_KONG_PAYS,
    R_BASE_POINTS,
    R_CONCEALED_KONG_PAYS,
    R_DECLARE_VOID,
    R_DIRECT_KONG_PAYS,
    R_END_ON_FIRST_WIN,
    R_FLOWER_PIG_PAYS,
    R_KONG_FLOWER_DIRECT_PAYS,
    R_MUST_WIN_LAST_FOUR,
    R_PASS_WIN_RULE,
    R_SELF_DRAW_BONUS,
)
from .actions import HU, KONG, PONG
from .state import (
    END_FIRST_WIN,
    END_THREE_WON,
    END_WALL,
    PH_CLAIM,
    PH_OVER,
    PH_ROB,
    PH_TURN,
    PH_VOID,
    RIVER_MELDED,
    RIVER_ROBBED,
    RIVER_WON_ON,
)

OPT_HU = 1
OPT_PONG = 2
OPT_KONG = 4
OPT_FORCED = 8  # 最后四张: the win must be taken (no pass)


@njit
def tiles_left(st) -> int:
    """Tiles still in the wall."""
    return np.int64(st.tail) - np.int64(st.head) + 1


@njit
def void_of(st, seat: int, rules: np.ndarray) -> int:
    """The seat's void suit when 定缺 is played, else -1."""
    return np.int64(st.void[seat]) if rules[R_DECLARE_VOID] else -1


@njit
def next_active(st, seat: int) -> int:
    """The next seat after ``seat`` in turn order that has not won (-1 if none)."""
    for k in range(1, 5):
        s = (seat + k) % 4
        if st.won[s] == 0:
            return s
    return -1


@njit
def pay(st, frm: int, to: int, amount: int) -> None:
    """Move points between seats."""
    st.scores[frm] -= amount
    st.scores[to] += amount


@njit
def win_score(st, seat: int, tile: int, ctx: int, rules: np.ndarray, flags: np.ndarray) -> tuple:
    """``(fan, base, roots, extras)`` if ``seat`` wins with ``tile`` added (-1: as held)."""
    h = st.hands[seat]
    if tile >= 0:
        if h[tile] >= 4:
            return -1, -1, 0, 0
        h[tile] += 1
    result = score(h, st.melds[seat], st.n_melds[seat], void_of(st, seat, rules), ctx, rules, flags)
    if tile >= 0:
        h[tile] -= 1
    return result


@njit
def offered_win(st, seat: int, tile: int, ctx: int, rules, flags) -> int:
    """Fan of the win ``seat`` may claim on another's ``tile``, or -1 (not legal, or 过胡-blocked).

    A declined win blocks wins on others' tiles worth no more fan until the
    seat's next draw (RULES.md §4.4, §10.1.1).
    """
    fan, _, _, _ = win_score(st, seat, tile, ctx, rules, flags)
    if fan < 0:
        return -1
    if rules[R_PASS_WIN_RULE] and st.passed_fan[seat] >= 0 and fan <= st.passed_fan[seat]:
        return -1
    return fan


@njit
def _record_win(st, seat, tile, frm, fan, base, roots, extras, rules) -> int:
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
def end_hand(st, reason: int) -> None:
    """Close the hand and fix the next dealer (RULES.md §8)."""
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
def _after_win(st, last_winner: int, rules: np.ndarray, flags, waits) -> None:
    """End the hand or give the next turn after a win event."""
    st.claimed = 1
    if rules[R_END_ON_FIRST_WIN]:
        end_hand(st, END_FIRST_WIN)
    elif st.n_won >= 3:
        end_hand(st, END_THREE_WON)
    else:
        begin_turn(st, next_active(st, last_winner), 0, rules, flags, waits)


@njit
def settle_draw(st, rules: np.ndarray, flags: np.ndarray, waits: np.ndarray) -> None:
    """流局 settlement among the players still active (RULES.md §7.3)."""
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
        h = st.hands[s]
        if rules[R_DECLARE_VOID]:
            v = st.void[s]
            pig = h[9 * v : 9 * v + 9].sum() > 0
        else:
            suits = 0
            for t in range(27):
                if h[t]:
                    suits |= 1 << (t // 9)
            for j in range(st.n_melds[s]):
                suits |= 1 << (st.melds[s, j, 1] // 9)
            pig = suits == 7
        st.settle_pig[s] = pig
        fan, _, _, _ = best_wait(
            h, st.melds[s], st.n_melds[s], void_of(st, s, rules), rules, flags, waits
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


@njit
def begin_turn(st, seat: int, replacement: int, rules, flags, waits) -> None:
    """``seat`` draws (from the tail for a kong replacement) and owes a turn decision.

    With the wall empty the hand ends instead (流局).
    """
    if tiles_left(st) <= 0:
        if not rules[R_END_ON_FIRST_WIN] or st.n_won == 0:
            settle_draw(st, rules, flags, waits)
        end_hand(st, END_WALL)
        return
    if replacement:
        t = st.wall[st.tail]
        st.tail -= 1
    else:
        t = st.wall[st.head]
        st.head += 1
    st.hands[seat, t] += 1
    st.draws[seat] += 1
    st.drawn_tile = t
    st.passed_fan[seat] = -1  # 过胡 ends at one's next draw of any kind
    st.drawn = 1
    st.replacement = replacement
    st.heavenly = 0
    st.earthly = seat != st.dealer and st.draws[seat] == 1 and not replacement and not st.claimed
    st.phase = PH_TURN
    st.to_act = seat


@njit
def start_play(st) -> None:
    """The dealer's first turn: 14 tiles, no draw (天胡 possible)."""
    st.phase = PH_TURN
    st.to_act = st.dealer
    st.drawn = 1
    st.drawn_tile = -1
    st.replacement = 0
    st.heavenly = 1
    st.earthly = 0


@njit
def apply_exchange(st, rules) -> None:
    """换三张: every seat's three picks go to ``(seat + offset) % 4``; then 定缺 or play."""
    for s in range(4):
        r = (s + st.exchange_offset) % 4
        for k in range(3):
            st.hands[r, st.picks[s, k]] += 1
    st.n_declared = 0
    if rules[R_DECLARE_VOID]:
        st.phase = PH_VOID
        st.to_act = st.dealer
    else:
        start_play(st)


@njit
def kong_payment(st, konger: int, kind: int, giver: int, rules) -> None:
    """刮风下雨: pay for a kong now and remember it for 呼叫转移 and 退税 (RULES.md §7.2)."""
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
def self_draw_win(st, seat: int, rules, flags, waits) -> None:
    """自摸 (and 天胡/地胡/杠上花): score, collect, continue (RULES.md §7.1)."""
    ctx = CTX_SELF_DRAW
    if st.replacement:
        ctx |= CTX_AFTER_KONG
    if st.heavenly:
        ctx |= CTX_HEAVENLY
    if st.earthly:
        ctx |= CTX_EARTHLY
    if tiles_left(st) == 0:
        ctx |= CTX_LAST_TILE
    fan, base, roots, extras = win_score(st, seat, -1, ctx, rules, flags)
    st.n_win_events += 1
    tile = -1 if st.heavenly else st.drawn_tile
    pts = _record_win(st, seat, tile, -1, fan, base, roots, extras, rules)
    share = pts + (rules[R_BASE_POINTS] if rules[R_SELF_DRAW_BONUS] == BONUS_BASE else 0)
    giver = st.last_kong_from
    if (
        st.replacement
        and rules[R_KONG_FLOWER_DIRECT_PAYS] == KFD_DISCARDER
        and st.last_kong_seat == seat
        and giver >= 0
    ):
        pay(st, giver, seat, share)  # 点杠花: the kong's discarder pays alone
    else:
        for p in range(4):
            if p != seat and st.won[p] == 0:
                pay(st, p, seat, share)
    st.heavenly = 0
    _after_win(st, seat, rules, flags, waits)


@njit
def open_claims(st, discarder: int, tile: int, rules, flags, waits) -> None:
    """Open the claim window on a discard, or pass the turn on if nobody can claim."""
    left = tiles_left(st)
    st.claim_tile = tile
    st.claim_from = discarder
    st.claim_after_kong = st.replacement
    st.claim_last = left <= 0
    forced = rules[R_MUST_WIN_LAST_FOUR] and left <= 4
    ctx = 0
    if st.claim_after_kong:
        ctx |= CTX_KONG_DISCARD
    if st.claim_last:
        ctx |= CTX_LAST_TILE
    n = 0
    for k in range(1, 4):
        s = (discarder + k) % 4
        if st.won[s]:
            continue
        opts = 0
        fan = offered_win(st, s, tile, ctx, rules, flags)
        if fan >= 0:
            opts |= OPT_HU
        if left > 0 and tile // 9 != void_of(st, s, rules):
            if st.hands[s, tile] >= 2:
                opts |= OPT_PONG
            if st.hands[s, tile] == 3:
                opts |= OPT_KONG
        if forced and opts & OPT_HU:
            opts = OPT_HU | OPT_FORCED
        if opts:
            st.claim_seats[n] = s
            st.claim_opts[n] = opts
            st.claim_fan[n] = fan if opts & OPT_HU else -1
            st.claim_ans[n] = -1
            n += 1
    st.n_claim = n
    st.claim_pos = 0
    if n == 0:
        begin_turn(st, next_active(st, discarder), 0, rules, flags, waits)
    else:
        st.phase = PH_CLAIM
        st.to_act = st.claim_seats[0]


@njit
def discard(st, seat: int, tile: int, rules, flags, waits) -> None:
    """Discard a tile into the river and open the claim window."""
    st.hands[seat, tile] -= 1
    k = st.n_river[seat]
    st.river[seat, k] = tile
    st.river_flag[seat, k] = 0
    st.n_river[seat] = k + 1
    st.heavenly = 0
    open_claims(st, seat, tile, rules, flags, waits)


@njit
def _farthest(st, origin: int, action: int) -> int:
    best = -1
    best_d = -1
    for i in range(st.n_claim):
        if st.claim_ans[i] == action:
            d = (st.claim_seats[i] - origin) % 4
            if d > best_d:
                best_d = d
                best = st.claim_seats[i]
    return best


@njit
def _claim_wins(st, origin: int, tile: int, ctx: int, transfer: int, rules, flags) -> None:
    """One win event: every seat that answered hu wins on ``tile``.

    ``origin`` (the discarder or konger) pays each winner the win's points plus ``transfer``.
    """
    st.n_win_events += 1
    for i in range(st.n_claim):
        if st.claim_ans[i] != HU:
            continue
        w = st.claim_seats[i]
        fan, base, roots, extras = win_score(st, w, tile, ctx, rules, flags)
        pts = _record_win(st, w, tile, origin, fan, base, roots, extras, rules)
        pay(st, origin, w, pts + transfer)


@njit
def _discard_wins(st, rules, flags, waits) -> None:
    """一炮多响: every seat that answered hu wins on the discard (RULES.md §4.2, §7.1)."""
    d = st.claim_from
    t = st.claim_tile
    ctx = 0
    if st.claim_after_kong:
        ctx |= CTX_KONG_DISCARD
    if st.claim_last:
        ctx |= CTX_LAST_TILE
    transfer = 0
    if st.claim_after_kong and st.last_kong_seat == d:
        for p in range(4):
            transfer += st.last_kong_pay[p]
    _claim_wins(st, d, t, ctx, transfer, rules, flags)  # 呼叫转移: each gets the whole income
    if transfer:
        for p in range(4):  # a transferred kong is not refunded again (退税)
            st.kong_paid[d, p] = max(0, st.kong_paid[d, p] - st.last_kong_pay[p])
    st.river_flag[d, st.n_river[d] - 1] = RIVER_WON_ON
    _after_win(st, _farthest(st, d, HU), rules, flags, waits)


@njit
def _complete_added_kong(st, konger: int, tile: int, rules, flags, waits) -> None:
    for j in range(st.n_melds[konger]):
        if st.melds[konger, j, 0] == MELD_PONG and st.melds[konger, j, 1] == tile:
            st.melds[konger, j, 0] = MELD_KONG
    st.hands[konger, tile] -= 1
    kong_payment(st, konger, MELD_KONG, -1, rules)
    begin_turn(st, konger, 1, rules, flags, waits)


@njit
def _rob_wins(st, rules, flags, waits) -> None:
    """抢杠胡: the robbers win on the added-kong tile; the konger pays as the discarder."""
    k = st.claim_from
    t = st.claim_tile
    st.hands[k, t] -= 1  # the tile leaves the konger for the robbers; the pong stays
    n = st.n_river[k]
    st.river[k, n] = t
    st.river_flag[k, n] = RIVER_ROBBED
    st.n_river[k] = n + 1
    _claim_wins(st, k, t, CTX_ROBBING_KONG, 0, rules, flags)
    _after_win(st, _farthest(st, k, HU), rules, flags, waits)


@njit
def self_kong(st, seat: int, tile: int, rules, flags, waits) -> None:
    """暗杠 (four in hand) or 加杠 (on an own pong; opens the robbing window)."""
    st.heavenly = 0
    st.claimed = 1  # a kong, robbed or not, ends 地胡 chances
    if st.hands[seat, tile] == 4:
        st.hands[seat, tile] -= 4
        j = st.n_melds[seat]
        st.melds[seat, j, 0] = MELD_CONCEALED_KONG
        st.melds[seat, j, 1] = tile
        st.n_melds[seat] = j + 1
        kong_payment(st, seat, MELD_CONCEALED_KONG, -1, rules)
        begin_turn(st, seat, 1, rules, flags, waits)
        return
    # 加杠: who may rob it (RULES.md §4.3)
    left = tiles_left(st)
    forced = rules[R_MUST_WIN_LAST_FOUR] and left <= 4
    st.claim_tile = tile
    st.claim_from = seat
    st.claim_after_kong = 0
    st.claim_last = 0
    n = 0
    for k in range(1, 4):
        s = (seat + k) % 4
        if st.won[s]:
            continue
        fan = offered_win(st, s, tile, CTX_ROBBING_KONG, rules, flags)
        if fan >= 0:
            st.claim_seats[n] = s
            st.claim_opts[n] = OPT_HU | (OPT_FORCED if forced else 0)
            st.claim_fan[n] = fan
            st.claim_ans[n] = -1
            n += 1
    st.n_claim = n
    st.claim_pos = 0
    if n == 0:
        _complete_added_kong(st, seat, tile, rules, flags, waits)
    else:
        st.phase = PH_ROB
        st.to_act = st.claim_seats[0]


@njit
def answer(st, action: int, rules, flags, waits) -> None:
    """One seat's answer in a claim or robbing window; resolves after the last one."""
    i = st.claim_pos
    s = st.claim_seats[i]
    st.claim_ans[i] = action
    if st.claim_opts[i] & OPT_HU and action != HU and rules[R_PASS_WIN_RULE]:
        st.passed_fan[s] = max(st.passed_fan[s], st.claim_fan[i])  # 过胡
    st.claim_pos = i + 1
    if i + 1 < st.n_claim:
        st.to_act = st.claim_seats[i + 1]
        return
    any_hu = False
    taker = -1
    taken = -1
    for j in range(st.n_claim):
        a = st.claim_ans[j]
        if a == HU:
            any_hu = True
        elif a == PONG or a == KONG:
            taker = st.claim_seats[j]
            taken = a
    if st.phase == PH_ROB:
        if any_hu:
            _rob_wins(st, rules, flags, waits)
        else:
            _complete_added_kong(st, st.claim_from, st.claim_tile, rules, flags, waits)
        return
    d = st.claim_from
    t = st.claim_tile
    if any_hu:
        _discard_wins(st, rules, flags, waits)
    elif taker >= 0:
        st.claimed = 1
        st.river_flag[d, st.n_river[d] - 1] = RIVER_MELDED
        j = st.n_melds[taker]
        st.melds[taker, j, 1] = t
        st.n_melds[taker] = j + 1
        if taken == PONG:
            st.hands[taker, t] -= 2
            st.melds[taker, j, 0] = MELD_PONG
            st.phase = PH_TURN
            st.to_act = taker
            st.drawn = 0
            st.drawn_tile = -1
            st.replacement = 0
            st.heavenly = 0
            st.earthly = 0
        else:
            st.hands[taker, t] -= 3
            st.melds[taker, j, 0] = MELD_KONG
            kong_payment(st, taker, MELD_KONG, d, rules)
            begin_turn(st, taker, 1, rules, flags, waits)
    else:
        begin_turn(st, next_active(st, d), 0, rules, flags, waits)
