"""Reading a viewer's input: record files and JSON Lines files, one ``Source`` per record.

A record is read only from a regular file (no FIFO, device or ``/dev/zero``:
``open_regular``), and at most ``MAX_BYTES`` of a ``.json`` file or of one line
of a ``.jsonl`` file is read. A JSON Lines file is scanned line by line (each
line's record is read again, and checked, when its page is made); a line is a
record, or an object with the record under ``"record"`` whose other short fields
label the page. Every problem is a ``ValueError`` with a short reason, raised
when the source is loaded, so one bad file or line never stops the others.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..replay import MAX_BYTES

MAX_RECORDS = 10_000
"""Most pages written in one run (a larger input needs ``--limit``); also the most blank
lines a JSON Lines file may hold."""
LABEL_FIELDS = 4
"""Most fields of a JSON Lines wrapper object shown in the index, each at most 40 characters."""


def file_kind(mode: int) -> str:
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


def open_regular(path: Path) -> int:
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
        raise ValueError(f"cannot read: {file_kind(mode)}, not a record file")
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
    fd = open_regular(path)
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
class Source:
    """One record to give a page: a ``.json`` file or one line of a ``.jsonl`` file."""

    name: str
    """The record's name in messages and (with a label) in the index and page title."""
    stem: str
    """Its page's file name without ``.html`` (before ``_page_names`` makes it distinct)."""
    load: Callable[[], tuple[Any, str]]
    """Reads the record: ``(record, title)``, or ValueError with the reason."""


def file_source(path: Path) -> Source:
    """The source of a ``.json`` record file."""
    return Source(str(path), path.stem, lambda: (_read(path), path.name))


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
    fd = open_regular(path)
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


def _failing(name: str, stem: str, reason: str) -> Source:
    """A source that only reports ``reason`` (a file or line that cannot be read)."""

    def load() -> tuple[Any, str]:
        raise ValueError(reason)

    return Source(name, stem, load)


def _jsonl_sources(path: Path, room: int) -> list[Source]:
    """One source per non-blank line of the JSON Lines file ``path``, at most ``room`` of them.

    Each line is read here only up to ``MAX_BYTES`` (to find where the next
    begins); its record is read again, and checked, when its page is made. A
    line over the bound, or more than ``MAX_RECORDS`` blank lines, ends the
    file with a source that reports it.
    """
    try:
        fd = open_regular(path)
    except ValueError as exc:
        return [_failing(str(path), path.stem, str(exc))]
    sources: list[Source] = []
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
                sources.append(Source(name, stem, partial(_line_record, path, offset, lineno)))
    except OSError as exc:
        sources.append(_failing(str(path), path.stem, f"cannot read: {exc.strerror or exc}"))
    finally:
        os.close(fd)
    return sources


def is_jsonl(path: Path) -> bool:
    """Whether ``path`` names a JSON Lines file (``.jsonl``, any case)."""
    return path.suffix.lower() == ".jsonl"


def record_sources(paths: list[Path], room: int) -> list[Source]:
    """The records of ``paths`` (``.json`` files and ``.jsonl`` files), at most ``room``."""
    out: list[Source] = []
    for path in paths:
        if len(out) >= room:
            break
        if is_jsonl(path):
            out.extend(_jsonl_sources(path, room - len(out)))
        else:
            out.append(file_source(path))
    return out
