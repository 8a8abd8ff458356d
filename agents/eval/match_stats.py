"""The statistics and table of a duplicate match (``sichuan_env.agents.eval.evaluate``).

- ``summarize``: per agent, points per hand with a 95% confidence interval
  (one sample per wall: the agent's mean over its seats and rotations), win
  rate, deal-in rate, average fan, flower-pig and not-tenpai rates;
- ``summary_table`` / ``print_table``: the ``rich`` table the CLIs print.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table


def summarize(lineup: list[str], records: list[tuple[int, int, dict]], walls: int) -> dict:
    """Per-agent statistics of a duplicate match."""
    stats: dict[str, dict[str, Any]] = {}
    per_wall: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    for name in sorted(set(lineup)):
        stats[name] = {
            "seat_hands": 0,
            "wins": 0,
            "deal_ins": 0,
            "fan": 0,
            "pigs": 0,
            "not_tenpai": 0,
        }
        per_wall[name] = np.zeros(walls)
        counts[name] = np.zeros(walls)
    for wall, rot, record in records:
        result = record["result"]
        settlement = result.get("settlement")
        for s in range(4):
            name = lineup[(s + rot) % 4]
            st = stats[name]
            st["seat_hands"] += 1
            per_wall[name][wall] += result["scores"][s]
            counts[name][wall] += 1
            for w in result["wins"]:
                if w["seat"] == s:
                    st["wins"] += 1
                    st["fan"] += w["fan"]
                if w["from"] == s:
                    st["deal_ins"] += 1
            if settlement:
                won = {w["seat"] for w in result["wins"]}
                if s in settlement["flower_pigs"]:
                    st["pigs"] += 1
                elif s not in won and s not in settlement["tenpai"]:
                    st["not_tenpai"] += 1
    out = {}
    for name, st in stats.items():
        samples = per_wall[name] / np.maximum(counts[name], 1)
        mean = float(samples.mean())
        ci = float(1.96 * samples.std(ddof=1) / np.sqrt(len(samples))) if len(samples) > 1 else 0.0
        h = max(st["seat_hands"], 1)
        out[name] = {
            "points_per_hand": mean,
            "ci95": ci,
            "win_rate": st["wins"] / h,
            "deal_in_rate": st["deal_ins"] / h,
            "avg_fan": st["fan"] / st["wins"] if st["wins"] else 0.0,
            "flower_pig_rate": st["pigs"] / h,
            "not_tenpai_rate": st["not_tenpai"] / h,
            "seat_hands": st["seat_hands"],
        }
    return out


def summary_table(summary: dict) -> Table:
    """The per-agent table (a ``rich`` table)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("agent", overflow="fold")
    for head in ("points/hand", "95% CI", "win", "deal-in", "avg fan", "pig", "noten", "hands"):
        table.add_column(head, justify="right")
    for name, s in summary.items():
        table.add_row(
            name,
            f"{s['points_per_hand']:+.2f}",
            f"{s['ci95']:.2f}",
            f"{s['win_rate']:.1%}",
            f"{s['deal_in_rate']:.1%}",
            f"{s['avg_fan']:.2f}",
            f"{s['flower_pig_rate']:.1%}",
            f"{s['not_tenpai_rate']:.1%}",
            str(s["seat_hands"]),
        )
    return table


def _stdout() -> Console:
    # a pipe or file gets the table's natural width; a terminal, its own width
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def print_table(summary: dict, console: Console | None = None) -> None:
    """Print the per-agent table to stdout (or ``console``)."""
    (console or _stdout()).print(summary_table(summary))
