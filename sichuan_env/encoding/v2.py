"""Observation version 2: v1 plus what reading opponents' hands needs (numba writers).

v2 is a superset of v1: rows 0–82 are exactly v1 (``encoding/v1.py``), so a
reader of v1 features can take ``obs[:83]``. The rows after them give each
seat's whole discard sequence in order, 摸切 (the tile just drawn, discarded)
against 手切 (from the hand), who took each discard, the order and turn of
each meld, and the turn number. Every entry is 0 or 1; ``@rel`` blocks repeat
for me, next (下家), opposite, previous, as in v1.

| block | rows | meaning |
| --- | --- | --- |
| (v1) | 83 | the v1 observation, rows 0–82 |
| river@rel | 24 x 4 | the seat's k-th discard (k = 0..23, in order), one-hot tile; later discards not shown |
| river_tsumo@rel | 1 x 4 | column k: the k-th discard was 摸切 (the tile drawn that turn); 0 = 手切 |
| river_taken@rel | 4 x 4 | row (seat, q): column k: the seat's k-th discard was taken (pong, kong or hu) by relative seat q (0 me, 1 next, 2 opposite, 3 previous) |
| meld_order@rel | 4 x 4 | the seat's j-th meld (j = 0..3, in the order made), one-hot tile |
| meld_turn@rel | 4 x 4 | the seat's j-th meld: the turn it was made, columns < ceil(turn / 3) |
| turn | 1 | turns begun in the hand so far, columns < ceil(turn / 3) |

A "turn" is one seat's own turn (after a draw or a pong); the dealer's first
is turn 1. 摸切 is read on tile types: discarding the type just drawn counts
as 摸切. The oracle view appends the same rows as v1's (``hands@rel``, then
``wall_order``), after the v2 rows.
"""

from __future__ import annotations

import numba

from .._jit import njit
from .registry import ObsVersion, register
from .v1 import BLOCKS as V1_BLOCKS
from .v1 import ORACLE_BLOCKS, encode_v1, write_oracle

RIVER_SLOTS = 24
"""Discards shown per seat."""

BLOCKS = (
    *V1_BLOCKS,
    ("river@rel", RIVER_SLOTS * 4),
    ("river_tsumo@rel", 4),
    ("river_taken@rel", 16),
    ("meld_order@rel", 16),
    ("meld_turn@rel", 16),
    ("turn", 1),
)
"""v2 row blocks, in order (v1's first)."""


def _offsets() -> dict[str, int]:
    out, row = {}, 0
    for name, n in BLOCKS + ORACLE_BLOCKS:
        out[name] = row
        row += n
    return out


_V2 = _offsets()
V1_ROWS = _V2["river@rel"]
RIVER = _V2["river@rel"]
RIVER_TSUMO = _V2["river_tsumo@rel"]
RIVER_TAKEN = _V2["river_taken@rel"]
MELD_ORDER = _V2["meld_order@rel"]
MELD_TURN = _V2["meld_turn@rel"]
TURN = _V2["turn"]
ORACLE_HANDS = _V2["hands@rel"]
WALL_ORDER = _V2["wall_order"]


@njit
def _turn_row(out, row: int, turn: int) -> None:
    for k in range(min(27, (turn + 2) // 3)):
        out[row, k] = 1


@njit
def encode_v2(st, me: int, oracle: bool, rules, out) -> None:
    """Write seat ``me``'s v2 observation of record ``st`` into ``out`` (``uint8[rows, 27]``)."""
    out[:] = 0
    encode_v1(st, me, False, rules, out[:V1_ROWS])
    for r in range(4):
        s = (me + r) % 4
        for k in range(min(st.n_river[s], RIVER_SLOTS)):
            out[RIVER + RIVER_SLOTS * r + k, st.river[s, k]] = 1
            if st.river_tsumo[s, k]:
                out[RIVER_TSUMO + r, k] = 1
            by = st.river_by[s, k]
            for q in range(4):
                if (by >> ((me + q) % 4)) & 1:
                    out[RIVER_TAKEN + 4 * r + q, k] = 1
        for j in range(st.n_melds[s]):
            out[MELD_ORDER + 4 * r + j, st.melds[s, j, 1]] = 1
            _turn_row(out, MELD_TURN + 4 * r + j, st.meld_turn[s, j])
    _turn_row(out, TURN, st.turn)
    if oracle:
        write_oracle(st, me, out, ORACLE_HANDS)


@njit
def encode_at(states, i: int, me: int, oracle: bool, rules, out) -> None:
    """``encode_v2`` of ``states[i]``."""
    encode_v2(states[i], me, oracle, rules, out)


@njit(parallel=True)
def encode_batch(states, seats, oracle: bool, rules, obs) -> None:
    """Every hand's v2 observation for its seat to act (``seats[i]``), parallel over hands."""
    for i in numba.prange(states.shape[0]):
        seats[i] = states[i].to_act
        encode_v2(states[i], states[i].to_act, oracle, rules, obs[i])


@njit(parallel=True)
def encode_rows(states, idx, seats, oracle: bool, rules, out) -> None:
    """Seat ``seats[j]``'s v2 observation of ``states[idx[j]]`` into ``out[j]``, parallel."""
    for j in numba.prange(idx.shape[0]):
        encode_v2(states[idx[j]], seats[j], oracle, rules, out[j])


register(
    ObsVersion(
        2,
        blocks=BLOCKS,
        oracle_blocks=ORACLE_BLOCKS,
        encode_at=encode_at,
        encode_batch=encode_batch,
        doc=__doc__ or "",
        encode_rows=encode_rows,
    )
)
