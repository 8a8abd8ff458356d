"""Observation version 1: seat-relative planes over the 27 tile types (numba writers).

An observation is ``uint8[rows, 27]``, every entry 0 or 1. Blocks marked
``@rel`` have one group per relative seat: 0 = me, 1 = next (下家),
2 = opposite, 3 = previous. The v1 layout below is a contract: never edit
it: a new feature is a new version (``registry.register``).

v1 rows (``BLOCKS``, 83 rows):

| block | rows | meaning |
| --- | --- | --- |
| hand | 4 | own concealed tiles, thermometer: count >= 1, 2, 3, 4 |
| melds@rel | 3 x 4 | pong / exposed kong / concealed kong, one-hot tile |
| discards@rel | 4 x 4 | how many of each tile the seat discarded (>= 1..4), any fate |
| recent@rel | 4 x 4 | the seat's 4 latest discards, latest first, one-hot |
| void@rel | 1 x 4 | the declared void suit's 9 columns; others' hidden until all declared |
| won@rel | 2 x 4 | all ones once the seat has won; its winning tile one-hot |
| win_from@rel | 1 x 4 | who paid: column = relative seat of the payer, column 4 = self-draw |
| visible | 4 | tiles I can see (my hand, all melds, all discards): >= 1..4 |
| claim | 1 | the discard or added-kong tile I may claim or rob, one-hot |
| phase | 1 | columns 0..5: exchange, void, turn, claim, rob, over |
| drawn | 1 | the tile I just drew, one-hot |
| picks | 1 | the tiles I picked for 换三张 (before the exchange) |
| wall | 1 | tiles left in the wall: columns < ceil(left / 2) set |
| dealer | 1 | column = relative seat of the dealer |
| scores@rel | 2 x 4 | points, log scale: ``bit_length(|points| / base)`` columns set, plus / minus rows |
| exchange | 1 | column = the 换三张 offset (1, 2, 3) once the exchange happened |

The oracle view (``oracle=True``) appends what the seat cannot see:
``hands@rel`` for the other three seats (3 x 4 thermometer rows, next, opposite,
previous) and the remaining wall in draw order (55 rows, one-hot tile per
wall slot from ``head``; kong replacements come from the last rows).
"""

from __future__ import annotations

import numba
import numpy as np

from .._jit import njit
from ..engine.state import PH_CLAIM, PH_EXCHANGE, PH_ROB, PH_TURN, PH_VOID, RIVER_MELDED
from ..kernels.layout import MELD_CONCEALED_KONG, MELD_KONG, MELD_PONG, R_BASE_POINTS
from .registry import ObsVersion, register

BLOCKS = (
    ("hand", 4),
    ("melds@rel", 12),
    ("discards@rel", 16),
    ("recent@rel", 16),
    ("void@rel", 4),
    ("won@rel", 8),
    ("win_from@rel", 4),
    ("visible", 4),
    ("claim", 1),
    ("phase", 1),
    ("drawn", 1),
    ("picks", 1),
    ("wall", 1),
    ("dealer", 1),
    ("scores@rel", 8),
    ("exchange", 1),
)
"""v1 row blocks, in order."""
ORACLE_BLOCKS = (("hands@rel", 12), ("wall_order", 55))
"""Rows the oracle view appends."""


def _offsets() -> dict[str, int]:
    out, row = {}, 0
    for name, n in BLOCKS + ORACLE_BLOCKS:
        out[name] = row
        row += n
    return out


_V1 = _offsets()
HAND = _V1["hand"]
MELDS = _V1["melds@rel"]
DISCARDS = _V1["discards@rel"]
RECENT = _V1["recent@rel"]
VOIDS = _V1["void@rel"]
WON = _V1["won@rel"]
WIN_FROM = _V1["win_from@rel"]
VISIBLE = _V1["visible"]
CLAIM = _V1["claim"]
PHASE = _V1["phase"]
DRAWN = _V1["drawn"]
PICKS = _V1["picks"]
WALL = _V1["wall"]
DEALER = _V1["dealer"]
SCORES = _V1["scores@rel"]
EXCHANGE = _V1["exchange"]
ORACLE_HANDS = _V1["hands@rel"]
WALL_ORDER = _V1["wall_order"]


@njit
def _therm(out, row: int, counts_row: np.ndarray) -> None:
    for t in range(27):
        c = counts_row[t]
        for k in range(4):
            out[row + k, t] = 1 if c > k else 0


@njit
def encode_v1(st, me: int, oracle: bool, rules, out) -> None:
    """Write seat ``me``'s v1 observation of record ``st`` into ``out`` (``uint8[rows, 27]``)."""
    out[:] = 0
    _therm(out, HAND, st.hands[me])
    visible = np.zeros(27, dtype=np.int64)
    for t in range(27):
        visible[t] = st.hands[me, t]
    voids_public = st.phase != PH_VOID and st.phase != PH_EXCHANGE
    base = rules[R_BASE_POINTS]
    cnt = np.zeros(27, dtype=np.int64)
    for r in range(4):
        s = (me + r) % 4
        for j in range(st.n_melds[s]):
            kind = st.melds[s, j, 0]
            t = st.melds[s, j, 1]
            if kind == MELD_PONG:
                out[MELDS + 3 * r, t] = 1
                visible[t] += 3
            elif kind == MELD_KONG:
                out[MELDS + 3 * r + 1, t] = 1
                visible[t] += 4
            elif kind == MELD_CONCEALED_KONG:
                out[MELDS + 3 * r + 2, t] = 1
                visible[t] += 4
        n = st.n_river[s]
        cnt[:] = 0
        for k in range(n):
            t = st.river[s, k]
            cnt[t] += 1
            if st.river_flag[s, k] != RIVER_MELDED:  # a melded tile is counted in its meld
                visible[t] += 1
        for t in range(27):
            for k in range(4):
                if cnt[t] > k:
                    out[DISCARDS + 4 * r + k, t] = 1
        for k in range(4):
            if n - 1 - k >= 0:
                out[RECENT + 4 * r + k, st.river[s, n - 1 - k]] = 1
        v = st.void[s]
        if v >= 0 and (r == 0 or voids_public):
            for q in range(9):
                out[VOIDS + r, 9 * v + q] = 1
        if st.won[s]:
            for t in range(27):
                out[WON + 2 * r, t] = 1
            if st.win_tile[s] >= 0:
                out[WON + 2 * r + 1, st.win_tile[s]] = 1
            f = st.win_from[s]
            out[WIN_FROM + r, 4 if f < 0 else (f - me) % 4] = 1
        p = st.scores[s]
        mag = abs(p) // base
        bits = 0
        while mag > 0 and bits < 27:
            bits += 1
            mag >>= 1
        row = SCORES + 2 * r + (0 if p >= 0 else 1)
        for k in range(bits):
            out[row, k] = 1
    for t in range(27):
        for k in range(4):
            out[VISIBLE + k, t] = 1 if visible[t] > k else 0
    if (st.phase == PH_CLAIM or st.phase == PH_ROB) and st.to_act == me:
        out[CLAIM, st.claim_tile] = 1
    out[PHASE, st.phase] = 1
    if st.phase == PH_TURN and st.to_act == me and st.drawn_tile >= 0:
        out[DRAWN, st.drawn_tile] = 1
    if st.phase == PH_EXCHANGE:
        for k in range(st.n_picks[me]):
            out[PICKS, st.picks[me, k]] = 1
    left = int(st.tail) - int(st.head) + 1
    for k in range(min(27, (max(left, 0) + 1) // 2)):
        out[WALL, k] = 1
    out[DEALER, (st.dealer - me) % 4] = 1
    if st.exchange_offset > 0 and st.phase != PH_EXCHANGE:
        out[EXCHANGE, st.exchange_offset] = 1
    if oracle:
        write_oracle(st, me, out, ORACLE_HANDS)


@njit
def write_oracle(st, me: int, out, row: int) -> None:
    """Write the oracle rows from ``row`` on (v1's layout; v2 appends the same rows).

    The other seats' hands (next, opposite, previous; count >= 1..4), then the
    remaining wall in draw order (55 rows, one tile per row).
    """
    for r in range(1, 4):
        _therm(out, row + 4 * (r - 1), st.hands[(me + r) % 4])
    left = int(st.tail) - int(st.head) + 1
    for k in range(min(55, max(left, 0))):
        out[row + 12 + k, st.wall[st.head + k]] = 1


@njit
def encode_at(states, i: int, me: int, oracle: bool, rules, out) -> None:
    """``encode_v1`` of ``states[i]`` (faster to call from Python than with a record)."""
    encode_v1(states[i], me, oracle, rules, out)


@njit(parallel=True)
def encode_batch(states, seats, oracle: bool, rules, obs) -> None:
    """Every hand's observation for its seat to act (``seats[i]``), parallel over hands."""
    for i in numba.prange(states.shape[0]):
        seats[i] = states[i].to_act
        encode_v1(states[i], states[i].to_act, oracle, rules, obs[i])


@njit(parallel=True)
def encode_rows(states, idx, seats, oracle: bool, rules, out) -> None:
    """Seat ``seats[j]``'s v1 observation of ``states[idx[j]]`` into ``out[j]``, parallel."""
    for j in numba.prange(idx.shape[0]):
        encode_v1(states[idx[j]], seats[j], oracle, rules, out[j])


register(
    ObsVersion(
        1,
        blocks=BLOCKS,
        oracle_blocks=ORACLE_BLOCKS,
        encode_at=encode_at,
        encode_batch=encode_batch,
        doc=__doc__ or "",
        encode_rows=encode_rows,
    )
)
