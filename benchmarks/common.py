"""What every benchmark script shares: progress output, tables, machine and commit, the JSON file."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from sichuan_env import __version__
from sichuan_env._cli import int_arg, path_problem, write_atomic
from sichuan_env._jit_time import jit_time


def log(msg: str) -> None:
    """Progress on stderr, so the table on stdout stays clean."""
    print(msg, file=sys.stderr, flush=True)


def print_table(columns: list[tuple[str, str]], rows: list[list[str]]) -> None:
    """A ``rich`` table on stdout: ``columns`` are ``(heading, "left" | "right")``.

    A pipe or file gets the table at its natural width (for results pasted
    into docs); a terminal gets its own width.
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    for head, justify in columns:
        table.add_column(head, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*row)
    Console(highlight=False, width=None if sys.stdout.isatty() else 200).print(table)


def check_json_arg(parser, path: Path | None) -> None:
    """``parser.error`` (exit 2) before any work when ``--json`` cannot be written."""
    if path is not None and (problem := path_problem(path)):
        parser.error(f"--json: {problem}")


def add_collector_size_args(parser: argparse.ArgumentParser, rounds: int) -> None:
    """``--envs``, ``--steps`` and ``--rounds`` of the collector benchmarks (one definition)."""
    parser.add_argument("--envs", type=int_arg(1, 65536), default=1024)
    parser.add_argument("--steps", type=int_arg(1, 4096), default=32)
    parser.add_argument("--rounds", type=int_arg(1, 1000), default=rounds)


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def median_ci(xs: list[float], seed: int = 0) -> tuple[float, float, float]:
    """Median and a 95% percentile-bootstrap interval of the median."""
    a = np.asarray(xs, dtype=float)
    boot = np.median(np.random.default_rng(seed).choice(a, (2000, a.size)), axis=1)
    return float(np.median(a)), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))


def machine_info() -> dict:
    """What ran the benchmark."""
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "sichuan_env": __version__,
    }


def commit() -> str:
    """The git commit, with ``-dirty`` when the tree has changes."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], capture_output=True, text=True, check=False
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_results(name: str, body: dict[str, Any], path: Path | None) -> dict[str, Any]:
    """Add the common header (benchmark, time, commit, machine) and write the JSON file."""
    doc = {
        "benchmark": name,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": commit(),
        "machine": machine_info(),
        # numba compile time in this process: every timing above is taken after a warm-up
        # (``median_time``, the benchmarks' own warm-up calls), so none of it includes this;
        # benchmarks.cold_start measures the compile itself
        "jit_compile_s": jit_time().compiling,
        **body,
    }
    out = path or Path("benchmarks/results") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(doc, indent=2))
    except OSError as exc:
        log(f"cannot write {out}: {exc.strerror or exc}")
        raise SystemExit(1) from None
    print(f"\nwrote {out}")
    return doc
