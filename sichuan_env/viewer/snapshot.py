"""Replay a game record with the engine and snapshot the table after every decision.

The page renders these snapshots and nothing else: every fact it shows (hands,
rivers, melds, voids, wins, wall, scores, legal actions, payments) comes from
``Game``'s public methods and the documented fields of ``Game.state``
(``engine/state.py``), so the rules exist once, in the engine.

Snapshot ``n`` is the table after ``n`` decisions: 0 is after the deal and
``len(record["actions"])`` the end (with the result when the hand is over).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.game import Game, IllegalActionError
from ..tiles import tile_index, tile_name

FATE_CODES = {"live": "", "melded": "m", "won_on": "w", "robbed": "r"}
"""River tile fates (``Game.discards``) as the one-letter codes of the page."""

AgentHook = Callable[[Game, int, str], "dict[str, Any] | None"]
"""``hook(game, seat, chosen_action) -> annotation``, called before each decision."""


def validate_record(record: object) -> Game:
    """Replay ``record`` with ``Game.from_record`` and return the final game.

    Raises:
        ValueError: a malformed record, an illegal action (the message names its
            index) or a result that differs from the replay.
    """
    if not isinstance(record, dict):
        raise ValueError(f"a record is a JSON object, not {type(record).__name__}")
    try:
        return Game.from_record(record)
    except IllegalActionError as exc:
        raise ValueError(str(exc)) from None
    except (TypeError, KeyError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
        raise ValueError(f"malformed record ({type(exc).__name__}: {exc})") from None


def _tiles(counts: Any) -> list[str]:
    return [tile_name(t) for t in range(27) for _ in range(int(counts[t]))]


def _kong_count(game: Game) -> int:
    return sum(1 for s in range(4) for kind, _ in game.melds(s) if kind != "pong")


def _snapshot(
    game: Game,
    rivers_mo: list[list[int]],
    meld_info: list[list[dict[str, Any]]],
    prev_scores: list[int],
) -> dict[str, Any]:
    """The table now, as plain JSON data for the page."""
    st = game.state
    phase = game.phase()
    to_act = game.to_act()
    voids = game.voids()
    public = game.voids(public=True)
    wins = game.wins()
    win_of = {w["seat"]: k for k, w in enumerate(wins)}
    scores = game.scores()
    seats = []
    for s in range(4):
        drawn = None
        if phase == "turn" and s == to_act and int(st["drawn"]) == 1 and int(st["drawn_tile"]) >= 0:
            drawn = tile_name(int(st["drawn_tile"]))
        river = [
            [tile, FATE_CODES[fate], rivers_mo[s][k]]
            for k, (tile, fate) in enumerate(game.discards(s))
        ]
        melds = [
            {**meld_info[s][k], "kind": kind, "tile": tile}
            for k, (kind, tile) in enumerate(game.melds(s))
        ]
        picks = [tile_name(int(t)) for t in st["picks"][s][: int(st["n_picks"][s])]]
        seats.append(
            {
                "hand": game.hand(s),
                "tiles": _tiles(st["hands"][s]),
                "drawn": drawn,
                "melds": melds,
                "river": river,
                "void": voids[s],
                "void_public": public[s],
                "win": win_of.get(s),
                "picks": picks if phase == "exchange" else [],
            }
        )
    claim = None
    if phase in ("claim", "rob"):
        claim = {"tile": tile_name(int(st["claim_tile"])), "from": int(st["claim_from"])}
    return {
        "phase": phase,
        "to_act": to_act,
        "wall": game.wall_left(),
        "scores": scores,
        "delta": [a - b for a, b in zip(scores, prev_scores, strict=True)],
        "seats": seats,
        "wins": wins,
        "claim": claim,
    }


def replay_snapshots(record: dict[str, Any], agent_hook: AgentHook | None = None) -> dict[str, Any]:
    """Replay a record decision by decision and snapshot the table after each.

    Args:
        record: a game record (docs/rules.md §10); validated with ``Game.from_record``.
        agent_hook: optional ``hook(game, seat, chosen)`` called before each
            decision; what it returns is stored as that decision's ``agent``.

    Returns:
        ``{"meta", "steps"}``: ``steps[n]`` is the table after ``n`` decisions,
        with ``last`` (the decision that led there), ``event`` (``"win"``,
        ``"kong"`` or None), and ``next`` (the seat to act, its legal actions and
        the one the record chose); the last step holds ``result`` when the
        hand is over.

    Raises:
        ValueError: the record is not a valid, replayable record.
    """
    final = validate_record(record)
    game = Game(
        final.rules,
        wall=record["wall"],
        dealer=record["dealer"],
        exchange_offset=record.get("exchange_offset"),
    )
    actions = [(int(seat), str(action)) for seat, action in record["actions"]]
    # per seat and river slot: 1 = 摸切 (the drawn tile), 0 = 手切, -1 = not a discard
    rivers_mo: list[list[int]] = [[] for _ in range(4)]
    meld_info: list[list[dict[str, Any]]] = [[] for _ in range(4)]
    steps = [_snapshot(game, rivers_mo, meld_info, game.scores())]
    steps[0].update(last=None, event=None)
    for seat, action in actions:
        st = game.state
        phase = game.phase()
        steps[-1]["next"] = {"seat": seat, "legal": game.legal(), "chosen": action}
        if agent_hook is not None:
            steps[-1]["agent"] = agent_hook(game, seat, action)
        mo = 0
        if phase == "turn" and action.startswith("discard "):
            tile = tile_index(action.split()[1])
            mo = int(int(st["drawn"]) == 1 and int(st["drawn_tile"]) == tile)
        claim_from = int(st["claim_from"]) if phase in ("claim", "rob") else None
        before_melds = [game.melds(s) for s in range(4)]
        n_wins, n_kongs, scores = len(game.wins()), _kong_count(game), game.scores()
        game.step(action)
        for s in range(4):
            n_river = len(game.discards(s))
            while len(rivers_mo[s]) < n_river:
                fresh = s == seat and action.startswith("discard ")
                rivers_mo[s].append(mo if fresh else -1)
            for k, (kind, _tile) in enumerate(game.melds(s)):
                if k >= len(meld_info[s]):
                    exposed = kind != "concealed_kong" and claim_from is not None
                    meld_info[s].append({"from": claim_from if exposed else None, "added": False})
                elif before_melds[s][k][0] == "pong" and kind == "kong":
                    meld_info[s][k]["added"] = True
        snap = _snapshot(game, rivers_mo, meld_info, scores)
        event = None
        if len(game.wins()) > n_wins:
            event = "win"
        elif _kong_count(game) > n_kongs:
            event = "kong"
        snap.update(last={"seat": seat, "action": action}, event=event)
        steps.append(snap)
    steps[-1]["next"] = None
    if game.is_over():
        steps[-1]["result"] = game.result()
    meta = {
        "rules": final.rules.to_dict(),
        "dealer": int(record["dealer"]),
        "exchange_offset": record.get("exchange_offset"),
        "n_actions": len(actions),
        "over": game.is_over(),
    }
    return {"meta": meta, "steps": steps}
