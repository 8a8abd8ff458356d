"""``python -m sichuan_env.viewer RECORD.json [-o replay.html] [--seat S] [--agent NAME]``.

Writes one self-contained HTML page (inline CSS and JS; it opens from disk,
offline) that replays a game record (RULES.md §10) decision by decision. Given
a directory, writes one page per ``*.json`` record in it and an
``index.html`` linking them into the output directory (a record whose page
name is taken, ``index.json`` say, gets ``index-1.html``).

A record is read only from a regular file of at most 16 MB (no FIFO, device
or ``/dev/zero``). Every page is written to a temporary file next to it and
renamed into place, so a failed write never leaves a truncated page.

Exit status: 0 written; 1 a record could not be read or is not a valid record,
or a page could not be written (one line on stderr per file); 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from .._cli import run
from ..replay import MAX_BYTES
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


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _read(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (ValueError with a short reason otherwise).

    Only a regular file is read, and at most ``MAX_BYTES`` of it: the file is
    opened without blocking (a FIFO with no writer would wait forever) and
    checked with ``fstat`` before a byte is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"cannot read: {_kind(mode)}, not a record file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise ValueError(f"cannot read: larger than {MAX_BYTES >> 20} MB, not a record")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read: not UTF-8 text ({exc.reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("not JSON: nested too deeply") from None


def _page(
    path: Path, seat: int | None, annotator: AgentAnnotator | None, href: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The page of one record file and its index entry (``href``: the page's file name)."""
    record = _read(path)
    page = render_page(record, title=path.name, seat=seat, annotator=annotator)
    res = validate_record(record).result()  # the engine's, not the file's
    entry = {
        "name": path.name,
        "href": href if href is not None else path.with_suffix(".html").name,
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
    return f"{path} is {_kind(mode)}, not a page to replace"


def _page_names(files: list[Path]) -> list[str]:
    """A distinct page name per record: ``NAME.html``, else ``NAME-1.html``, ``NAME-2.html``, ...

    ``index.html`` is the index's; names are compared case-insensitively (as
    some file systems do).
    """
    taken = {"index.html"}
    names = []
    for f in files:
        name, k = f"{f.stem}.html", 0
        while name.casefold() in taken:
            k += 1
            name = f"{f.stem}-{k}.html"
        taken.add(name.casefold())
        names.append(name)
    return names


def _one(
    src: Path, out: Path, seat: int | None, annotator: AgentAnnotator | None
) -> dict[str, Any] | None:
    """Write the page of ``src`` to ``out``; its index entry, or None (reported on stderr)."""
    try:
        page, entry = _page(src, seat, annotator, out.name)
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
        files = sorted(f for f in src.glob("*.json") if not f.is_dir())  # FIFOs are refused, loudly
        if not files:
            print(f"{PROG}: {src}: no *.json records in this directory", file=sys.stderr)
            return 1
        out_dir = args.output if args.output is not None else Path(f"{src.resolve().name}-replays")
        if out_dir.exists() and not out_dir.is_dir():
            p.error(f"-o {out_dir} is not a directory")
        pages = [out_dir / name for name in _page_names(files)]
        for page in [out_dir / "index.html", *pages]:
            problem = _output_problem(page)
            if problem:
                p.error(problem)
        done = [_one(f, page, args.seat, annotator) for f, page in zip(files, pages, strict=True)]
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
    problem = _output_problem(out)
    if problem:
        p.error(problem)
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
