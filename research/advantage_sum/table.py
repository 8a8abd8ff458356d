"""The README's and docs' table from the ``measure`` results.

    python -m research.advantage_sum.table research/advantage_sum/results/*-s9*.json

One row per run: plain, luck-adjusted and advantage-sum estimates (95%), their CI
ratios against plain (with bootstrap intervals), the hands each needs for a ±0.02
interval, the decisions per hand that leave the reference, and the seconds of play
and of the advantage-sum estimate (2-core machine; a cold numba compile included in
the first estimate of a process where the cache was cold). ``--blend`` prints instead
what ``sichuan-eval`` reports: the sum blended with the plain estimate by the
cross-fitted coefficient ``b`` (``match_stats.crossfit_scale``), each half's ``b``
and the blend's CI ratio.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval.match_stats import crossfit_scale

TARGET = 0.02


def row(doc: dict) -> str:
    """One markdown row."""
    e = doc["estimates"]
    hands = 4 * doc["walls"]

    def need(ci: float) -> str:
        return f"{hands * (ci / TARGET) ** 2:,.0f}"

    def ratio(k: str) -> str:
        r = e[k]["ci_ratio"]
        return f"{r['ratio']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]"

    ref = "" if doc["reference"] == "heuristic" else f" vs 3 `{doc['reference']}`"
    name = doc["agent"].rsplit(":", 1)[-1]
    return (
        f"| `{name}`{ref} | {doc['walls']:,} ({doc['seed']}) "
        f"| {e['plain']['mean']:+.3f} ± {e['plain']['ci95']:.3f} "
        f"| {ratio('luck')} | {e['advantage']['mean']:+.3f} ± {e['advantage']['ci95']:.3f} "
        f"| **{ratio('advantage')}** | {need(e['plain']['ci95'])} | {need(e['advantage']['ci95'])} "
        f"| {doc['divergences_per_hand']:.2f} | {doc['seconds']['play']:.1f} "
        f"| {doc['seconds']['advantage']:.1f} |"
    )


def blend_row(doc: dict) -> str:
    """One markdown row of the blend ``plain - b (plain - sum)`` that the tools report."""
    plain = np.asarray(doc["per_wall"]["plain"])
    adv = np.asarray(doc["per_wall"]["advantage"])
    b = crossfit_scale([plain], [plain - adv])
    blend = plain - b * (plain - adv)
    halves = f"{b[0]:.2f}, {b[1]:.2f}" if len(b) > 1 else f"{b[0]:.2f}"
    name = doc["agent"].rsplit(":", 1)[-1]
    return (f"| `{name}` | {doc['walls']:,} ({doc['seed']}) | {halves} "
            f"| {blend.std(ddof=1) / plain.std(ddof=1):.2f} "
            f"| {adv.std(ddof=1) / plain.std(ddof=1):.2f} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    ap = argparse.ArgumentParser(prog="python -m research.advantage_sum.table", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--blend", action="store_true", help="the tools' blend with plain")
    args = ap.parse_args(argv)
    if args.blend:
        print(
            "| agent | walls (seed) | b (even walls, odd walls) | blend: CI ratio | sum: CI ratio |"
        )
        print("|---|---|---|---|---|")
        for path in args.runs:
            doc = json.loads(path.read_text())
            if "estimates" in doc:
                print(blend_row(doc))
        return 0
    print("| agent | walls (seed) | plain | luck: CI ratio | advantage sum | CI ratio "
          "| hands ±0.02 plain | advantage | leaves ref. / hand | play s | estimate s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in args.runs:
        doc = json.loads(path.read_text())
        if "estimates" in doc:
            print(row(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
