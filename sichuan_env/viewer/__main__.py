"""``python -m sichuan_env.viewer RECORD.json [-o replay.html] [--seat S] [--agent NAME]``.

Writes one self-contained HTML page (inline CSS and JS; it opens from disk,
offline) that replays a game record (RULES.md §10) decision by decision. Given
a directory, writes one page per ``*.json`` record in it and an
``index.html`` linking them into the output directory.

Exit status: 0 written; 1 a record could not be read or is not a valid record
(one line on stderr per file); 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._cli import run
from .agent import AgentAnnotator, load_agent
from .build import render_index, render_page
from .snapshot import validate_record

PROG = "sichuan-viewer"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("record", type=Path, help="a game record (JSON), or a directory of records")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="the page to write (default: RECORD's name with .html, in the current directory); "
        "for a directory, the output directory (default: NAME-replays)",
    )
    p.add_argument(
        "--seat", type=int, choices=range(4), default=None, help="open in this seat's view"
    )
    p.add_argument(
        "--agent",
        default=None,
        metavar="NAME",
        help="annotate decisions with this agent's action probabilities (top 3)",
    )
    p.add_argument(
        "--agent-seats",
        type=int,
        nargs="+",
        choices=range(4),
        default=None,
        metavar="S",
        help="the seats whose decisions the agent annotates (default: all four)",
    )
    return p


def _read(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (ValueError with a short reason otherwise)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("not JSON: nested too deeply") from None


def _page(
    path: Path, seat: int | None, annotator: AgentAnnotator | None
) -> tuple[str, dict[str, Any]]:
    """The page of one record file and its index entry."""
    record = _read(path)
    page = render_page(record, title=path.name, seat=seat, annotator=annotator)
    res = validate_record(record).result()  # the engine's, not the file's
    entry = {
        "name": path.name,
        "href": path.with_suffix(".html").name,
        "actions": len(record["actions"]),
        "scores": res["scores"],
        "wins": len(res["wins"]),
        "end": res.get("end"),
    }
    return page, entry


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc}") from None


def _one(
    src: Path, out: Path, seat: int | None, annotator: AgentAnnotator | None
) -> dict[str, Any] | None:
    """Write the page of ``src`` to ``out``; its index entry, or None (reported on stderr)."""
    try:
        page, entry = _page(src, seat, annotator)
        _write(out, page)
    except ValueError as exc:
        print(f"{PROG}: {src}: {exc}", file=sys.stderr)
        return None
    return entry


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv``, write the page(s); returns the exit status (see the module docstring)."""
    p = _parser()
    args = p.parse_args(argv)
    annotator = None
    if args.agent is not None:
        try:
            agent = load_agent(args.agent)
            annotator = AgentAnnotator(
                agent, range(4) if args.agent_seats is None else args.agent_seats, args.agent
            )
        except ValueError as exc:
            p.error(f"--agent: {exc}")
    elif args.agent_seats is not None:
        p.error("--agent-seats needs --agent")
    src: Path = args.record
    if src.is_dir():
        files = sorted(f for f in src.glob("*.json") if f.is_file())
        if not files:
            print(f"{PROG}: {src}: no *.json records in this directory", file=sys.stderr)
            return 1
        out_dir = args.output if args.output is not None else Path(f"{src.resolve().name}-replays")
        done = [_one(f, out_dir / f.with_suffix(".html").name, args.seat, annotator) for f in files]
        entries = [e for e in done if e is not None]
        failed = len(done) - len(entries)
        try:
            _write(out_dir / "index.html", render_index(entries, title=f"{src.resolve().name}"))
        except ValueError as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {out_dir / 'index.html'} and {len(entries)} of {len(files)} pages")
        return 1 if failed else 0
    out = args.output if args.output is not None else Path(src.with_suffix(".html").name)
    if out.exists() and src.exists() and out.resolve() == src.resolve():
        p.error(f"-o {out} would overwrite the record itself")
    entry = _one(src, out, args.seat, annotator)
    if entry is None:
        return 1
    print(f"wrote {out} ({entry['actions']} decisions)")
    return 0


def cli() -> int:
    """Console-script entry point (``sichuan-viewer``): exit status, never a traceback."""
    return run(main, PROG)


if __name__ == "__main__":
    sys.exit(cli())
