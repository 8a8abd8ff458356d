"""``sichuan-eval`` (``python -m sichuan_env.agents.eval``): duplicate matches from the command line.

    sichuan-eval --walls 500 --lineup heuristic random random random
    sichuan-eval --walls 5000 --ray local --workers 2   # on Ray (sichuan_env.agents.eval.distributed)
    sichuan-eval --walls 4 --records runs/match   # and keep every hand's record
    sichuan-viewer runs/match/records.jsonl -o runs/match/pages   # replay them in a browser

Every wall is played four times, the lineup rotated by one seat each time,
so luck of the deal cancels out. A lineup entry is any agent spec of the
registry (``sichuan_env.agents.registry``): a registered name (random,
heuristic, ...), a checkpoint path that a registered loader accepts, or
``package.module:Class``. Reported per agent: points per hand with a 95%
confidence interval (one sample per wall: the agent's mean over its seats
and rotations), win rate, deal-in rate (paid a win on its discard or its
robbed kong), average fan of its wins, and at exhaustive draws the
flower-pig and not-tenpai rates. Prints a table and writes JSON.

Adjusted estimates are on by default: for one agent against three copies of
one policy the rollouts can play (three heuristics, say), the advantage-sum
estimate (``sichuan_env.agents.eval.advantage``; ``--estimator``, ``--reference``,
``--reps``);
otherwise the luck adjustment (``sichuan_env.agents.eval.luck``) where the
shipped value model covers the preset: ``points_per_hand_adjusted``
and ``ci95_adjusted`` beside the plain ones, unbiased whatever the model, with
narrower intervals; the JSON's ``per_wall`` holds every agent's per-wall
samples, plain and adjusted, for pairing with another match on the same walls.
``--no-adjust`` turns it off; ``--target-ci X`` plays block after block until
every agent's (adjusted, else plain) 95% interval is at most ``X``, with
``--walls`` as the cap.

``--records DIR`` also writes every hand's game record (docs/rules.md §10) to
``DIR/records.jsonl``, one JSON object a line, in wall then rotation order:
``{"wall": w, "rotation": r, "seats": [agent of seat 0..3], "record": {...}}``;
``sichuan-viewer`` reads that file (or ``DIR``) and writes one page per hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sichuan_env.agents.eval.adjust import (
    AdjustError,
    Corrections,
    add_estimator_args,
    add_luck_args,
    advantage_for,
    model_for,
    per_wall_doc,
    target_stop,
)
from sichuan_env.agents.eval.distributed import RayMissingError, play_duplicate_ray
from sichuan_env.agents.eval.evaluate import (
    BLOCK_WALLS,
    MAX_WALLS,
    make_lineup_agents,
    play_duplicate,
)
from sichuan_env.agents.eval.match_stats import per_wall, print_table, summarize
from sichuan_env.agents.registry import describe

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import (
    PlainHelp,
    add_overwrite,
    claim_output_or_exit,
    fail,
    float_arg,
    int_arg,
    path_problem,
    run,
    write_atomic,
)
from sichuan_env._progress import Stopwatch
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.tiles import InputTypeError

RECORDS_FILE = "records.jsonl"
"""The file that ``--records DIR`` writes in ``DIR``."""


def record_lines(
    lineup: list[str], records: list[tuple[int, int, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """One JSON object per hand for ``--records``, in wall then rotation order.

    Args:
        lineup: the agents of seats 0..3 in the first rotation.
        records: ``[(wall, rotation, record)]`` as ``play_duplicate`` returns them.

    Returns:
        ``{"wall", "rotation", "seats", "record"}`` per hand; ``seats[s]`` is the agent
        that played seat ``s`` (in rotation ``r``: ``lineup[(s + r) % 4]``).
    """
    return [
        {
            "wall": wall,
            "rotation": rot,
            "seats": [lineup[(s + rot) % 4] for s in range(4)],
            "record": record,
        }
        for wall, rot, record in sorted(records, key=lambda x: (x[0], x[1]))
    ]


def write_records(path: Path, lines: list[dict[str, Any]]) -> None:
    """Write ``lines`` to ``path`` as JSON Lines, whole or not at all (``write_atomic``).

    Raises:
        OSError: the file could not be written (``path`` is left as it was).
    """
    write_atomic(
        path, (json.dumps(line, separators=(",", ":"), allow_nan=False) + "\n" for line in lines)
    )


def time_line(
    played: str, in_play: float, adjust: float | None, where: str = "",
    label: str = "luck adjustment",
) -> str:  # fmt: skip
    """The parenthesis of the summary line: play time, then the luck adjustment's, each once.

    Args:
        played: ``Stopwatch.describe()`` of the play, taken before the adjustment.
        in_play: seconds of adjustment inside the play (``--target-ci``'s checks), taken
            out of the play time so no second is counted twice.
        adjust: seconds of the whole adjustment, or None without one.
        where: a note on the play time (the Ray workers').
        label: what the adjustment is ("luck adjustment", "advantage estimate").

    Returns:
        ``"play 2.0 s; luck adjustment 6.9 s"`` (a cold compile's note after the play time).
    """
    head, _, rest = played.partition(" s")
    try:
        text = f"play {max(0.0, float(head) - in_play):.1f} s{rest}{where}"
    except ValueError:  # not "12.3 s; ...": shown as it is
        text = f"play {played}{where}"
    return text if adjust is None else f"{text}; {label} {adjust:.1f} s"


def results_json(doc: dict[str, Any]) -> str:
    """``doc`` as strict JSON (``allow_nan=False``: NaN and infinities are not JSON).

    Raises:
        ValueError: a non-finite number in ``doc``.
    """
    return json.dumps(doc, indent=2, allow_nan=False)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (shared with the tests)."""
    p = argparse.ArgumentParser(
        prog="sichuan-eval",
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument(
        "--walls",
        type=int_arg(1, MAX_WALLS),
        default=200,
        help=f"distinct walls (each played 4 times), 1..{MAX_WALLS}",
    )
    p.add_argument(
        "--lineup",
        nargs=4,
        default=["heuristic", "random", "random", "random"],
        metavar="AGENT",
        help=f"the agents of seats 0..3 in the first rotation ({describe()})",
    )
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS), help="rule preset")
    p.add_argument("--seed", type=int_arg(0), default=0, help="seed of the walls and agents (>= 0)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument(
        "--records",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"write every hand's game record to DIR/{RECORDS_FILE} (for sichuan-viewer)",
    )
    add_overwrite(p, f"{RECORDS_FILE} (with --records)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--block-walls",
        type=int_arg(1, MAX_WALLS),
        default=BLOCK_WALLS,
        help="walls per block, the unit of work (agents are reseeded per block)",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="play the blocks on a Ray cluster (its address, or 'local'); needs .[scale]",
    )
    p.add_argument("--workers", type=int_arg(1, 4096), default=2, help="Ray workers (with --ray)")
    add_luck_args(p)
    add_estimator_args(p)
    p.add_argument(
        "--target-ci", type=float_arg(0, 100), default=None, metavar="X",
        help="play blocks until every agent's 95%% CI (adjusted where available) is at most X "
             "points per hand; --walls is the cap (not with --ray)",
    )  # fmt: skip
    return p


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document.

    Bad usage (unknown agents, a wall count out of range, an unwritable
    ``--json`` path) exits with status 2 and one line on stderr, before any hand is played.
    """
    p = build_parser()
    args = p.parse_args(argv)
    try:
        agents = make_lineup_agents(args.lineup, args.seed)
    except ValueError as exc:
        p.error(str(exc))
    except ImportError as exc:  # a lazily registered agent whose dependency is missing
        p.error(f"cannot load an agent of the lineup: {exc}; {describe()}")
    if args.json is not None and (problem := path_problem(args.json)):
        p.error(f"--json: {problem}")
    records_path = None if args.records is None else args.records / RECORDS_FILE
    if records_path is not None and (problem := path_problem(records_path)):
        p.error(f"--records: {problem}")
    if args.overwrite and args.records is None:
        p.error("--overwrite is for --records (a --json file is always replaced whole)")
    if args.records is not None:  # replaced whole at the end: a failed match keeps the old one
        claim_output_or_exit(p, "--records", args.records, (RECORDS_FILE,), resume=None,
                             overwrite=args.overwrite, what="match's records", remove=False)  # fmt: skip
    if args.target_ci is not None and args.ray is not None:
        p.error("--target-ci plays block after block in this process; it does not take --ray")
    rules = RuleConfig.preset(args.preset)
    if args.fine_tune and args.target_ci is not None:
        p.error("--fine-tune fits on the whole match; it does not take --target-ci")
    if args.fine_tune and args.no_adjust:
        p.error("--fine-tune is part of the luck adjustment; drop --no-adjust")
    advantage = advantage_for(p, args, rules)
    label = "luck adjustment" if advantage is None else "advantage estimate"
    if advantage is not None and not args.quiet:
        print(f"advantage-sum estimate: {advantage.reps} paired rollouts at every decision that "
              f"is not {advantage.reference}'s", file=sys.stderr)  # fmt: skip
    model = None if advantage is not None else model_for(args, rules, quiet=args.quiet)
    try:
        corrections: Any = (
            advantage if advantage is not None
            else Corrections(model, args.lineup, args.fine_tune) if model is not None else None
        )  # fmt: skip
    except ValueError as exc:
        p.error(str(exc))
    stop = None
    if args.target_ci is not None:
        log = None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
        stop = target_stop(args.lineup, corrections, args.target_ci, log)
    watch = Stopwatch()  # the match's time, a cold cache's numba compile left out
    if args.ray is None:
        try:
            records = play_duplicate(
                args.lineup, args.walls, rules, args.seed, not args.quiet, agents,
                args.block_walls, stop=stop,
            )  # fmt: skip
        except (IllegalActionError, InputTypeError) as exc:  # a bad answer: one line
            fail("sichuan-eval", exc)
        except AdjustError as exc:  # --target-ci's checks: nothing is written
            fail("sichuan-eval", f"{label}: {exc}")
    else:
        try:
            records = play_duplicate_ray(
                args.lineup, args.walls, rules, args.seed, address=args.ray,
                workers=args.workers, block_walls=args.block_walls, progress=not args.quiet,
            )  # fmt: skip
        except RayMissingError as exc:
            p.error(str(exc))
    played = watch.describe()  # before the adjustment: its time is reported on its own
    in_play = 0.0 if corrections is None else corrections.seconds  # --target-ci's checks
    dt = max(0.0, watch.seconds - in_play)
    walls = max(w for w, _, _ in records) + 1
    try:
        corr = corrections.of(records, not args.quiet) if corrections is not None else None
    except AdjustError as exc:  # a record it cannot replay, a model that overflows: one line
        fail("sichuan-eval", f"{label}: {exc}")
    summary = summarize(args.lineup, records, walls, corr)
    where = ", the Ray workers' compile included" if args.ray else ""
    adjust = None if corrections is None else corrections.seconds
    print(
        f"duplicate match: {walls} walls x 4 rotations, lineup {args.lineup}, "
        f"preset {args.preset} ({time_line(played, in_play, adjust, where, label)})"
    )
    doc = {
        "lineup": args.lineup,
        "walls": walls,
        "walls_cap": args.walls,
        "target_ci": args.target_ci,
        "adjusted": corrections is not None,
        "estimator": None
        if corrections is None
        else "luck"
        if advantage is None
        else "advantage-sum",
        "advantage": None if advantage is None else advantage.describe(),
        "value_model": None
        if model is None
        else {"spec": str(args.value_model), "sha256": model.doc.get("sha256")},
        "adjust_seconds": None if corrections is None else corrections.seconds,
        "preset": args.preset,
        "seed": args.seed,
        "block_walls": args.block_walls,
        "workers": args.workers if args.ray else 1,
        "seconds": dt,
        "jit_seconds": watch.jit_seconds,
        "agents": summary,
        "per_wall": per_wall_doc(per_wall(args.lineup, records, walls, corr)),
    }
    try:
        text = results_json(doc) if args.json else ""
    except ValueError as exc:  # never NaN in a results file: one line, nothing written
        fail("sichuan-eval", f"the results hold a non-finite number: {exc}")
    print_table(summary)
    if args.json:
        try:
            write_atomic(args.json, text)
        except OSError as exc:  # the old file is kept whole (write_atomic)
            fail("sichuan-eval", f"cannot write {args.json}: {exc.strerror or exc}")
        print(f"wrote {args.json}")
    if records_path is not None:
        try:
            write_records(records_path, record_lines(args.lineup, records))
        except OSError as exc:
            fail("sichuan-eval", f"cannot write {records_path}: {exc.strerror or exc}")
        print(f"wrote {len(records)} hand records to {records_path}")
    return doc


def cli() -> int:
    """Console-script entry point (``sichuan-eval``): exit status, never a traceback."""
    return run(main, "sichuan-eval")


if __name__ == "__main__":
    sys.exit(cli())
