"""Text rendering of a seat's view or of the whole table, for ``ansi`` mode and the CLIs."""

from __future__ import annotations

from ..engine.game import Game

REL = ("me", "next", "opposite", "previous")


def _meld_text(melds: list[tuple[str, str]]) -> str:
    short = {"pong": "P", "kong": "K", "concealed_kong": "CK"}
    return " ".join(f"{short[k]}:{t}" for k, t in melds) or "-"


def _river_text(discards: list[tuple[str, str]]) -> str:
    marks = {"live": "", "melded": "^", "won_on": "*", "robbed": "!"}
    return " ".join(t + marks[f] for t, f in discards) or "-"


def render_seat(game: Game, seat: int, *, reveal: bool = False) -> str:
    """What ``seat`` sees (everything with ``reveal``), one line per seat, as plain text."""
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
        lines.append("legal: " + ", ".join(game.legal()))
    return "\n".join(lines)
