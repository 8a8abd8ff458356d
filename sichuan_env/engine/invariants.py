"""``check_invariants``: what must hold after every transition of a hand.

Tile conservation (each of the 108 tiles is in exactly one place), hand
sizes, scores summing to zero, meld and window consistency. Pure numpy over
one ``STATE_DTYPE`` record; tests call it after every step of random hands.
Given a ``Game`` (or the rules), every recorded win is also checked: the
winner's tiles are a legal win under the rules (``rules.scoring.score_win``,
an independent entry point of the hand core) and its points are
``base_points * 2 ** (fan - 1)`` within the cap.
"""

from __future__ import annotations

import numpy as np

from ..kernels.layout import BASE_NAMES, MELD_CONCEALED_KONG, MELD_KONG, MELD_PONG
from ..rules.config import MAX_FAN, RuleConfig
from ..rules.scoring import score_win
from .state import (
    PH_CLAIM,
    PH_EXCHANGE,
    PH_OVER,
    PH_ROB,
    PH_TURN,
    PH_VOID,
    RIVER_MELDED,
    STATE_DTYPE,
)


class InvariantError(AssertionError):
    """A hand record broke an invariant (a bug in the engine, never the caller's fault)."""


def _fail(msg: str) -> None:
    raise InvariantError(msg)


def tile_census(st: np.void) -> np.ndarray:
    """Where the tiles are, counted per tile type: must be 4 each."""
    counts = np.zeros(27, dtype=np.int64)
    head, tail = int(st["head"]), int(st["tail"])
    if head <= tail:
        counts += np.bincount(st["wall"][head : tail + 1], minlength=27)
    counts += st["hands"].astype(np.int64).sum(axis=0)
    for seat in range(4):
        for j in range(int(st["n_melds"][seat])):
            kind, tile = st["melds"][seat, j]
            counts[tile] += 3 if kind == MELD_PONG else 4
        n = int(st["n_river"][seat])
        for k in range(n):
            if st["river_flag"][seat, k] != RIVER_MELDED:
                counts[st["river"][seat, k]] += 1
        if st["phase"] == PH_EXCHANGE:
            for k in range(int(st["n_picks"][seat])):
                counts[st["picks"][seat, k]] += 1
    return counts


def check_invariants(st: object, rules: RuleConfig | None = None) -> None:
    """Raise ``InvariantError`` if the record is inconsistent.

    Args:
        st: one record of ``STATE_DTYPE`` (e.g. ``states[i]``), or a ``Game``
            (anything with a ``state`` record and ``rules``).
        rules: the hand's rules, to check its wins too (a ``Game`` brings its own).

    Raises:
        TypeError: ``st`` is neither, or ``rules`` is not a ``RuleConfig``.
        InvariantError: naming the first broken invariant.
    """
    if not isinstance(st, np.void) and hasattr(st, "state"):
        rules = getattr(st, "rules", None) if rules is None else rules
        st = st.state
    if rules is not None and not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if not isinstance(st, np.void) or st.dtype != STATE_DTYPE:
        raise TypeError(
            f"check_invariants takes a STATE_DTYPE record or a Game, got {type(st).__name__}"
        )
    census = tile_census(st)
    if not np.all(census == 4):
        bad = {int(t): int(c) for t, c in enumerate(census) if c != 4}
        _fail(f"tile conservation broken (tile: copies) {bad}")
    if int(st["scores"].sum()) != 0:
        _fail(f"scores do not sum to zero: {st['scores'].tolist()}")
    if st["hands"].max() > 4:
        _fail("a concealed count exceeds 4")
    phase = int(st["phase"])
    to_act = int(st["to_act"])
    n_won = int((st["won"] > 0).sum())
    if n_won != int(st["n_won"]) or n_won > 3:
        _fail(f"won flags {st['won'].tolist()} disagree with n_won {int(st['n_won'])}")
    if phase != PH_OVER and (to_act < 0 or st["won"][to_act]):
        _fail(f"seat to act {to_act} is not an active player")
    if np.any(st["kong_paid"] < 0):
        _fail("negative refundable kong payment")
    for seat in range(4):
        size = int(st["hands"][seat].sum()) + 3 * int(st["n_melds"][seat])
        if phase == PH_EXCHANGE:
            size += int(st["n_picks"][seat])
        if st["won"][seat]:
            want = 14 if st["win_from"][seat] < 0 else 13  # a discard win keeps 13
        elif phase in (PH_EXCHANGE, PH_VOID) and seat == st["dealer"]:
            want = 14  # the dealer's 14th tile, before play
        elif phase == PH_TURN and seat == to_act:
            want = 14
        elif phase == PH_ROB and seat == st["claim_from"]:
            want = 14  # the added-kong tile is still in the konger's hand
        else:
            want = 13
        if size != want:
            _fail(f"seat {seat} holds {size} tiles (with melds) in phase {phase}, want {want}")
        v = int(st["void"][seat])
        for j in range(int(st["n_melds"][seat])):
            if v >= 0 and st["melds"][seat, j, 1] // 9 == v:
                _fail(f"seat {seat} has a meld of its void suit")
    if phase in (PH_CLAIM, PH_ROB):
        pos = int(st["claim_pos"])
        if not 0 <= pos < int(st["n_claim"]) or st["claim_seats"][pos] != to_act:
            _fail("claim window out of step with the seat to act")
    if rules is not None:
        _check_wins(st, rules)


_MELD_SPEC = {MELD_PONG: "pong", MELD_KONG: "kong", MELD_CONCEALED_KONG: "concealed_kong"}


def _check_wins(st: np.void, rules: RuleConfig) -> None:
    """Every win is a legal win of the winner's tiles, paid ``base_points * 2 ** (fan - 1)``."""
    for seat in range(4):
        if not st["won"][seat]:
            continue
        fan = int(st["win_fan"][seat])
        cap = rules.fan_cap
        if not 1 <= fan <= (MAX_FAN if cap is None else cap) or not 0 <= st["win_base"][seat] < len(
            BASE_NAMES
        ):
            _fail(f"seat {seat}'s win has fan {fan} (cap {cap}), base {int(st['win_base'][seat])}")
        if int(st["win_points"][seat]) != rules.base_points << (fan - 1):
            _fail(
                f"seat {seat}'s win pays {int(st['win_points'][seat])}, not base_points * 2^(fan-1)"
            )
        concealed = st["hands"][seat].astype(np.uint8)
        tile = int(st["win_tile"][seat])
        if st["win_from"][seat] >= 0:  # won on another's tile: it is not in the hand
            concealed[tile] += 1
        melds = [
            (_MELD_SPEC[int(k)], int(t)) for k, t in st["melds"][seat][: int(st["n_melds"][seat])]
        ]
        void = int(st["void"][seat]) if rules.declare_void else None
        try:
            legal = score_win(concealed, melds, void=void, rules=rules) is not None
        except ValueError as exc:
            _fail(f"seat {seat}'s winning hand is malformed: {exc}")
        if not legal:
            _fail(f"seat {seat} is recorded as a winner but its tiles are not a legal win")
