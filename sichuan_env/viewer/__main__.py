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
takes the first N records of a larger input.

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
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .._cli import int_arg, run
from ..replay import MAX_BYTES
from .agent import AgentAnnotator, load_agent
from .build import render_index, render_page
from .snapshot import validate_record

PROG = "sichuan-viewer"
MAX_RECORDS = 10_000
"""Most pages written in one run (a larger input needs ``--limit``)."""
MAX_ERRORS = 20
"""Bad records reported one by one; after that the run stops."""
LABEL_FIELDS = 4
"""Most fields of a JSON Lines wrapper object shown in the index, each at most 40 characters."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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


def _open_regular(path: Path) -> int:
    """A read-only descriptor of ``path``, a regular file (ValueError with a short reason otherwise).

    The file is opened without blocking (a FIFO with no writer would wait forever)
    and checked with ``fstat`` before a byte is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"cannot read: {_kind(mode)}, not a record file")
    return fd


def _parse(data: bytes, where: str = "line") -> Any:
    """The JSON value in ``data`` (ValueError with a short reason otherwise).

    ``where`` is ``"line"`` for a whole file (the error names line and column)
    or ``"column"`` for one line of a JSON Lines file.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read: not UTF-8 text ({exc.reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if where == "column" else f"line {exc.lineno} column {exc.colno}"
        raise ValueError(f"not JSON: {exc.msg} ({at})") from None
    except RecursionError:
        raise ValueError("not JSON: nested too deeply") from None


def _read(path: Path) -> Any:
    """The JSON value in ``path``, a regular file of at most ``MAX_BYTES`` (else ValueError)."""
    fd = _open_regular(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise ValueError(f"cannot read: larger than {MAX_BYTES >> 20} MB, not a record")
    return _parse(data)


@dataclass(frozen=True)
class _Source:
    """One record to give a page: a ``.json`` file or one line of a ``.jsonl`` file."""

    name: str
    """The record's name in messages and (with a label) in the index and page title."""
    stem: str
    """Its page's file name without ``.html`` (before ``_page_names`` makes it distinct)."""
    load: Callable[[], tuple[Any, str]]
    """Reads the record: ``(record, title)``, or ValueError with the reason."""


def _file_source(path: Path) -> _Source:
    """The source of a ``.json`` record file."""
    return _Source(str(path), path.stem, lambda: (_read(path), path.name))


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (the cut marked ``...``)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _label(wrapper: dict[str, Any]) -> str:
    """The other fields of a JSON Lines wrapper object, as ``key=value, ...`` (bounded)."""
    parts: list[str] = []
    for key, value in wrapper.items():
        if key == "record":
            continue
        if len(parts) == LABEL_FIELDS:
            parts.append("...")
            break
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):  # pragma: no cover - parsed JSON dumps
            text = "?"
        parts.append(f"{_short(key)}={_short(text)}")
    return ", ".join(parts)


def _line_record(path: Path, offset: int, lineno: int) -> tuple[Any, str]:
    """Read line ``lineno`` (at byte ``offset``) of a JSON Lines file: ``(record, title)``.

    A line is a record, or an object that carries the record under ``"record"``
    (and no ``"format"``): its other fields label the page.
    """
    fd = _open_regular(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            f.seek(offset)
            data = f.readline(MAX_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES and not data.endswith(b"\n"):
        raise ValueError(f"cannot read: larger than {MAX_BYTES >> 20} MB, not a record")
    value = _parse(data, where="column")
    title = f"{path.name} line {lineno}"
    if isinstance(value, dict) and "record" in value and "format" not in value:
        label = _label(value)
        return value["record"], f"{title} ({label})" if label else title
    return value, title


def _failing(name: str, stem: str, reason: str) -> _Source:
    """A source that only reports ``reason`` (a file or line that cannot be read)."""

    def load() -> tuple[Any, str]:
        raise ValueError(reason)

    return _Source(name, stem, load)


def _jsonl_sources(path: Path, room: int) -> list[_Source]:
    """One source per non-blank line of the JSON Lines file ``path``, at most ``room`` of them.

    Each line is read here only up to ``MAX_BYTES`` (to find where the next
    begins); its record is read again, and checked, when its page is made. A
    line over the bound, or more than ``MAX_RECORDS`` blank lines, ends the
    file with a source that reports it.
    """
    try:
        fd = _open_regular(path)
    except ValueError as exc:
        return [_failing(str(path), path.stem, str(exc))]
    sources: list[_Source] = []
    blank = 0
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            lineno = 0
            while len(sources) < room:
                offset = f.tell()
                data = f.readline(MAX_BYTES + 1)
                if not data:
                    break
                lineno += 1
                name, stem = f"{path} line {lineno}", f"{path.stem}-line{lineno}"
                if len(data) > MAX_BYTES and not data.endswith(b"\n"):
                    why = f"larger than {MAX_BYTES >> 20} MB, not a record (the rest is not read)"
                    sources.append(_failing(name, stem, f"cannot read: {why}"))
                    break
                if not data.strip():
                    blank += 1
                    if blank > MAX_RECORDS:
                        why = f"more than {MAX_RECORDS} blank lines, not a records file"
                        sources.append(_failing(name, stem, why))
                        break
                    continue
                sources.append(_Source(name, stem, partial(_line_record, path, offset, lineno)))
    except OSError as exc:
        sources.append(_failing(str(path), path.stem, f"cannot read: {exc.strerror or exc}"))
    finally:
        os.close(fd)
    return sources


def _is_jsonl(path: Path) -> bool:
    return path.suffix.lower() == ".jsonl"


def _sources(paths: list[Path], room: int) -> list[_Source]:
    """The records of ``paths`` (``.json`` files and ``.jsonl`` files), at most ``room``."""
    out: list[_Source] = []
    for path in paths:
        if len(out) >= room:
            break
        if _is_jsonl(path):
            out.extend(_jsonl_sources(path, room - len(out)))
        else:
            out.append(_file_source(path))
    return out


def _page(
    src: _Source, seat: int | None, annotator: AgentAnnotator | None, href: str
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
    return f"{path} is {_kind(mode)}, not a page to replace"


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
    src: _Source, out: Path, seat: int | None, annotator: AgentAnnotator | None
) -> dict[str, Any] | None:
    """Write the page of ``src`` to ``out``; its index entry, or None (reported on stderr)."""
    try:
        page, entry = _page(src, seat, annotator, out.name)
        _write(out, page)
    except ValueError as exc:
        print(f"{PROG}: {src.name}: {exc}", file=sys.stderr)
        return None
    return entry


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
    sources = _sources(paths, room + 1)
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
    for source, page in zip(sources, pages, strict=True):
        entry = _one(source, page, args.seat, annotator)
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
    if _is_jsonl(src):
        try:  # a file that cannot be read at all gets no output directory
            os.close(_open_regular(src))
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
    entry = _one(_file_source(src), out, args.seat, annotator)
    if entry is None:
        return 1
    print(f"wrote {out} ({entry['actions']} decisions)")
    return 0


def cli() -> int:
    """Console-script entry point (``sichuan-viewer``): exit status, never a traceback."""
    return run(main, PROG)


if __name__ == "__main__":
    sys.exit(cli())
