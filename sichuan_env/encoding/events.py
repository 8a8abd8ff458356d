"""The public history of a hand as integer tokens from one seat's view, for sequence models.

``event_sequences(game)`` replays a hand's decision log and returns, for each
seat, the tokens it could see in order, plus the position in each sequence
before every decision (``offsets[k, s]``: seat ``s`` had seen
``tokens[s][:offsets[k, s]]`` when decision ``k`` was asked). Relative seats
``r`` are as in the observations: 0 me, 1 next, 2 opposite, 3 previous.

Vocabulary (``VOCAB``: name → (first id, count); ids are contiguous):

| name | ids | meaning |
| --- | --- | --- |
| pad | 1 | padding (id 0) |
| start | 1 | start of the hand; then ``dealer`` |
| dealer | 4 | the dealer's relative seat |
| hand | 27 | my dealt tiles (and my tiles after the exchange), one token per tile |
| pick | 27 | a tile I passed in 换三张 |
| receive | 27 | a tile I received in 换三张 |
| exchange_dir | 3 | 换三张 direction: offset 1, 2, 3 |
| void | 4 x 3 | relative seat r declared suit s void (others' once all four declared) |
| draw | 27 | I drew tile t |
| draw_other | 3 | relative seat r = 1..3 drew (tile hidden) |
| discard | 4 x 2 x 27 | relative seat r discarded t; 摸切 (the tile just drawn) or 手切 |
| pong | 4 x 27 | relative seat r ponged t |
| kong | 4 x 27 | relative seat r made a direct kong of the discard t |
| added_kong | 4 x 27 | relative seat r added t to its pong |
| concealed_kong | 4 x 27 | relative seat r declared a concealed kong of t |
| hu_self | 4 x 27 | relative seat r won by self-draw on t (天胡: t = its last tile in hand order) |
| hu_on | 4 x 27 | relative seat r won on the discard or robbed kong t |
| end | 1 | the hand is over |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..engine.actions import DISCARD, EXCHANGE, VOID
from ..engine.state import PH_EXCHANGE, PH_OVER, PH_VOID
from ..tiles import SUITS, tile_name

if TYPE_CHECKING:
    from ..engine.game import Game

_SIZES = (
    ("pad", 1),
    ("start", 1),
    ("dealer", 4),
    ("hand", 27),
    ("pick", 27),
    ("receive", 27),
    ("exchange_dir", 3),
    ("void", 12),
    ("draw", 27),
    ("draw_other", 3),
    ("discard", 216),
    ("pong", 108),
    ("kong", 108),
    ("added_kong", 108),
    ("concealed_kong", 108),
    ("hu_self", 108),
    ("hu_on", 108),
    ("end", 1),
)


def _vocab() -> dict[str, tuple[int, int]]:
    out, first = {}, 0
    for name, n in _SIZES:
        out[name] = (first, n)
        first += n
    return out


VOCAB = _vocab()
"""Token blocks: name → (first id, count)."""
VOCAB_SIZE = sum(n for _, n in _SIZES)
"""Number of token ids (0 = pad)."""


def token(name: str, *index: int) -> int:
    """The id of a token: ``token("discard", r, tsumo, t)``, ``token("draw", t)``, ``token("end")``."""
    first, n = VOCAB[name]
    strides = {
        "void": (3, 1),
        "discard": (54, 27, 1),
        "draw_other": (1,),
    }.get(name, (27, 1) if n == 108 else (1,))
    offset = sum(i * s for i, s in zip(index, strides, strict=False))
    if name == "draw_other":
        offset -= 1  # relative seats 1..3
    if not 0 <= offset < n:
        raise ValueError(f"token {name}{index} out of range")
    return first + offset


def describe(tok: int) -> str:
    """A readable name for a token id: ``"discard(r=1, 摸切, 5p)"``, ``"draw(3m)"``, ``"end"``."""
    for name, (first, n) in VOCAB.items():
        if first <= tok < first + n:
            i = tok - first
            if n == 1:
                return name
            if name == "discard":
                r, rest = divmod(i, 54)
                return f"discard(r={r}, {'摸切' if rest >= 27 else '手切'}, {tile_name(rest % 27)})"
            if n == 108:
                return f"{name}(r={i // 27}, {tile_name(i % 27)})"
            if n == 27:
                return f"{name}({tile_name(i)})"
            if name == "void":
                return f"void(r={i // 3}, {SUITS[i % 3]})"
            if name == "draw_other":
                return f"draw_other(r={i + 1})"
            return f"{name}({i + 1 if name == 'exchange_dir' else i})"
    raise ValueError(f"token id {tok} outside the vocabulary (size {VOCAB_SIZE})")


def event_sequences(game: Game) -> tuple[list[np.ndarray], np.ndarray]:
    """Replay ``game``'s decisions; return ``(tokens per seat, offsets[n_decisions + 1, 4])``."""
    st = game._st[0]
    n = int(st["n_log"])
    offset = int(st["exchange_offset"]) if game.rules.exchange_three else None
    shadow = type(game)(
        game.rules, wall=st["wall"], dealer=int(st["dealer"]), exchange_offset=offset
    )
    s = shadow._st[0]
    seqs: list[list[int]] = [[] for _ in range(4)]
    dealer = int(s["dealer"])
    for me in range(4):
        seqs[me] += [token("start"), token("dealer", (dealer - me) % 4)]
        seqs[me] += [token("hand", t) for t in range(27) for _ in range(int(s["hands"][me, t]))]
    offsets = np.zeros((n + 1, 4), dtype=np.int32)
    for k, code in enumerate(st["log"][:n]):
        offsets[k] = [len(q) for q in seqs]
        seat, action = divmod(int(code), 128)
        before = _snap(s)
        shadow._apply(action)
        _emit(seqs, before, s, seat, action)
    offsets[n] = [len(q) for q in seqs]
    return [np.array(q, dtype=np.int16) for q in seqs], offsets


def _snap(s: np.void) -> dict:
    return {
        "phase": int(s["phase"]),
        "draws": s["draws"].copy(),
        "n_river": s["n_river"].copy(),
        "n_melds": s["n_melds"].copy(),
        "melds": s["melds"].copy(),
        "won": s["won"].copy(),
        "hands": s["hands"].copy(),
    }


def _emit(seqs: list[list[int]], b: dict, s: np.void, seat: int, action: int) -> None:
    """Append the tokens of one decision's consequences to every seat's sequence."""
    phase = b["phase"]
    if phase == PH_EXCHANGE:
        seqs[seat].append(token("pick", action - EXCHANGE))
        if int(s["phase"]) != PH_EXCHANGE:  # the exchange happened
            off = int(s["exchange_offset"])
            for me in range(4):
                seqs[me].append(token("exchange_dir", off - 1))
                giver = (me - off) % 4
                for t in sorted(int(x) for x in s["picks"][giver]):
                    seqs[me].append(token("receive", t))
        return
    if phase == PH_VOID:
        seqs[seat].append(token("void", 0, action - VOID))
        if int(s["phase"]) != PH_VOID:  # all four declared: the others' voids are revealed
            for me in range(4):
                for r in range(1, 4):
                    seqs[me].append(token("void", r, int(s["void"][(me + r) % 4])))
        return
    # melds: pongs, direct / added / concealed kongs
    for o in range(4):
        for j in range(4):
            kind, t = int(s["melds"][o, j, 0]), int(s["melds"][o, j, 1])
            was = int(b["melds"][o, j, 0]) if j < b["n_melds"][o] else 0
            if kind == was:
                continue
            name = {1: "pong", 2: "added_kong" if was == 1 else "kong", 3: "concealed_kong"}[kind]
            for me in range(4):
                seqs[me].append(token(name, (o - me) % 4, t))
    # a discard (a robbed kong tile also enters the river, but as a win, below)
    if DISCARD <= action < DISCARD + 27:
        k = int(b["n_river"][seat])
        tsumo = int(s["river_tsumo"][seat, k])
        for me in range(4):
            seqs[me].append(token("discard", (seat - me) % 4, tsumo, action - DISCARD))
    # wins, in the order recorded
    for idx in range(int((b["won"] > 0).sum()), int(s["n_won"])):
        w = int(s["win_order"][idx])
        frm = int(s["win_from"][w])
        t = int(s["win_tile"][w])
        if t < 0:  # 天胡: no winning tile; name the hand's last tile
            t = int(np.flatnonzero(s["hands"][w])[-1])
        name = "hu_self" if frm < 0 else "hu_on"
        for me in range(4):
            seqs[me].append(token(name, (w - me) % 4, t))
    # draws (after the decision's own events: a draw follows them)
    for o in range(4):
        if s["draws"][o] > b["draws"][o]:
            for me in range(4):
                if me == o:
                    seqs[me].append(token("draw", int(s["drawn_tile"])))
                else:
                    seqs[me].append(token("draw_other", (o - me) % 4))
    if int(s["phase"]) == PH_OVER:
        for me in range(4):
            seqs[me].append(token("end"))
