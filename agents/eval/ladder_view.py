"""The ladder's table and picture (``sichuan_env.agents.eval.ladder``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env._files import save_figure


def print_ladder(summary: dict[str, Any], walls: int) -> None:
    """The ladder as a ``rich`` table on stdout, then ``summary["caution"]`` if any."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"ladder: head-to-head duplicate matches, {walls} walls x 4 rotations",
        caption="ranked by rating (walls won, drawn, lost), not by points",
    )
    field = "adjusted points/hand vs field" if summary.get("adjusted") else "points/hand vs field"
    for col in ("rank", "agent", "rating (95%)", field):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for k, r in enumerate(summary["ratings"], 1):
        table.add_row(
            str(k), r["agent"], f"{r['rating']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}]",
            f"{r['points_per_hand']:+.3f} ± {r['ci95']:.3f}",
        )  # fmt: skip
    console = Console(width=120)
    console.print(table)
    if summary.get("caution"):
        console.print(
            summary["caution"], style="yellow", markup=False, highlight=False, soft_wrap=True
        )


def plot_ladder(summary: dict[str, Any], path: Path, title: str) -> None:
    """Ratings with their intervals, strongest on top (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["ratings"][::-1]
    y = np.arange(len(rows))
    r = np.array([x["rating"] for x in rows])
    err = np.array([[x["rating"] - x["lo"] for x in rows], [x["hi"] - x["rating"] for x in rows]])
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    ax.errorbar(r, y, xerr=err, fmt="o", capsize=3)
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, [x["agent"] for x in rows])
    ax.set_xlabel("Bradley-Terry rating (log-odds of winning a wall), 95% bootstrap interval")
    ax.set_title(title)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)  # a unique temporary name: two ladders never collide
    finally:
        plt.close(fig)
