"""Rendering of a seat's view or of the whole table: text (``ansi``, the CLIs) and images.

``render_seat`` gives plain text; ``render_rgb`` an ``uint8[H, W, 3]`` picture
of the table drawn with numpy alone (tiles as coloured rectangles with a rank
digit from a built-in 3x5 bitmap font), so the core package needs no imaging
library.
"""

from __future__ import annotations

import numpy as np

from ..engine.game import Game
from ..tiles import tile_index, tile_name, to_str

REL = ("me", "next", "opposite", "previous")


def _meld_text(melds: list[tuple[str, str]]) -> str:
    short = {"pong": "P", "kong": "K", "concealed_kong": "CK"}
    return " ".join(f"{short[k]}:{t}" for k, t in melds) or "-"


def _river_text(discards: list[tuple[str, str]]) -> str:
    marks = {"live": "", "melded": "^", "won_on": "*", "robbed": "!"}
    return " ".join(t + marks[f] for t, f in discards) or "-"


def render_seat(game: Game, seat: int, *, reveal: bool = False, player: bool = False) -> str:
    """What ``seat`` sees (everything with ``reveal``), one line per seat, as plain text.

    ``player``: the terminal player's view (``sichuan-play``): on ``seat``'s own turn
    the tile it just drew is set apart (``123m456p + drew 7s``) and the legal actions
    are numbered (``[0] discard 1m``), so a number can be typed from the first prompt.
    """
    view = game.table() if reveal else game.view(seat)
    wins = {w["seat"]: w for w in game.wins()}
    head = (
        f"phase {view['phase']}  to act: {view['to_act']}  wall: {view['wall_left']}  "
        f"dealer: seat {view['dealer']}"
    )
    lines = [head]
    for r in range(4):
        s = (seat + r) % 4
        void = view["voids"][s] or "?"
        score = view["scores"][s]
        if s == seat or reveal:
            hand = game.hand(s)
            if player and s == seat and (drawn := _drawn_tile(game, seat)) is not None:
                counts = game.state["hands"][s].copy()
                counts[drawn] -= 1
                hand = f"{to_str(counts)} + drew {tile_name(drawn)}"
        else:
            hand = "(hidden)"
        if s in wins:
            w = wins[s]
            frm = "self-draw" if w["from"] is None else f"from seat {w['from']}"
            hand = f"WON on {w['tile'] or 'the deal'} {frm}, {w['fan']} fan ({w['base']})"
        lines.append(
            f"seat {s} ({REL[r]:>8}) void {void} score {score:+d}  {hand}\n"
            f"    melds: {_meld_text(game.melds(s))}\n"
            f"    discards: {_river_text(game.discards(s))}"
        )
    if view.get("claim_tile"):
        lines.append(f"claimable tile: {view['claim_tile']}")
    if not game.is_over() and game.to_act() == seat:
        legal = game.legal()
        shown = [f"[{i}] {a}" for i, a in enumerate(legal)] if player else legal
        lines.append("legal: " + ", ".join(shown))
    return "\n".join(lines)


def _drawn_tile(game: Game, seat: int) -> int | None:
    """The tile ``seat`` drew to begin the turn it is deciding now, else None."""
    st = game.state
    if game.is_over() or game.to_act() != seat or not st["drawn"] or st["drawn_tile"] < 0:
        return None
    if not any(a.startswith("discard ") for a in game.legal()):  # a claim window, not a turn
        return None
    return int(st["drawn_tile"])


# ------------------------------------------------------------------ images
_GLYPHS = {
    "A": ".#.#.#####.##.#", "B": "##.#.###.#.###.", "C": ".###..#..#...##",
    "D": "##.#.##.##.###.", "E": "####..##.#..###", "F": "####..##.#..#..",
    "G": ".###..#.##.#.##", "H": "#.##.#####.##.#", "I": "###.#..#..#.###",
    "J": "..#..#..##.#.#.", "K": "#.##.###.#.##.#", "L": "#..#..#..#..###",
    "M": "#.########.##.#", "N": "##.#.##.##.##.#", "O": ".#.#.##.##.#.#.",
    "P": "##.#.###.#..#..", "Q": ".#.#.##.###..##", "R": "##.#.###.#.##.#",
    "S": ".###...#...###.", "T": "###.#..#..#..#.", "U": "#.##.##.##.####",
    "V": "#.##.##.##.#.#.", "W": "#.##.########.#", "X": "#.##.#.#.#.##.#",
    "Y": "#.##.#.#..#..#.", "Z": "###..#.#.#..###", "0": "####.##.##.####",
    "1": ".#.##..#..#.###", "2": "##...#.#.#..###", "3": "##...#.#...###.",
    "4": "#.##.####..#..#", "5": "####..##...###.", "6": ".###..####.####",
    "7": "###..#.#..#..#.", "8": "####.#####.####", "9": "####.####..###.",
    "+": "....#.###.#....", "-": "......###......", ":": "....#.....#....",
    "?": "##...#.#.....#.", " ": "...............",
}  # fmt: skip
_FONT = {c: np.array([ch == "#" for ch in g], dtype=bool).reshape(5, 3) for c, g in _GLYPHS.items()}

_Rgb = tuple[int, int, int]

_FELT = (16, 92, 56)
_TEXT = (240, 240, 240)
_FACE = (244, 238, 220)
_EDGE = (60, 60, 60)
_BACK = (52, 96, 168)
_TURN = (250, 200, 40)
_WIN = (220, 40, 40)
_SUIT_RGB = ((190, 30, 30), (30, 70, 190), (20, 130, 50))  # m, p, s

_TILE = (18, 24)  # hand tiles, w x h
_SMALL = (13, 17)  # discards
_PER_ROW = 30  # discards per row, two rows
_MARGIN = 8
_BLOCK = 12 + 2 + _TILE[1] + 4 + 2 * (_SMALL[1] + 1) + 8
RGB_SHAPE = (20 + 4 * _BLOCK, 2 * _MARGIN + _PER_ROW * (_SMALL[0] + 1), 3)
"""The shape of every image ``render_rgb`` draws."""


def _text(img: np.ndarray, y: int, x: int, text: str, color: _Rgb, scale: int = 2) -> int:
    """Draw ``text`` (upper-cased; unknown characters as ``?``) at ``(y, x)``; returns the end x."""
    for ch in text.upper():
        glyph = _FONT.get(ch, _FONT["?"])
        big = np.kron(glyph, np.ones((scale, scale), dtype=bool))
        h, w = big.shape
        if x + w > img.shape[1]:
            break
        img[y : y + h, x : x + w][big] = color
        x += w + scale
    return x


def _tile(
    img: np.ndarray, y: int, x: int, size: tuple[int, int], tile: int | None, *, dim: bool = False,
    border: _Rgb | None = None,
) -> None:  # fmt: skip
    """One tile: face up (``tile`` 0..26) with its rank in its suit's colour, or its back (None)."""
    w, h = size
    img[y : y + h, x : x + w] = _EDGE if border is None else border
    inner = img[y + 1 : y + h - 1, x + 1 : x + w - 1]
    if tile is None:
        inner[:] = _BACK
        return
    suit = _SUIT_RGB[tile // 9]
    inner[:] = _FACE
    inner[-3:] = suit  # a stripe of the suit's colour along the bottom
    scale = 3 if h >= 24 else 2
    gw, gh = 3 * scale, 5 * scale
    _text(img, y + (h - 3 - gh) // 2, x + (w - gw) // 2, str(tile % 9 + 1), suit, scale)
    if dim:
        inner[:] = (inner.astype(np.uint16) * 3 // 5).astype(np.uint8)


def render_rgb(game: Game, seat: int, *, reveal: bool = False) -> np.ndarray:
    """What ``seat`` sees (everything with ``reveal``) as an ``uint8[H, W, 3]`` image.

    Seats are drawn in seat order, top to bottom; each block shows the label
    (seat, score, void suit, ``D`` for the dealer, ``HU`` once won), the
    concealed tiles (backs for hidden hands) and melds (concealed kongs with
    two backs), then the discards (dimmed once melded or robbed, red-edged when
    won on). A yellow bar marks the seat to act, a red-edged tile a winning
    tile. The image's shape is always ``RGB_SHAPE``.
    """
    st = game._st[0]
    view = game.table() if reveal else game.view(seat)
    wins = {w["seat"]: w for w in game.wins()}
    img = np.empty(RGB_SHAPE, dtype=np.uint8)
    img[:] = _FELT
    head = f"P{seat} VIEW  WALL {view['wall_left']}  {view['phase']}"
    if view.get("claim_tile"):
        head += f"  CLAIM {view['claim_tile']}"
    _text(img, 5, _MARGIN, head, _TEXT)
    to_act = game.to_act()
    for s in range(4):
        y = 20 + s * _BLOCK
        if s == to_act:
            img[y : y + _BLOCK - 6, 1:5] = _TURN
        void = view["voids"][s] or "?"
        label = f"P{s} {view['scores'][s]:+d} VOID {void}"
        label += " D" if s == view["dealer"] else ""
        label += " HU" if s in wins else ""
        _text(img, y, _MARGIN, label, _TEXT)
        x, ty = _MARGIN, y + 14
        counts = st["hands"][s]
        shown = reveal or s == seat
        for t in range(27):
            for _ in range(int(counts[t])):
                _tile(img, ty, x, _TILE, t if shown else None)
                x += _TILE[0] + 1
        if s in wins and wins[s]["tile"]:
            x += 4
            _tile(img, ty, x, _TILE, tile_index(wins[s]["tile"]), border=_WIN)
            x += _TILE[0] + 1
        for kind, name in game.melds(s):
            x += 6
            t = tile_index(name)
            n = 3 if kind == "pong" else 4
            for k in range(n):
                hidden = kind == "concealed_kong" and k in (0, 3) and not shown
                _tile(img, ty, x, _TILE, None if hidden else t)
                x += _TILE[0] + 1
        river = game.discards(s)[-2 * _PER_ROW :]
        dy = ty + _TILE[1] + 4
        for k, (name, fate) in enumerate(river):
            row, col = divmod(k, _PER_ROW)
            _tile(
                img, dy + row * (_SMALL[1] + 1), _MARGIN + col * (_SMALL[0] + 1), _SMALL,
                tile_index(name), dim=fate in ("melded", "robbed"),
                border=_WIN if fate == "won_on" else None,
            )  # fmt: skip
    return img
