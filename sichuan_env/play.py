"""Play one seat against three bots in the terminal: ``python -m sichuan_env.play`` (``sichuan-play``).

At each of your decisions the table is shown, with the tile you just drew set
apart (``+ drew 5p``) and the legal actions numbered (``[0] discard 1m``):
type an action exactly as listed (``discard 5p``, ``pong``, ``hu``, ``void s``,
``exchange 1m2m3m``) or its number; ``?`` shows the list again, ``q`` quits
(so does the end of input). ``--record FILE`` saves the hand's game record
(docs/rules.md §10) when the hand ends, and also when you quit, the input ends
or Ctrl-C stops it (a partial record, replayable as far as it goes):
``sichuan-viewer FILE`` replays it in a browser. The bots are agents by name:
``--opponents heuristic`` (the default), ``--opponents random``, a checkpoint
path, ``package.module:Class``, or three entries, one per seat after yours.
They act from their own observation (in the version each one reads) and
mask, exactly as in the PettingZoo env that runs the hand.
"""

# Layering: sichuan_env never imports or names the agents package above it. ``play`` takes
# the bots as objects (anything with ``obs_version`` and ``act(obs, mask)``); names are turned
# into objects by the resolver that the installed distribution declares (entry point group
# ``sichuan_env.resolvers``, sichuan_env.plugins).

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._cli import PlainHelp, int_arg, path_problem, run, write_atomic
from .engine.actions import action_from_str
from .envs.acting import SeatMemory, ask_one
from .envs.pettingzoo import AGENTS, raw_env
from .envs.render import render_seat
from .plugins import agent_resolver
from .rules.config import PRESETS, RuleConfig
from .tiles import InputTypeError, echo

READ_ERRORS = (EOFError, OSError, RuntimeError)
"""What reading a line can raise when input is over (``RuntimeError``: stdin closed)."""


def make_bots(specs: Sequence[str], seed: int | None = None) -> list[Any]:
    """Three bots from registry specs: one spec for all three seats, or one per seat.

    Raises:
        ValueError: for a count other than 1 or 3, or a spec the registry does not know.
    """
    make_agent = agent_resolver()

    specs = list(specs)
    if len(specs) not in (1, 3):
        raise ValueError(f"--opponents takes 1 or 3 agents, got {len(specs)}")
    if len(specs) == 1:
        specs *= 3
    # positional: the resolver contract is (spec, seed), whatever the parameters are named
    return [make_agent(s, None if seed is None else seed + k) for k, s in enumerate(specs)]


def _number(text: str, n: int) -> int | None:
    """The list index ``text`` names (ASCII digits only), or None."""
    if text.isascii() and text.isdigit():
        k = int(text)
        return k if k < n else None
    return None


def ask(prompt: str, legal: list[str], read: Callable[[str], str]) -> str | None:
    """Read a legal action (text or number) from the player; None to quit or at end of input."""
    while True:
        try:
            text = read(prompt).strip()
        except UnicodeDecodeError:
            print("  could not read that line (not UTF-8); type it again.")
            continue
        except READ_ERRORS as exc:
            why = "stdin is closed" if isinstance(exc, RuntimeError) else "end of input"
            print(f"sichuan-play: no more input ({why}); the hand is abandoned", file=sys.stderr)
            return None
        if text in ("q", "quit", "exit"):
            return None
        if text in ("?", "help", ""):
            print("legal: " + ", ".join(f"[{i}] {a}" for i, a in enumerate(legal)))
            continue
        k = _number(text, len(legal))
        if k is not None:
            return legal[k]
        normal = " ".join(text.split())
        if normal in legal:
            return normal
        shown = repr(text) if len(text) <= 40 else repr(text[:37]) + "..."
        print(f"  {shown} is not legal now. Type one of the actions below, or its number.")
        print("legal: " + ", ".join(f"[{i}] {a}" for i, a in enumerate(legal)))


def _check_bots(bots: Sequence[Any]) -> None:
    if len(bots) != 3:
        raise ValueError(f"opponents must be 3 agents, got {len(bots)}")
    calls = ("act", "act_batch", "act_stateful", "act_states")
    for b in bots:
        if not any(callable(getattr(b, c, None)) for c in calls) or not isinstance(
            getattr(b, "obs_version", None), int
        ):
            raise ValueError(
                "an opponent must have obs_version and act(obs, mask) (or act_batch, "
                f"act_stateful, act_states), got {type(b).__name__}"
            )


def save_record(game: Any, path: Path) -> bool:
    """Write ``game``'s record to ``path`` (JSON, whole or not at all); False and a line on stderr if not."""
    try:
        text = json.dumps(game.record(), indent=1) + "\n"
        write_atomic(path, [text])
    except (OSError, RuntimeError) as exc:
        why = exc.strerror or exc if isinstance(exc, OSError) else exc
        print(f"sichuan-play: cannot write the record to {path}: {why}", file=sys.stderr)
        return False
    print(f"record saved to {path} (replay it: sichuan-viewer {path})")
    return True


def play(
    seat: int,
    rules: RuleConfig,
    seed: int | None,
    read: Callable[[str], str] = input,
    opponents: Sequence[Any] | None = None,
    record_to: str | os.PathLike[str] | None = None,
) -> int:
    """Run one hand; returns 0 when it finished, 1 when the player quit.

    Args:
        seat: the player's seat, 0..3.
        rules: the ruleset.
        seed: deals the hand and seeds the bots (None: random).
        read: reads one line of the player's input (``input`` by default).
        opponents: the bots of the other seats in seat order after ``seat``
            (default: three ``heuristic`` agents from the registry).
        record_to: save the hand's game record (JSON) here when the hand ends
            or is abandoned (quit, end of input, an exception such as Ctrl-C);
            a record that cannot be written is reported on stderr and makes the
            result 1.

    Raises:
        ValueError: for a bad seat, seed or opponents, or a ``record_to`` that
            cannot be written (checked before the hand starts).
    """
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise InputTypeError(f"seat must be an integer 0..3, got {echo(seat)}")
    if not 0 <= seat < 4:
        raise ValueError(f"seat must be 0..3, got {seat}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InputTypeError(f"seed must be None or a non-negative integer, got {echo(seed)}")
    if seed is not None and not 0 <= seed < 2**64:
        raise ValueError(f"seed must be None or an integer in [0, 2**64), got {seed}")
    if record_to is not None:
        if not isinstance(record_to, (str, os.PathLike)):
            raise InputTypeError(f"record_to must be None or a path, got {echo(record_to)}")
        if problem := path_problem(Path(record_to)):
            raise ValueError(f"record_to: {problem}")
    bots = list(make_bots(["heuristic"], seed) if opponents is None else opponents)
    _check_bots(bots)
    env = raw_env(rules)
    env.reset(seed=seed)
    game = env.game
    status = 1
    try:
        status = _play_hand(env, seat, bots, read)
    finally:  # also for Ctrl-C: the hand so far
        if record_to is not None and not save_record(game, Path(record_to)):
            status = 1
    return status


def _play_hand(env: raw_env, seat: int, bots: list[Any], read: Callable[[str], str]) -> int:
    """The hand of ``env`` (just reset) from the player's first decision on; ``play``'s result."""
    game = env.game
    if game is None:
        raise RuntimeError("the env has no hand: reset it before playing")
    by_seat = {(seat + 1 + k) % 4: bot for k, bot in enumerate(bots)}
    memory = SeatMemory(1)  # stateful bots: one hand, each seat starts fresh
    print(f"You are seat {seat}. Seat {game.view(seat)['dealer']} deals. Type ? for help.\n")
    while (actor := game.to_act()) is not None:  # None: the hand is over
        if actor == seat:
            print(render_seat(game, seat, player=True))  # numbered actions, the draw set apart
            choice = ask(f"seat {seat} > ", game.legal(), read)
            if choice is None:
                print("bye")
                return 1
            for a in action_from_str(choice):  # three picks for an exchange
                env.step(a)
        else:
            bot = by_seat[actor]
            before = len(game.record()["actions"])
            mask = env.observe(AGENTS[actor])["action_mask"]
            env.step(ask_one(bot, game.state_view(), mask, game.rules, actor, memory, 0))
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
    """CLI entry point; bad usage exits with status 2 and one line on stderr."""
    p = argparse.ArgumentParser(
        prog="sichuan-play",
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat (0..3)")
    p.add_argument(
        "--seed", type=int_arg(0, 2**64 - 1), default=None, help="deal this hand (default: random)"
    )
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS), help="rule preset")
    p.add_argument(
        "--opponents",
        nargs="+",
        default=["heuristic"],
        metavar="AGENT",
        help="1 agent for all bots, or 3 (registered names or checkpoint paths)",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="save the hand's game record here (JSON; also when you quit midway)",
    )
    args = p.parse_args(argv)
    if args.record is not None and (problem := path_problem(args.record)):
        p.error(f"--record: {problem}")
    try:
        bots = make_bots(args.opponents, args.seed)
        _check_bots(bots)
    except (ValueError, ImportError) as exc:
        p.error(str(exc))
    try:
        return play(
            args.seat, PRESETS[args.preset], args.seed, opponents=bots, record_to=args.record
        )
    except KeyboardInterrupt:
        print("\nbye")
        return 1


def cli() -> int:
    """Console-script entry point (``sichuan-play``): exit status, never a traceback."""
    return run(main, "sichuan-play")


if __name__ == "__main__":
    sys.exit(cli())
