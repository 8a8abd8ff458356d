"""The state of one hand as plain data: ``STATE_DTYPE``, one numpy record per hand.

A batch of hands is simply an array of records. Seats are absolute (0..3);
the encoders make them relative. Every field is documented below; the engine
kernels (``engine/core.py``, ``legal.py``, ``step.py``) are the only writers.

Invariant (``engine/invariants.py``): each of the 108 tiles is in exactly one
of the undrawn wall (``wall[head..tail]``), a concealed hand, a meld, or a
river entry that no meld took (``river_flag`` 0, ``WON_ON`` or ``ROBBED``);
scores sum to zero.
"""

from __future__ import annotations

import numpy as np

MAX_RIVER = 64
"""River slots per seat (a seat discards at most once per draw or claim)."""
MAX_LOG = 640
"""Decisions a hand can take (exchange picks, voids, turns, claim answers)."""

# phase: what kind of decision the seat ``to_act`` owes
PH_EXCHANGE = 0  # 换三张: pick three tiles of one suit, one pick at a time
PH_VOID = 1  # 定缺: declare a void suit
PH_TURN = 2  # own turn: hu / concealed or added kong / discard
PH_CLAIM = 3  # claim window on a discard: hu / pong / kong / pass
PH_ROB = 4  # robbing window on an added kong: hu / pass
PH_OVER = 5  # the hand is over

# river_flag values
RIVER_LIVE = 0  # still in the river
RIVER_MELDED = 1  # taken by a pong or direct kong (the tile is in that meld)
RIVER_WON_ON = 2  # won on by one or more players (stays here for tile accounting)
RIVER_ROBBED = 3  # an added-kong tile robbed by one or more players

# end reasons
END_NONE = 0
END_THREE_WON = 1  # three players have won
END_WALL = 2  # a draw was due with the wall empty (流局 settlement if >= 2 active)
END_FIRST_WIN = 3  # end_on_first_win and a win happened

STATE_DTYPE = np.dtype(
    [
        # --- the deal ---
        ("wall", np.uint8, 108),  # tile ids in draw order (docs/rules.md §10)
        ("head", np.int16),  # next normal draw: wall[head]
        ("tail", np.int16),  # next kong replacement: wall[tail]; wall empty when head > tail
        ("dealer", np.int8),  # seat that dealt (acts first with 14 tiles)
        ("exchange_offset", np.int8),  # 换三张: seat s passes to (s + offset) % 4; 0 when off
        # --- whose decision ---
        ("phase", np.int8),  # PH_*
        ("to_act", np.int8),  # seat that owes the next decision (-1 when over)
        # --- tiles ---
        ("hands", np.uint8, (4, 27)),  # concealed counts per seat
        ("melds", np.int8, (4, 4, 2)),  # per seat up to 4 melds (kind MELD_*, tile); kind 0 = none
        ("n_melds", np.int8, 4),  # melds per seat
        ("river", np.int8, (4, MAX_RIVER)),  # discards per seat in order (tile ids)
        ("river_flag", np.int8, (4, MAX_RIVER)),  # RIVER_* per discard
        ("river_tsumo", np.int8, (4, MAX_RIVER)),  # 1: 摸切, the tile drawn this turn was discarded
        ("river_by", np.int8, (4, MAX_RIVER)),  # seats (bit s) that took the discard: pong/kong/hu
        ("meld_turn", np.int16, (4, 4)),  # ``turn`` when each meld was made
        ("n_river", np.int16, 4),  # discards per seat
        # --- 换三张 and 定缺 ---
        ("picks", np.int8, (4, 3)),  # tiles each seat picked to pass (-1 = not yet)
        ("n_picks", np.int8, 4),  # picks made per seat
        ("void", np.int8, 4),  # declared void suit per seat, -1 before declaring
        ("n_declared", np.int8),  # seats that have finished the current setup phase
        # --- wins (each seat wins at most once) ---
        ("won", np.int8, 4),  # 0 = active, k = won in the k-th win event
        ("n_won", np.int8),  # players who have won
        ("n_win_events", np.int8),  # win events (several winners on one discard = one event)
        ("win_order", np.int8, 4),  # seats in the order their wins were recorded (-1 = none)
        ("win_tile", np.int8, 4),  # winning tile per seat (-1 for 天胡 / no win)
        ("win_from", np.int8, 4),  # paying discarder or konger, -1 for a self-draw
        ("win_fan", np.int8, 4),
        ("win_base", np.int8, 4),  # BASE_NAMES index
        ("win_roots", np.int8, 4),
        ("win_extras", np.uint8, 4),  # EXTRA_NAMES bit set
        ("win_points", np.int64, 4),  # base_points * 2 ** (fan - 1)
        # --- points ---
        ("scores", np.int64, 4),  # net points per seat (sum 0)
        ("kong_paid", np.int64, (4, 4)),  # [konger, payer]: kong payments still refundable (退税)
        ("last_kong_seat", np.int8),  # konger of the most recent kong (-1 none)
        ("last_kong_from", np.int8),  # discarder who gave that kong's tile (direct kong), else -1
        ("last_kong_pay", np.int64, 4),  # what each seat paid for the most recent kong
        ("settle_pig", np.int8, 4),  # 流局: 1 = flower pig
        ("settle_tenpai", np.int8, 4),  # 流局: 1 = tenpai (有叫)
        ("settle_delta", np.int64, 4),  # 流局: net points of the draw settlement
        # --- the current turn ---
        (
            "drawn",
            np.int8,
        ),  # 1 when the turn began with a draw (self-draw hu allowed), 0 after a pong
        (
            "drawn_tile",
            np.int8,
        ),  # the tile drawn this turn (-1 for the dealer's first turn, after a pong)
        ("replacement", np.int8),  # 1 when that draw was a kong replacement (杠上花 context)
        ("heavenly", np.int8),  # 1 during the dealer's very first decision of play (天胡)
        (
            "earthly",
            np.int8,
        ),  # 1 when this turn's draw is a non-dealer's first, nothing claimed yet
        ("draws", np.int16, 4),  # draws per seat (head or tail)
        ("turn", np.int16),  # own turns begun in the hand (1 = the dealer's first)
        ("claimed", np.int8),  # 1 once any pong, kong (robbed or not) or win happened (地胡)
        (
            "passed_fan",
            np.int8,
            4,
        ),  # 过胡: highest declined fan since the seat's last draw (-1 none)
        # --- claim / robbing window ---
        ("claim_tile", np.int8),  # the discard or added-kong tile
        ("claim_from", np.int8),  # discarder or konger
        (
            "claim_after_kong",
            np.int8,
        ),  # 1 when the discard follows the discarder's replacement draw
        ("claim_last", np.int8),  # 1 when the discard was made with the wall empty (海底炮)
        ("claim_seats", np.int8, 3),  # seats asked, in turn order from claim_from
        ("claim_opts", np.int8, 3),  # their options: bit 0 hu, 1 pong, 2 kong (fixed at opening)
        ("claim_fan", np.int8, 3),  # fan of the win each could make (-1 none)
        ("claim_ans", np.int8, 3),  # answers so far (action ids, -1 = not yet)
        ("n_claim", np.int8),  # seats asked
        ("claim_pos", np.int8),  # index of the seat answering now
        # --- bookkeeping ---
        ("end_reason", np.int8),  # END_*
        ("next_dealer", np.int8),  # docs/rules.md §8 (-1 while the hand runs)
        ("n_log", np.int16),  # decisions taken
        ("log", np.int16, MAX_LOG),  # seat * 128 + action id per decision
    ]
)
