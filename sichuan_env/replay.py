"""Step through a recorded hand: ``python -m sichuan_env.replay FILE [--seat S] [--all]``.

FILE is a game record (docs/rules.md §10 JSON), or ``-`` for standard input. Each
action is shown with the table after it, from one seat's view (``--seat``)
or with every hand shown (the default). Press Enter for the next action,
``q`` to stop; ``--all`` prints the whole hand without waiting (so does the
end of input).

Nothing in the file is trusted: the whole record is validated by
``Game.from_record`` before anything is shown, and the hand shown is the
validated replay. Exit status: 0 done, 1 a file that cannot be read or is not
a valid record (one line on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ._cli import PlainHelp, run
from .engine.game import Game, IllegalActionError
from .envs.render import render_seat

MAX_BYTES = 16 << 20
"""Largest record file read (a real record is about 10 KB; this bounds ``/dev/zero`` & co.)."""
READ_ERRORS = (EOFError, OSError, RuntimeError)
"""What reading a line can raise when input is over (``RuntimeError``: stdin closed)."""
RECORD_ERRORS = (
    ValueError,
    IllegalActionError,
    TypeError,
    KeyError,
    IndexError,
    OverflowError,
    RecursionError,
)
"""What a malformed record can raise while it is validated."""


def load_record(path: Path | str) -> dict[str, Any]:
    """The JSON object of a record file (``-``: standard input).

    Raises:
        ValueError: the file cannot be read, is not UTF-8 JSON, or is not a JSON object.
    """
    name = "standard input" if str(path) == "-" else str(path)
    try:
        if str(path) == "-":
            if sys.stdin is None:
                raise ValueError("standard input is closed")
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            with Path(path).open("rb") as f:
                data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise ValueError(f"cannot read {name}: larger than {MAX_BYTES >> 20} MB, not a record")
        record = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read {name}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"cannot read {name}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"cannot read {name}: JSON nested too deeply") from None
    except OSError as exc:
        raise ValueError(f"cannot read {name}: {exc.strerror or exc}") from None
    if not isinstance(record, dict):
        raise ValueError(f"{name} holds a JSON {type(record).__name__}, not a record object")
    return record


def replay(
    record: dict[str, Any],
    seat: int | None,
    wait: bool,
    read: Any = input,
    source: str = "record",
) -> int:
    """Print the hand action by action; returns a process exit code (1: not a valid record).

    ``read`` reads the key presses (``input``); ``source`` names the record in messages.
    """
    try:
        final = Game.from_record(record)  # validates the whole record first
        checked = final.record()  # everything below comes from the validated replay
    except RECORD_ERRORS as exc:
        print(f"sichuan-replay: {source}: {_one_line(exc)}", file=sys.stderr)
        return 1
    game = Game(
        final.rules,
        wall=checked["wall"],
        dealer=checked["dealer"],
        exchange_offset=checked.get("exchange_offset"),
    )
    show = 0 if seat is None else seat
    print(render_seat(game, show, reveal=seat is None))
    actions = checked["actions"]
    for i, (actor, action) in enumerate(actions):
        if wait:
            try:
                if read(f"[{i + 1}/{len(actions)}] Enter: next, q: quit > ").strip() == "q":
                    return 0
            except UnicodeDecodeError:
                pass  # an unreadable key press means "next"
            except READ_ERRORS:
                wait = False  # input is over: print the rest
        game.step(action)
        print(f"\n#{i + 1} seat {actor}: {action}")
        print(render_seat(game, show, reveal=seat is None))
    print(f"\nresult: {game.result()['scores']}")
    return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: 0 done, 1 a bad record file, 2 bad usage."""
    p = argparse.ArgumentParser(
        prog="sichuan-replay",
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument("file", help="a game record (JSON), or - for standard input")
    p.add_argument("--seat", type=int, choices=range(4), default=None, help="show this seat's view")
    p.add_argument("--all", action="store_true", help="print everything without waiting")
    args = p.parse_args(argv)
    try:
        record = load_record(args.file)
    except ValueError as exc:
        print(f"sichuan-replay: {_one_line(exc)}", file=sys.stderr)
        return 1
    # a record read from stdin leaves no keyboard to wait on
    source = "standard input" if args.file == "-" else args.file
    return replay(record, args.seat, wait=not args.all and args.file != "-", source=source)


def cli() -> int:
    """Console-script entry point (``sichuan-replay``): exit status, never a traceback."""
    return run(main, "sichuan-replay")


if __name__ == "__main__":
    sys.exit(cli())
