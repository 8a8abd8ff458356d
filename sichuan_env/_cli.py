"""What the command-line tools share: argument validators and an output-path check.

Every CLI of the project (``sichuan-play``, ``sichuan-replay``,
``sichuan-eval``, ``python -m sichuan_env``, ``benchmarks.*``) rejects bad
usage with one ``argparse`` error line and exit status 2, never a traceback:
numeric options go through ``int_arg`` / ``float_arg`` (``type=``: NaN,
infinities and out-of-range values are usage errors), output files and folders
are checked with ``path_problem`` / ``dir_problem`` before any work starts, bad
input (a damaged file, a run of another script) is one line and exit status 1
through ``fail``, and ``run`` turns Ctrl-C, a closed output pipe (``| head``)
and any other ``OSError`` (a full disk) into an exit status instead of a
traceback. Files are written whole or not at all (``write_atomic``, from
``sichuan_env._files``), and an output folder that holds a tool's earlier
output is resumed, replaced (``--overwrite``) or refused (``claim_output_or_exit``).
Imports nothing from the package, so any layer may use it.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ._files import claim_output, write_atomic, write_if_changed

__all__ = [
    "MAX_SEED",
    "PlainHelp",
    "add_overwrite",
    "announce_compiles",
    "claim_output_or_exit",
    "dir_problem",
    "fail",
    "float_arg",
    "int_arg",
    "path_problem",
    "plain_text",
    "run",
    "write_atomic",
    "write_if_changed",
]


_REST_ROLE = re.compile(r":[a-z]+:`([^`]+)`")
_REST_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """A docstring as plain text for ``--help``: reST literals and roles lose their markup.

    The line layout is kept (``PlainHelp`` prints descriptions as written).
    """
    text = _REST_ROLE.sub(r"\1", text)
    return _REST_LITERAL.sub(r"\1", text)


class PlainHelp(argparse.RawDescriptionHelpFormatter):
    """``--help`` as plain text: the description as written, its reST markup dropped."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return super()._fill_text(plain_text(text), width, indent)

    def _expand_help(self, action: argparse.Action) -> str:
        return plain_text(super()._expand_help(action))


def int_arg(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` ``type=`` that accepts integers in ``lo..hi`` (no upper bound: ``hi=None``)."""
    span = f"{lo}..{hi}" if hi is not None else f">= {lo}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def float_arg(
    lo: float, hi: float, *, include_lo: bool = False, finite: bool = True
) -> Callable[[str], float]:
    """An ``argparse`` ``type=`` that accepts numbers with ``lo < x <= hi`` (``lo <= x`` with ``include_lo``).

    NaN is always refused, and so are ``inf`` / ``-inf`` unless ``finite=False`` (then only
    the range decides). Every float option of a training or dataset CLI goes through it, so
    ``--lr inf`` or ``--minutes nan`` is one usage line (exit 2), not a run that writes
    non-finite weights.
    """
    span = f"[{lo}, {hi}]" if include_lo else f"({lo}, {hi}]"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number in {span}, got {text!r}") from None
        if math.isnan(value) or (finite and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"expected a finite number in {span}, got {text}")
        if not (lo <= value if include_lo else lo < value) or value > hi:
            raise argparse.ArgumentTypeError(f"expected a number in {span}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


MAX_SEED = 2**31 - 1
"""The largest ``--seed`` of the training scripts (seeds are offset and combined, and
``torch.manual_seed`` takes 64 bits at most)."""


def fail(prog: str, message: object) -> NoReturn:
    """Report bad input (a file, a run, data) as one line ``prog: error: message``; exit status 1.

    The input-error twin of ``argparse``'s ``p.error`` (usage, status 2): raises
    ``SystemExit(1)``, so ``run`` and in-process callers see the same status. The message
    is put on one line and capped at 600 characters.
    """
    text = " ".join(str(message).split())
    if len(text) > 600:
        text = text[:597] + "..."
    print(f"{prog}: error: {text}", file=sys.stderr)
    raise SystemExit(1)


def dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot be used as an output folder (None when it can); creates nothing.

    A folder that exists, or one whose nearest existing parent is a writable folder, is fine.
    """
    for p in (path, *path.parents):
        if p.exists():
            if not p.is_dir():
                return f"{path} is not a directory" if p == path else f"{p} is not a directory"
            if not os.access(p, os.W_OK | os.X_OK):
                return f"cannot write in {p}"
            return None
    return None


def path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written (None when it can); leaves no new file behind.

    Creates missing parent folders (the tools would create them anyway).
    """
    if path.is_dir():
        return f"{path} is a directory"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"cannot write {path}: {parent} is not a directory"
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        with path.open("a", encoding="utf-8"):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    return None


def add_overwrite(p: argparse.ArgumentParser, what: str = "output") -> None:
    """Add ``--overwrite``: replace the tool's existing output in its folder (``claim_output``)."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace an existing {what} in the folder (its files only; others are kept)",
    )


def claim_output_or_exit(
    p: argparse.ArgumentParser,
    flag: str,
    path: Path,
    owned: Sequence[str],
    *,
    resume: bool | None,
    overwrite: bool,
    what: str = "output",
    remove: bool = True,
) -> bool:
    """``claim_output`` for a CLI: a refusal is ``p.error`` (exit 2), a failed removal exit 1.

    Returns:
        Whether ``path`` holds the tool's output to resume (see ``claim_output``).
    """
    try:
        return claim_output(
            path, owned, resume=resume, overwrite=overwrite, what=what, remove=remove
        )
    except ValueError as exc:
        p.error(f"{flag}: {exc}")
    except OSError as exc:
        fail(p.prog, f"{flag}: cannot remove the old {what} in {path}: {exc.strerror or exc}")


def announce_compiles(prog: str) -> None:
    """Print the library's note of a cold numba compile as one stderr line ``prog: ...``.

    ``sichuan_env._jit`` logs it (``INFO`` on the ``sichuan_env.jit`` logger) when the
    first kernel of the process finds no cached machine code; ``run`` calls this, so
    every command-line tool says what it is doing before a silent half minute. Once
    per process; the line does not reach the root logger's handlers too.
    """
    from ._jit_time import announce_to_stderr  # numba: imported by the tool anyway

    announce_to_stderr(prog)


def run(main: Callable[[], Any], prog: str) -> int:
    """Call a CLI's ``main()`` as a console script: its exit status, never a traceback.

    ``main`` returning an int is the status (anything else counts as 0); Ctrl-C
    gives 130 with one line on stderr; a reader that went away (``| head``)
    gives 1 quietly, as Unix tools do; any other ``OSError`` (a full disk, a folder that
    cannot be written) is one line ``prog: error: ...`` and status 1.
    """
    announce_compiles(prog)  # a cold numba cache: one line on stderr, not a silent wait
    try:
        code = main()
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:  # Python would report the broken pipe again when it flushes stdout at exit
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        where = getattr(exc, "filename", None)
        text = " ".join((f"{where}: {reason}" if where else reason).split())[:600]
        print(f"{prog}: error: {text}", file=sys.stderr)
        return 1
    return code if isinstance(code, int) and not isinstance(code, bool) else 0
