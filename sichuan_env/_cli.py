"""What the command-line tools share: argument validators and an output-path check.

Every CLI of the project (``sichuan-play``, ``sichuan-replay``,
``sichuan-eval``, ``python -m sichuan_env``, ``benchmarks.*``) rejects bad
usage with one ``argparse`` error line and exit status 2, never a traceback:
numeric options go through ``int_arg`` / ``float_arg`` (``type=``), and
output files are checked with ``path_problem`` before any work starts, and
``run`` turns Ctrl-C and a closed output pipe (``| head``) into an exit
status instead of a traceback.
Imports nothing from the package, so any layer may use it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


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


def float_arg(lo: float, hi: float) -> Callable[[str], float]:
    """An ``argparse`` ``type=`` that accepts finite numbers with ``lo < x <= hi``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or not lo < value <= hi:
            raise argparse.ArgumentTypeError(f"expected a number in ({lo}, {hi}], got {text}")
        return value

    parse.__name__ = "number"
    return parse


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


def run(main: Callable[[], Any], prog: str) -> int:
    """Call a CLI's ``main()`` as a console script: its exit status, never a traceback.

    ``main`` returning an int is the status (anything else counts as 0); Ctrl-C
    gives 130 with one line on stderr; a reader that went away (``| head``)
    gives 1 quietly, as Unix tools do.
    """
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
    return code if isinstance(code, int) and not isinstance(code, bool) else 0
