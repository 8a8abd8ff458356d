"""Hand-built walls and scripted play for engine scenario tests."""

from __future__ import annotations

import re

from sichuan_env import Game, RuleConfig, check_invariants, tile_index


def ordered(notation: str) -> list[int]:
    """Tile indices in the order written: "5p3m" -> [13, 2]."""
    out = []
    for digits, suit in re.findall(r"([1-9]+)([mps])", notation.replace(" ", "")):
        out += [tile_index(d + suit) for d in digits]
    return out


def build_wall(
    hands: tuple[str, str, str, str],
    fourteenth: str,
    draws: str = "",
    tail: str = "",
    dealer: int = 0,
) -> list[int]:
    """A wall dealing ``hands[seat]`` (13 tiles each) and the dealer's ``fourteenth``.

    ``draws`` are the head draws from ``wall[53]`` on, ``tail`` the kong
    replacements from ``wall[107]`` down; every other tile fills the middle.
    """
    wall: list[int | None] = [None] * 108
    for k in range(4):
        seat = (dealer + k) % 4
        tiles = ordered(hands[seat])
        assert len(tiles) == 13, (seat, hands[seat], len(tiles))
        wall[13 * k : 13 * k + 13] = tiles
    wall[52] = ordered(fourteenth)[0]
    for i, t in enumerate(ordered(draws)):
        wall[53 + i] = t
    for i, t in enumerate(ordered(tail)):
        assert wall[107 - i] is None
        wall[107 - i] = t
    used = [t for t in wall if t is not None]
    for t in range(27):
        assert used.count(t) <= 4, f"more than 4 of tile {t}"
    rest = [t for t in range(27) for _ in range(4 - used.count(t))]
    it = iter(rest)
    return [t if t is not None else next(it) for t in wall]


def scripted(game: Game, script: list[tuple[int, str]]) -> Game:
    """Play ``(seat, action)`` pairs, checking the seat to act and the invariants."""
    for seat, action in script:
        assert game.to_act() == seat, (seat, action, game.to_act(), game.legal())
        game.step(action)
        check_invariants(game)
    return game


def voids(*suits: str) -> list[tuple[int, str]]:
    """The 定缺 script from dealer 0: ``voids("s", "s", "s", "m")``."""
    return [(seat, f"void {s}") for seat, s in enumerate(suits)]


def game_with(hands, fourteenth, draws="", tail="", rules=None, **kw) -> Game:
    """A Game on a hand-built wall (dealer 0 unless given)."""
    rules = rules or RuleConfig()
    wall = build_wall(hands, fourteenth, draws, tail, dealer=kw.get("dealer", 0))
    return Game(rules, wall=wall, **kw)
