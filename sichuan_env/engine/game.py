"""``Game``: the typed Python facade for one hand of 血战到底.

The rules live in the numba engine (``core.py``, ``step.py``); ``Game`` holds
one state record, speaks the action strings of docs/rules.md §10, keeps the game
record, and offers read access to what each seat can see and to the whole
table. Its seed, wall, dealer and offset are checked in ``deal_args.py``::

    game = Game(seed=7)
    while not game.is_over():
        game.step(game.legal()[0])
    game.result()["scores"]
    Game.from_record(game.record())  # replays and validates every action
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np

from ..kernels.layout import MELD_CONCEALED_KONG, MELD_KONG, MELD_PONG
from ..kernels.tables import get_tables
from ..rules.config import RuleConfig, kernel_rules
from ..tiles import SUITS, tile_name, to_str
from . import deal as _deal
from . import labels as _labels
from . import records as _records
from . import step as _step
from .actions import ACTION_SPACE, SELF_KONG, action_from_str, action_to_str, as_action_id
from .deal_args import (
    deal_args,
    validate_seed,  # noqa: F401  (hosts import it from here)
)
from .errors import IllegalActionError
from .records import RECORD_FORMAT
from .state import (
    PH_CLAIM,
    PH_EXCHANGE,
    PH_OVER,
    PH_ROB,
    PH_TURN,
    PH_VOID,
    RIVER_MELDED,
    RIVER_ROBBED,
    RIVER_WON_ON,
    STATE_DTYPE,
)

PHASE_NAMES = {
    PH_EXCHANGE: "exchange",
    PH_VOID: "void",
    PH_TURN: "turn",
    PH_CLAIM: "claim",
    PH_ROB: "rob",
    PH_OVER: "over",
}
MELD_NAMES = {MELD_PONG: "pong", MELD_KONG: "kong", MELD_CONCEALED_KONG: "concealed_kong"}
RIVER_NAMES = {0: "live", RIVER_MELDED: "melded", RIVER_WON_ON: "won_on", RIVER_ROBBED: "robbed"}

_T = get_tables()


class Game:
    """One hand of 血战到底 under a ``RuleConfig``.

    Args:
        rules: the ruleset.
        seed: draws the wall, the dealer and the 换三张 direction (None: random);
            an integer in ``[0, 2**64)``.
        wall: 108 tile indices in draw order (docs/rules.md §10) instead of a seed.
        dealer: the dealer, 0..3, only with ``wall`` (default 0).
        exchange_offset: 1, 2 or 3, only with ``wall`` and 换三张 on.

    Raises:
        TypeError: an argument of the wrong type (e.g. ``seed=True``, ``dealer=1.0``).
        ValueError: a bad wall, dealer, offset or rules, or ``dealer`` / ``exchange_offset``
            given with a seed (the seed draws them).
    """

    def __init__(
        self,
        rules: RuleConfig | None = None,
        seed: int | None = None,
        *,
        wall: object = None,
        dealer: int | None = None,
        exchange_offset: int | None = None,
    ) -> None:
        rules = RuleConfig() if rules is None else rules
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        self.rules = rules
        self._r = kernel_rules(rules)
        self._st = np.zeros(1, dtype=STATE_DTYPE)
        self._scratch = np.zeros(ACTION_SPACE, dtype=np.int8)
        w, dealer, offset, self.seed = deal_args(rules, seed, wall, dealer, exchange_offset)
        _deal.deal(self._st, 0, w, dealer, offset, self._r)
        self._hist: tuple[int, list, list] | None = None  # cache of _history()
        self._mask_ok = False  # self._scratch holds the legal mask of the current decision

    # ----------------------------------------------------------------- state
    @property
    def state(self) -> np.void:
        """A read-only copy of the engine record (``STATE_DTYPE``; fields in ``engine/state.py``)."""
        snapshot = self._st.copy()
        snapshot.flags.writeable = False
        return snapshot[0]

    def state_view(self) -> np.ndarray:
        """The engine record as a read-only one-row ``STATE_DTYPE`` array, without a copy.

        A view: it follows the hand as it moves on (copy it to keep a moment). Hosts
        hand it to agents (``sichuan_env.envs.acting.ask_one``) at every decision;
        ``state`` is the slower, detached copy.
        """
        view = self._st.view()
        view.flags.writeable = False
        return view

    def to_act(self) -> int | None:
        """The seat that owes the next decision, or None when the hand is over."""
        return None if self.is_over() else int(self._st[0]["to_act"])

    def is_over(self) -> bool:
        """True once the hand has ended."""
        return int(self._st[0]["phase"]) == PH_OVER

    def phase(self) -> str:
        """``"exchange"``, ``"void"``, ``"turn"``, ``"claim"``, ``"rob"`` or ``"over"``."""
        return PHASE_NAMES[int(self._st[0]["phase"])]

    def _mask(self) -> np.ndarray:
        """The engine's own legal mask of the current decision (never handed out)."""
        if not self._mask_ok:
            _step.legal_mask_at(self._st, 0, self._r, _T["FLAGS"], self._scratch)
            self._mask_ok = True
        return self._scratch

    def legal_mask(self) -> np.ndarray:
        """``int8[88]``: 1 for each legal action id of the seat to act (a fresh copy)."""
        return self._mask().copy()

    def legal_ids(self) -> np.ndarray:
        """The legal action ids of the seat to act (see ``engine/actions.py``)."""
        return np.flatnonzero(self._mask())

    def _apply(self, action: int) -> None:
        _step.apply_at(self._st, 0, action, self._r, _T["FLAGS"], _T["WAITS"])
        self._mask_ok = False

    def legal(self) -> list[str]:
        """The legal decisions of the seat to act, in record syntax (docs/rules.md §10)."""
        st = self._st[0]
        ids = self.legal_ids()
        if int(st["phase"]) == PH_EXCHANGE:
            return self._exchange_options()
        seat = int(st["to_act"])
        out = []
        for a in ids:
            added = SELF_KONG <= a < SELF_KONG + 27 and st["hands"][seat, a - SELF_KONG] < 4
            out.append(action_to_str(int(a), added=bool(added)))
        return out

    def _exchange_options(self) -> list[str]:
        st = self._st[0]
        seat = int(st["to_act"])
        hand = st["hands"][seat]
        out: list[str] = []
        for s in range(3):
            tiles = [t for t in range(9 * s, 9 * s + 9) for _ in range(int(hand[t]))]
            combos = sorted(set(itertools.combinations(tiles, 3)))
            out.extend("exchange " + "".join(tile_name(t) for t in c) for c in combos)
        return out

    def step(self, action: str) -> None:
        """Take one decision of the seat to act, given in record syntax.

        Raises:
            IllegalActionError: malformed or illegal now (the hand is unchanged).
        """
        if self.is_over():
            raise IllegalActionError("the hand is over", [])
        legal = self.legal()
        if not isinstance(action, str) or action.strip() not in legal:
            raise IllegalActionError(f"{action!r} is not legal for seat {self.to_act()}", legal)
        for a in action_from_str(" ".join(action.split())):
            self._apply(a)

    def step_id(self, action: int) -> None:
        """Take one decision given as an action id (exchange picks one tile at a time).

        ``action`` is any integer scalar (``as_action_id``): an ``int``, a numpy
        integer or a 0-d integer array.

        Raises:
            IllegalActionError: not an integer scalar, out of range, or not legal
                now (the hand is unchanged).
        """
        if self.is_over():
            raise IllegalActionError("the hand is over", [])
        mask = self._mask()
        try:
            a = as_action_id(action)
        except (TypeError, ValueError) as e:
            raise IllegalActionError(f"seat {self.to_act()}: {e}", self._legal_id_strs()) from None
        if not mask[a]:
            raise IllegalActionError(
                f"action id {a} is not legal for seat {self.to_act()}", self._legal_id_strs()
            )
        self._apply(a)

    def _legal_id_strs(self) -> list[str]:
        return [str(int(a)) for a in np.flatnonzero(self._mask())]

    def _history(self) -> tuple[list[list[Any]], list[dict[str, Any]]]:
        """The record's actions and the payment ledger (cached until the next decision)."""
        n = int(self._st[0]["n_log"])
        if self._hist is None or self._hist[0] != n:
            self._hist = (n, *_records.history(self))
        return self._hist[1], self._hist[2]

    def opponent_labels(self, seat: int) -> dict[str, np.ndarray]:
        """Exact hidden-state labels of ``seat``'s three opponents (next, opposite, previous).

        ``tenpai`` bool[3], ``waits`` uint8[3, 27], ``shanten`` int8[3], ``hand``
        uint8[3, 27], ``deal_in`` int64[3, 27], ``active`` bool[3]; see
        ``sichuan_env.engine.labels`` for the exact definitions.
        """
        s = self._seat(seat)
        out = _labels.label_arrays()
        _labels.opponent_labels_at(
            self._st,
            0,
            s,
            self._r,
            _T["FLAGS"],
            _T["DIST"],
            *(out[k] for k in _labels.LABEL_FIELDS),
        )
        return out

    # --------------------------------------------------------------- results
    def wins(self) -> list[dict[str, Any]]:
        """Every win so far, in the order they happened (docs/rules.md §10 fields)."""
        return _records.wins(self)

    def result(self) -> dict[str, Any]:
        """Scores, wins, payment ledger and (after 流局) the draw settlement."""
        return _records.result(self, copy.deepcopy(self._history()[1]))

    def record(self) -> dict[str, Any]:
        """The complete JSON-serialisable game record (docs/rules.md §10), at any point."""
        st = self._st[0]
        return {
            "format": RECORD_FORMAT,
            "rules": self.rules.to_dict(),
            "dealer": int(st["dealer"]),
            "exchange_offset": int(st["exchange_offset"]) if self.rules.exchange_three else None,
            "wall": [int(t) for t in st["wall"]],
            "actions": [list(a) for a in self._history()[0]],
            "result": self.result(),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any], *, check_result: bool = True) -> Game:
        """Replay a record, trusting nothing in it.

        The record is validated against ``records.record_schema()`` (published
        as ``docs/record.schema.json``), every action is replayed and checked,
        and, with ``check_result``, every field of the record's ``result``
        (scores, wins, payments, settlement, end, next dealer) must equal the
        replay's at the point where the actions stop.

        Raises:
            ValueError: a malformed record, or a result that differs from the replay.
            IllegalActionError: naming the index of the first illegal action.
        """
        return _records.replay(cls, record, check_result=check_result)

    def clone(self) -> Game:
        """An independent copy of the hand."""
        other = object.__new__(Game)
        other.__dict__.update(self.__dict__)
        other._st = self._st.copy()
        other._scratch = np.zeros(ACTION_SPACE, dtype=np.int8)
        other._mask_ok = False
        other._hist = None
        return other

    # ----------------------------------------------------------- read access
    def wall_left(self) -> int:
        """Tiles still in the wall."""
        st = self._st[0]
        return max(0, int(st["tail"]) - int(st["head"]) + 1)

    def scores(self) -> list[int]:
        """Net points per seat so far."""
        return [int(x) for x in self._st[0]["scores"]]

    def hand(self, seat: int) -> str:
        """A seat's concealed tiles in notation (everything: use ``view`` for fair play)."""
        return to_str(self._st[0]["hands"][self._seat(seat)])

    def melds(self, seat: int) -> list[tuple[str, str]]:
        """A seat's melds as ``(kind, tile)``."""
        st = self._st[0]
        s = self._seat(seat)
        return [
            (MELD_NAMES[int(k)], tile_name(int(t))) for k, t in st["melds"][s][: st["n_melds"][s]]
        ]

    def discards(self, seat: int) -> list[tuple[str, str]]:
        """A seat's discards in order as ``(tile, fate)``: live, melded, won_on or robbed."""
        st = self._st[0]
        s = self._seat(seat)
        n = int(st["n_river"][s])
        return [
            (tile_name(int(st["river"][s, k])), RIVER_NAMES[int(st["river_flag"][s, k])])
            for k in range(n)
        ]

    def voids(self, *, public: bool = False) -> list[str | None]:
        """Declared void suits; with ``public`` they stay hidden until all four declared."""
        st = self._st[0]
        v = [SUITS[x] if x >= 0 else None for x in st["void"]]
        if public and int(st["phase"]) == PH_VOID:
            return [None] * 4
        return v

    def winners(self) -> list[int]:
        """Seats that have won, in order."""
        return [w["seat"] for w in self.wins()]

    def view(self, seat: int) -> dict[str, Any]:
        """What ``seat`` can see: its own hand, public melds, discards, voids and wins."""
        s = self._seat(seat)
        st = self._st[0]
        return {
            "seat": s,
            "phase": self.phase(),
            "to_act": self.to_act(),
            "dealer": int(st["dealer"]),
            "hand": None if st["won"][s] else self.hand(s),
            "melds": [self.melds(o) for o in range(4)],
            "discards": [self.discards(o) for o in range(4)],
            "voids": [
                v if o == s else pv
                for o, (v, pv) in enumerate(zip(self.voids(), self.voids(public=True), strict=True))
            ],
            "wins": [{k: w[k] for k in ("seat", "tile", "from")} for w in self.wins()],
            "wall_left": self.wall_left(),
            "scores": self.scores(),
            "claim_tile": tile_name(int(st["claim_tile"]))
            if int(st["phase"]) in (PH_CLAIM, PH_ROB)
            else None,
        }

    def table(self) -> dict[str, Any]:
        """Everything, hidden information included: hands, wall order, voids, wins."""
        st = self._st[0]
        head, tail = int(st["head"]), int(st["tail"])
        return {
            **self.view(int(st["to_act"]) if not self.is_over() else 0),
            "hands": [self.hand(s) for s in range(4)],
            "voids": self.voids(),
            "wall": [tile_name(int(t)) for t in st["wall"][head : tail + 1]]
            if head <= tail
            else [],
            "wins": self.wins(),
        }

    @staticmethod
    def _seat(seat: int) -> int:
        if not isinstance(seat, (int, np.integer)) or isinstance(seat, bool) or not 0 <= seat < 4:
            raise ValueError(f"seat must be 0..3, got {seat!r}")
        return int(seat)

    def __repr__(self) -> str:
        return (
            f"Game(phase={self.phase()!r}, to_act={self.to_act()}, wall_left={self.wall_left()}, "
            f"scores={self.scores()})"
        )
