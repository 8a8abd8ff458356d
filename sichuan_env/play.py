"""Play one seat against three bots in the terminal: ``python -m sichuan_env.play``.

Type an action exactly as listed (``discard 5p``, ``pong``, ``hu``, ``void s``,
``exchange 1m2m3m``) or its number in the list; ``?`` shows the list again,
``q`` quits. The bots play the engine's greedy policy (win when possible,
discard for the lowest shanten).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

from .engine import selfplay
from .engine.actions import ACTION_SPACE
from .engine.game import Game
from .envs.render import render_seat
from .kernels.tables import get_tables
from .rules.config import PRESETS, RuleConfig, kernel_rules


def bot_action(game: Game, rng_state: np.uint64) -> tuple[int, np.uint64]:
    """The greedy bot's action id for the seat to act."""
    mask = np.zeros(ACTION_SPACE, dtype=np.int8)
    legal = game.legal_ids()
    mask[legal] = 1
    a, rng_state = selfplay.choose(
        game.state,
        mask,
        len(legal),
        rng_state,
        selfplay.GREEDY,
        kernel_rules(game.rules),
        get_tables()["DIST"],
    )
    return int(a), np.uint64(rng_state)


def ask(prompt: str, legal: list[str], read: Callable[[str], str]) -> str | None:
    """Read a legal action (text or number) from the player; None to quit."""
    while True:
        try:
            text = read(prompt).strip()
        except EOFError:
            return None
        if text in ("q", "quit", "exit"):
            return None
        if text in ("?", "help", ""):
            print("legal: " + ", ".join(f"[{i}] {a}" for i, a in enumerate(legal)))
            continue
        if text.isdigit() and int(text) < len(legal):
            return legal[int(text)]
        normal = " ".join(text.split())
        if normal in legal:
            return normal
        print(f"  {text!r} is not legal now. Type one of the actions below, or its number.")
        print("legal: " + ", ".join(f"[{i}] {a}" for i, a in enumerate(legal)))


def play(seat: int, rules: RuleConfig, seed: int | None, read: Callable[[str], str] = input) -> int:
    """Run one hand; returns 0 when it finished, 1 when the player quit."""
    game = Game(rules, seed=seed)
    rng = np.uint64(seed or 0)
    print(f"You are seat {seat}. Seat {int(game.state['dealer'])} deals. Type ? for help.\n")
    while not game.is_over():
        actor = game.to_act()
        if actor == seat:
            print(render_seat(game, seat))
            legal = game.legal()
            choice = ask(f"seat {seat} > ", legal, read)
            if choice is None:
                print("bye")
                return 1
            game.step(choice)
        else:
            a, rng = bot_action(game, rng)
            before = len(game.record()["actions"])
            game.step_id(a)
            after = game.record()["actions"]
            if len(after) > before and after[-1][1] is not None:
                print(f"  seat {actor}: {after[-1][1]}")
    print("\nThe hand is over.")
    print(render_seat(game, seat, reveal=True))
    result = game.result()
    for w in result["wins"]:
        frm = "self-draw" if w["from"] is None else f"from seat {w['from']}"
        print(f"  seat {w['seat']} won on {w['tile']} ({frm}): {w['fan']} fan, {w['base']}")
    print(f"scores: {result['scores']} (you: {result['scores'][seat]:+d})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat (0..3)")
    p.add_argument("--seed", type=int, default=None, help="deal this hand (default: random)")
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS), help="rule preset")
    args = p.parse_args(argv)
    try:
        return play(args.seat, PRESETS[args.preset], args.seed)
    except KeyboardInterrupt:
        print("\nbye")
        return 1


if __name__ == "__main__":
    sys.exit(main())
