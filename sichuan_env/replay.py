"""Step through a recorded hand: ``python -m sichuan_env.replay FILE [--seat S] [--all]``.

FILE is a game record (RULES.md §10 JSON). Each action is shown with the
table after it, from one seat's view (``--seat``) or with every hand shown
(the default). Press Enter for the next action, ``q`` to stop; ``--all``
prints the whole hand without waiting.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .engine.game import Game, IllegalActionError
from .envs.render import render_seat


def replay(record: dict, seat: int | None, wait: bool) -> int:
    """Print the hand action by action; returns a process exit code."""
    try:
        final = Game.from_record(record)  # validates the whole record first
    except (ValueError, IllegalActionError) as exc:
        print(f"not a valid record: {exc}", file=sys.stderr)
        return 2
    game = Game(
        final.rules,
        wall=record["wall"],
        dealer=record["dealer"],
        exchange_offset=record.get("exchange_offset"),
    )
    show = 0 if seat is None else seat
    print(render_seat(game, show, reveal=seat is None))
    for i, (actor, action) in enumerate(record["actions"]):
        if wait:
            try:
                if (
                    input(f"[{i + 1}/{len(record['actions'])}] Enter: next, q: quit > ").strip()
                    == "q"
                ):
                    return 0
            except EOFError:
                return 0
        game.step(action)
        print(f"\n#{i + 1} seat {actor}: {action}")
        print(render_seat(game, show, reveal=seat is None))
    print(f"\nresult: {game.result()['scores']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("file", type=Path, help="a game record (JSON)")
    p.add_argument("--seat", type=int, choices=range(4), default=None, help="show this seat's view")
    p.add_argument("--all", action="store_true", help="print everything without waiting")
    args = p.parse_args(argv)
    try:
        record = json.loads(args.file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    return replay(record, args.seat, wait=not args.all)


if __name__ == "__main__":
    sys.exit(main())
