"""The PPO collector of another commit against the working tree, in alternating processes.

    python -m benchmarks.collector_ab HEAD~1 --pairs 5

``benchmarks.collector --baseline`` loads an older ``rollout.py`` beside the current
one, so both share today's kernels (features, ukeire, encoders, env); a change to a
kernel speeds both sides alike and does not show. This tool runs the whole package of
commit ``REF`` (``git archive``, laid out as the installed package: ``agents`` and
``train`` under ``sichuan_env``) and of the working tree (copied the same way; numba
compiles each copy once, in the first pair's warm-up), each in its own process running
``python -m benchmarks.collector``, alternating ``--pairs`` times so that both see the
same machine states. Prints each side's median decisions per second and collector's own
work per decision (encode + copies + bookkeeping), with bootstrap 95% intervals of the
medians, and the paired ratios; writes JSON like the other benchmarks. Pairs alternate
which side runs first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import numpy as np

from benchmarks.common import (
    add_collector_size_args,
    check_json_arg,
    log,
    median_ci,
    print_table,
    write_results,
)
from sichuan_env._cli import int_arg

ROOT = Path(__file__).resolve().parent.parent


def layout(src: Path, pkg: Path) -> None:
    """The checkout ``src`` as the installed package under ``pkg`` (with ``benchmarks``)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(src / "sichuan_env", pkg / "sichuan_env", ignore=skip)
    for sub in ("agents", "train"):
        if (src / sub).is_dir():
            shutil.copytree(src / sub, pkg / "sichuan_env" / sub, ignore=skip)
    shutil.copytree(src / "benchmarks", pkg / "benchmarks", ignore=skip)


def export(ref: str, dest: Path) -> str:
    """Commit ``ref``'s package under ``dest / "pkg"``; returns the commit's full hash."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        blob = subprocess.run(["git", "archive", "--format=tar", sha], cwd=ROOT,
                              capture_output=True, check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ValueError(
            f"cannot export {ref!r}: not a commit of this repository ({exc})"
        ) from None
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12+ / 3.11.4+
            tar.extractall(dest / "src", filter="data")
        else:  # pragma: no cover - older patch releases; the archive is our own commit's
            tar.extractall(dest / "src")
    layout(dest / "src", dest / "pkg")
    return sha


NEEDS = ("current", "collector_own_us_per_decision", "split_us_per_decision")
"""What each run's JSON must hold (commits before the collector's split lack it)."""


def one_run(cwd: Path, out: Path, args: argparse.Namespace) -> dict:
    """One ``benchmarks.collector`` process in ``cwd``; its JSON document.

    Raises:
        RuntimeError: the process failed, or its JSON lacks the figures compared.
    """
    cmd = [sys.executable, "-m", "benchmarks.collector", "--envs", str(args.envs),
           "--steps", str(args.steps), "--rounds", str(args.rounds), "--json", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark in {cwd} failed:\n{proc.stderr[-2000:]}")
    doc = json.loads(out.read_text())
    missing = [k for k in NEEDS if k not in doc]
    if missing:
        raise RuntimeError(
            f"the benchmark in {cwd} writes no {', '.join(missing)}: too old a commit"
        )
    figures = [doc["current"]["median_per_s"], doc["collector_own_us_per_decision"]]
    if not np.isfinite(np.asarray(figures, dtype=float)).all():
        raise RuntimeError(f"the benchmark in {cwd} gave a non-finite figure: {figures}")
    return doc


def summarize(runs: dict[str, list[dict]]) -> tuple[dict, list[list[str]]]:
    """Medians, intervals and paired ratios of ``{"ref": docs, "tree": docs}``; JSON and rows."""
    rate = {k: [d["current"]["median_per_s"] for d in v] for k, v in runs.items()}
    own = {k: [d["collector_own_us_per_decision"] for d in v] for k, v in runs.items()}
    doc: dict = {}
    rows = []
    for name, docs in runs.items():
        r, o = median_ci(rate[name]), median_ci(own[name])
        rows.append([name, f"{r[0]:,.0f}", f"{r[1]:,.0f}-{r[2]:,.0f}", f"{o[0]:.3f}",
                     f"{o[1]:.3f}-{o[2]:.3f}"])  # fmt: skip
        split = {k: float(np.median([d["split_us_per_decision"][k] for d in docs]))
                 for k in docs[0]["split_us_per_decision"]}  # fmt: skip
        doc[name] = {"per_s": rate[name], "own_us": own[name], "median_split_us": split}
    ratio = median_ci(list(np.array(rate["tree"]) / np.array(rate["ref"])))
    own_ratio = median_ci(list(np.array(own["tree"]) / np.array(own["ref"])))
    rows.append(["tree / ref", f"{ratio[0]:.3f}x", f"{ratio[1]:.3f}-{ratio[2]:.3f}",
                 f"{own_ratio[0]:.3f}x", f"{own_ratio[1]:.3f}-{own_ratio[2]:.3f}"])  # fmt: skip
    doc["ratio_per_s"] = {"median": ratio[0], "ci95": [ratio[1], ratio[2]]}
    doc["ratio_own"] = {"median": own_ratio[0], "ci95": [own_ratio[1], own_ratio[2]]}
    return doc, rows


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(prog="benchmarks.collector_ab", description=__doc__)
    p.add_argument("ref", help="the commit to compare the working tree with (e.g. HEAD)")
    p.add_argument("--pairs", type=int_arg(1, 100), default=5)
    add_collector_size_args(p, rounds=4)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--overwrite", action="store_true", help="replace an existing --json file")
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    if args.json is not None and args.json.exists() and not args.overwrite:
        p.error(f"--json: {args.json} exists (an earlier comparison); --overwrite replaces it")
    if args.ref.startswith("-"):
        p.error(f"ref {args.ref!r}: a commit, not an option")
    runs: dict[str, list[dict]] = {"ref": [], "tree": []}
    with tempfile.TemporaryDirectory(prefix="collector-ab-") as tmp:
        try:
            sha = export(args.ref, Path(tmp))
        except ValueError as exc:
            p.error(str(exc))
        layout(ROOT, Path(tmp) / "tree")  # a copy too: the same import paths on both sides
        sides = {"ref": Path(tmp) / "pkg", "tree": Path(tmp) / "tree"}
        try:
            for i in range(args.pairs):
                order = ["ref", "tree"] if i % 2 == 0 else ["tree", "ref"]  # no side always first
                log(f"pair {i + 1}/{args.pairs}: {' then '.join(order)} ...")
                for name in order:
                    runs[name].append(one_run(sides[name], Path(tmp) / f"{name}-{i}.json", args))
        except RuntimeError as exc:
            log(str(exc))
            raise SystemExit(1) from None
    doc, rows = summarize(runs)
    doc.update({"ref_commit": sha, "ref_name": args.ref, "pairs": args.pairs,
                "envs": args.envs, "steps": args.steps, "rounds": args.rounds})  # fmt: skip
    rows[0][0] = f"{args.ref} ({sha[:10]})"
    rows[1][0] = "working tree"
    print_table([("collector", "left"), ("decisions/s", "right"), ("95% CI", "left"),
                 ("own µs/decision", "right"), ("95% CI", "left")], rows)  # fmt: skip
    return write_results("collector_ab", doc, args.json)


if __name__ == "__main__":
    main()
