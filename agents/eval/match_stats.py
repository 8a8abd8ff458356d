"""The statistics and table of a duplicate match (``sichuan_env.agents.eval.evaluate``).

- ``summarize``: per agent, points per hand with a 95% confidence interval
  (one sample per wall: the agent's mean over its seats and rotations), win
  rate, deal-in rate, average fan, flower-pig and not-tenpai rates, and given
  the luck corrections of the hands (``sichuan_env.agents.eval.luck``), the
  luck-adjusted points per hand and interval beside them;
- ``per_wall``: each agent's per-wall samples, plain and adjusted (for pairing);
- ``summary_table`` / ``print_table``: the ``rich`` table the CLIs print.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table


def per_wall(
    lineup: list[str], records: list[tuple[int, int, dict]], walls: int,
    corrections: np.ndarray | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:  # fmt: skip
    """``{agent: (plain, adjusted)}``: its mean points per hand on each wall.

    ``corrections`` (``float[len(records), 4]``, per record and seat) are subtracted
    for ``adjusted``, scaled by ``crossfit_scale`` (a coefficient for the even walls
    fitted on the odd ones and the other way round, so the scaled corrections keep
    their zero mean); without them ``adjusted`` is None.
    """
    if corrections is not None and np.shape(corrections) != (len(records), 4):
        raise ValueError(
            f"corrections must be float[{len(records)}, 4], got {np.shape(corrections)}"
        )
    sums = {name: np.zeros(walls) for name in set(lineup)}
    luck = {name: np.zeros(walls) for name in set(lineup)}
    counts = {name: np.zeros(walls) for name in set(lineup)}
    for i, (wall, rot, record) in enumerate(records):
        scores = record["result"]["scores"]
        for s in range(4):
            name = lineup[(s + rot) % 4]
            sums[name][wall] += scores[s]
            counts[name][wall] += 1
            if corrections is not None:
                luck[name][wall] += corrections[i, s]
    names = sorted(sums)
    n = {name: np.maximum(counts[name], 1) for name in names}
    plain = {name: sums[name] / n[name] for name in names}
    if corrections is None:
        return {name: (plain[name], None) for name in names}
    luck = {name: luck[name] / n[name] for name in names}
    scale = crossfit_scale([plain[k] for k in names], [luck[k] for k in names])
    return {name: (plain[name], plain[name] - scale * luck[name]) for name in names}


def crossfit_scale(plain: list[np.ndarray], luck: list[np.ndarray]) -> np.ndarray:
    """``float[walls]``: the coefficient of each wall's luck, fitted on the other half.

    The luck correction is a control variate: ``plain - b * luck`` has the plain
    mean for any ``b`` fixed in advance, and the least variance at
    ``b = cov(plain, luck) / var(luck)`` (1 for a perfect value model). ``b`` of
    the even walls is fitted on the odd walls and the other way round (pooled over
    the agents, so a lineup's adjusted points still sum to zero), so each wall's
    coefficient is independent of it and the estimate stays unbiased. With fewer
    than 8 walls in a half, or no luck in it, ``b`` is 1; it is clipped to [0, 2].
    """
    walls = len(plain[0]) if plain else 0
    out = np.ones(walls)
    fold = np.arange(walls) % 2
    for k in (0, 1):
        other = fold != k
        if other.sum() < 8:
            continue
        p = np.concatenate([x[other] - x[other].mean() for x in plain])
        c = np.concatenate([x[other] - x[other].mean() for x in luck])
        var = float(c @ c)
        if var > 0:
            out[fold == k] = float(np.clip((p @ c) / var, 0.0, 2.0))
    return out


def mean_ci(samples: np.ndarray) -> tuple[float, float]:
    """The mean and the half-width of its normal 95% interval."""
    mean = float(samples.mean())
    ci = float(1.96 * samples.std(ddof=1) / np.sqrt(len(samples))) if len(samples) > 1 else 0.0
    return mean, ci


def summarize(
    lineup: list[str], records: list[tuple[int, int, dict]], walls: int,
    corrections: np.ndarray | None = None,
) -> dict:  # fmt: skip
    """Per-agent statistics of a duplicate match (adjusted ones too given ``corrections``)."""
    stats: dict[str, dict[str, Any]] = {}
    for name in sorted(set(lineup)):
        stats[name] = {
            "seat_hands": 0,
            "wins": 0,
            "deal_ins": 0,
            "fan": 0,
            "pigs": 0,
            "not_tenpai": 0,
        }
    for _wall, rot, record in records:
        result = record["result"]
        settlement = result.get("settlement")
        for s in range(4):
            name = lineup[(s + rot) % 4]
            st = stats[name]
            st["seat_hands"] += 1
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
    samples = per_wall(lineup, records, walls, corrections)
    out = {}
    for name, st in stats.items():
        plain, adjusted = samples[name]
        mean, ci = mean_ci(plain)
        h = max(st["seat_hands"], 1)
        out[name] = {
            "points_per_hand": mean,
            "ci95": ci,
            **_adjusted(adjusted),
            "win_rate": st["wins"] / h,
            "deal_in_rate": st["deal_ins"] / h,
            "avg_fan": st["fan"] / st["wins"] if st["wins"] else 0.0,
            "flower_pig_rate": st["pigs"] / h,
            "not_tenpai_rate": st["not_tenpai"] / h,
            "seat_hands": st["seat_hands"],
        }
    return out


def _adjusted(samples: np.ndarray | None) -> dict[str, float]:
    if samples is None:
        return {}
    mean, ci = mean_ci(samples)
    return {"points_per_hand_adjusted": mean, "ci95_adjusted": ci}


def summary_table(summary: dict) -> Table:
    """The per-agent table (a ``rich`` table); adjusted columns when the summary has them."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("agent", overflow="fold")
    adjusted = all("ci95_adjusted" in s for s in summary.values()) and bool(summary)
    heads = ["points/hand", "95% CI"] + (["adjusted", "95% CI"] if adjusted else [])
    for head in (*heads, "win", "deal-in", "avg fan", "pig", "noten", "hands"):
        table.add_column(head, justify="right")
    for name, s in summary.items():
        extra = (
            [f"{s['points_per_hand_adjusted']:+.3f}", f"{s['ci95_adjusted']:.3f}"]
            if adjusted
            else []
        )
        table.add_row(
            name,
            f"{s['points_per_hand']:+.3f}",
            f"{s['ci95']:.3f}",
            *extra,
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
