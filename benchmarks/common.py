"""What every benchmark script shares: progress output, machine and commit, the JSON file."""

from __future__ import annotations

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

from sichuan_env import __version__


def log(msg: str) -> None:
    """Progress on stderr, so the table on stdout stays clean."""
    print(msg, file=sys.stderr, flush=True)


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


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
        **body,
    }
    out = path or Path("benchmarks/results") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {out}")
    return doc
