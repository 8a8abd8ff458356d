"""Shared numba helpers of the rules: wall, void, turn order, what a win is worth (docs/rules.md §4-§6).

Every engine function takes the record ``st`` (``states[i]`` inside numba, so
writes land in the array), the packed rules (``RuleConfig.as_array()``
layout) and the hand tables (``FLAGS`` for win shapes, ``WAITS`` for 查大叫).
The engine modules build on each other in one direction:

``core`` → ``settlement`` (payments, 流局, the end) → ``turn`` (draws, self-draw
wins, the exchange) → ``claims`` (discards, kongs and the claim and robbing
windows they open) → ``legal`` (the legal mask) → ``step`` (one decision).
``deal`` starts a hand.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..kernels.fan import held_copies, score
from ..kernels.layout import (
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROBBING_KONG,
    R_DECLARE_VOID,
    R_PASS_WIN_RULE,
)
from .state import PH_ROB

# Claim options of a seat in a window (``claim_opts``), fixed when the window opens.
OPT_HU = 1
OPT_PONG = 2
OPT_KONG = 4
OPT_FORCED = 8  # 最后四张: the win must be taken (no pass)


@njit
def tiles_left(st) -> int:
    """Tiles still in the wall."""
    return int(st.tail) - int(st.head) + 1


@njit
def void_of(st, seat: int, rules: np.ndarray) -> int:
    """The seat's void suit when 定缺 is played, else -1."""
    return int(st.void[seat]) if rules[R_DECLARE_VOID] else -1


@njit
def next_active(st, seat: int) -> int:
    """The next seat after ``seat`` in turn order that has not won (-1 if none)."""
    for k in range(1, 5):
        s = (seat + k) % 4
        if st.won[s] == 0:
            return s
    return -1


@njit
def win_score(st, seat: int, tile: int, ctx: int, rules: np.ndarray, flags: np.ndarray) -> tuple:
    """``(fan, base, roots, extras)`` if ``seat`` wins with ``tile`` added (-1: as held).

    A ``tile`` the seat already holds 4 times (hand and melds) is no win (docs/rules.md §5).
    """
    h = st.hands[seat]
    if tile >= 0:
        if held_copies(h, st.melds[seat], st.n_melds[seat], tile) >= 4:
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
    seat's next draw (docs/rules.md §4.4, §10.1.1).
    """
    fan, _, _, _ = win_score(st, seat, tile, ctx, rules, flags)
    if fan < 0:
        return -1
    if rules[R_PASS_WIN_RULE] and st.passed_fan[seat] >= 0 and fan <= st.passed_fan[seat]:
        return -1
    return fan


@njit
def window_ctx(st) -> int:
    """Win context of the open window's tile: 抢杠 when robbing, else 杠上炮 / 海底 of the discard."""
    if st.phase == PH_ROB:
        return CTX_ROBBING_KONG
    ctx = 0
    if st.claim_after_kong:
        ctx |= CTX_KONG_DISCARD
    if st.claim_last:
        ctx |= CTX_LAST_TILE
    return ctx
