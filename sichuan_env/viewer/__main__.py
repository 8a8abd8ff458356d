"""``python -m sichuan_env.viewer RECORD.json [-o replay.html] [--seat S] [--agent NAME]``.

Writes one self-contained HTML page (inline CSS and JS; it opens from disk,
offline) that replays a game record (docs/rules.md §10) decision by decision.

Given a JSON Lines file (``*.jsonl``: ``sichuan-eval --records``, a dataset's
``records.jsonl``), writes one page per line and an ``index.html`` linking
them into the output directory (default: ``NAME-replays``). A line is a record,
or an object with the record under ``"record"`` (its other short fields, such as
``game_id`` or ``wall``, label the page in the index); blank lines are skipped.
Given a directory, does the same for every ``*.json`` record and every
``*.jsonl`` file in it (a page whose name is taken, ``index.json`` say, gets
``index-1.html``). At most 10,000 pages are written in one run: ``--limit N``
takes the first N records of a larger input (a page is about 130 KB). On a
terminal, a progress bar on stderr counts the pages (``--quiet``: none).

A record is read only from a regular file (no FIFO, device or ``/dev/zero``),
and at most 16 MB of a ``.json`` file or of one line of a ``.jsonl`` file is
read. Nothing read is trusted: every record is replayed by the engine before
its page is written. Every page is written to a temporary file next to it and
renamed into place, so a failed write never leaves a truncated page.

Exit status: 0 written; 1 a record could not be read or is not a valid record
(one line on stderr per file or line, naming it; the others still get their
pages), or a page could not be written; 2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from .._cli import PlainHelp, int_arg, run
from .._progress import progress_bar
from .agent import AgentAnnotator, load_agent
from .build import render_index, render_page
from .snapshot import validate_record
from .sources import (
    MAX_RECORDS,
    Source,
    file_kind,
    file_source,
    is_jsonl,
    open_regular,
    record_sources,
)

PROG = "sichuan-viewer"
MAX_ERRORS = 20
"""Bad records reported one by one; after that the run stops."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=PlainHelp)
    p.add_argument(
        "record",
        type=Path,
        help="a game record (JSON), a JSON Lines file of records (.jsonl), or a directory of them",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="the page to write (default: RECORD's name with .html, in the current directory); "
        "for a .jsonl file or a directory, the output directory (default: NAME-replays)",
    )
    p.add_argument(
        "--limit",
        type=int_arg(1, MAX_RECORDS),
        default=None,
        metavar="N",
        help=f"only the first N records of a .jsonl file or a directory (1..{MAX_RECORDS})",
    )
    p.add_argument(
        "--seat", type=int, choices=range(4), default=None, help="open in this seat's view"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
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


def _page(
    src: Source, seat: int | None, annotator: AgentAnnotator | None, href: str
) -> tuple[str, dict[str, Any]]:
    """The page of one record and its index entry (``href``: the page's file name)."""
    record, title = src.load()
    page = render_page(record, title=title, seat=seat, annotator=annotator)
    res = validate_record(record).result()  # the engine's, not the file's
    entry = {
        "name": title,
        "href": href,
        "actions": len(record["actions"]),
        "scores": res["scores"],
        "wins": len(res["wins"]),
        "end": res.get("end"),
    }
    return page, entry


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (ValueError with the reason).

    The text is encoded first, written to a temporary file in the same folder
    and renamed over ``path`` (``os.replace``), so an existing page survives
    any failure byte for byte. The new file gets the old one's permissions, or
    the umask's.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode("ascii")
        raise ValueError(
            f"cannot write {path}: text that is not valid Unicode ({bad}) in the record "
            "or its file name"
        ) from None
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _output_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a page (None when it can): only a regular file is replaced."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    return f"{path} is {file_kind(mode)}, not a page to replace"


def _page_names(stems: list[str]) -> list[str]:
    """A distinct page name per record: ``STEM.html``, else ``STEM-1.html``, ``STEM-2.html``, ...

    ``index.html`` is the index's; names are compared case-insensitively (as
    some file systems do).
    """
    taken = {"index.html"}
    names = []
    for stem in stems:
        name, k = f"{stem}.html", 0
        while name.casefold() in taken:
            k += 1
            name = f"{stem}-{k}.html"
        taken.add(name.casefold())
        names.append(name)
    return names


def _one(
    src: Source, out: Path, seat: int | None, annotator: AgentAnnotator | None
) -> dict[str, Any] | None:
    """Write the page of ``src`` to ``out``; its index entry, or None (reported on stderr)."""
    try:
        page, entry = _page(src, seat, annotator, out.name)
        _write(out, page)
    except ValueError as exc:
        print(f"{PROG}: {src.name}: {exc}", file=sys.stderr)
        return None
    return entry


def _on_a_terminal() -> bool:
    """Whether stderr is a terminal (the progress bar is for people, not for logs)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _many(
    p: argparse.ArgumentParser,
    args: argparse.Namespace,
    paths: list[Path],
    out_dir: Path,
    title: str,
    annotator: AgentAnnotator | None,
) -> int:
    """The pages of the records in ``paths`` and their index in ``out_dir``; the exit status."""
    if out_dir.exists() and not out_dir.is_dir():
        p.error(f"-o {out_dir} is not a directory")
    room = args.limit if args.limit is not None else MAX_RECORDS
    sources = record_sources(paths, room + 1)
    if len(sources) > room:
        if args.limit is None:
            print(
                f"{PROG}: {args.record}: more than {MAX_RECORDS} records; "
                "--limit N writes pages for the first N",
                file=sys.stderr,
            )
            return 1
        sources = sources[:room]
    if not sources:
        print(f"{PROG}: {args.record}: no records in it", file=sys.stderr)
        return 1
    pages = [out_dir / name for name in _page_names([s.stem for s in sources])]
    for page in [out_dir / "index.html", *pages]:
        problem = _output_problem(page)
        if problem:
            p.error(problem)
    entries, failed = [], 0
    columns = (TextColumn("pages"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    shown = not args.quiet and len(sources) > 1 and _on_a_terminal()
    with progress_bar(*columns, disable=not shown) as bar:
        task = bar.add_task("pages", total=len(sources))
        for source, page in zip(sources, pages, strict=True):
            entry = _one(source, page, args.seat, annotator)
            bar.advance(task)
            if entry is None:
                failed += 1
                if failed == MAX_ERRORS:
                    print(f"{PROG}: stopped after {MAX_ERRORS} bad records", file=sys.stderr)
                    break
            else:
                entries.append(entry)
    try:
        _write(out_dir / "index.html", render_index(entries, title=title))
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out_dir / 'index.html'} and {len(entries)} of {len(sources)} pages")
    return 1 if failed else 0


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
        paths = sorted(
            f for pattern in ("*.json", "*.jsonl") for f in src.glob(pattern) if not f.is_dir()
        )  # FIFOs are refused, loudly
        if not paths:
            print(f"{PROG}: {src}: no *.json or *.jsonl records in this directory", file=sys.stderr)
            return 1
        out_dir = args.output if args.output is not None else Path(f"{src.resolve().name}-replays")
        return _many(p, args, paths, out_dir, src.resolve().name, annotator)
    if is_jsonl(src):
        try:  # a file that cannot be read at all gets no output directory
            os.close(open_regular(src))
        except ValueError as exc:
            print(f"{PROG}: {src}: {exc}", file=sys.stderr)
            return 1
        out_dir = args.output if args.output is not None else Path(f"{src.stem}-replays")
        return _many(p, args, [src], out_dir, src.name, annotator)
    if args.limit is not None:
        p.error("--limit is for a .jsonl file or a directory")
    out = args.output if args.output is not None else Path(src.with_suffix(".html").name)
    if out.exists() and src.exists() and out.resolve() == src.resolve():
        p.error(f"-o {out} would overwrite the record itself")
    problem = _output_problem(out)
    if problem:
        p.error(problem)
    entry = _one(file_source(src), out, args.seat, annotator)
    if entry is None:
        return 1
    print(f"wrote {out} ({entry['actions']} decisions)")
    return 0


def cli() -> int:
    """Console-script entry point (``sichuan-viewer``): exit status, never a traceback."""
    return run(main, PROG)


if __name__ == "__main__":
    sys.exit(cli())
