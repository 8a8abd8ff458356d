"""The belief network's learning curve: AUC per head against the hands it was trained on.

    python -m research.belief_scaling.plot 1500=research/belief_scaling/results/report-1500.json
        3000=... --shipped 48000=docs/belief_report.json --out research/belief_scaling/results/belief_scaling.png
        --json research/belief_scaling/results/summary.json

Each positional argument is ``HANDS=REPORT``: a ``sichuan_env.train.belief.report`` JSON
of a model trained on ``HANDS`` hands of heuristic self-play (the runs of
``research/belief_scaling/run.sh``, one recipe and one time budget). One
panel per head (tenpai, waits, held tiles, deal-in): the model's AUC against
the hands (log scale), the best simple baseline of the same report (dashed)
and the issue's goal (dotted). ``--shipped HANDS=REPORT`` adds the shipped
model as a separate marker (its recipe differs: it is not a point of the
curve). The table printed (and written with ``--json``) gives each run's
AUCs and the fitted gain per doubling of the data (least squares on
log2(hands)).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from rich.console import Console
from rich.table import Table

from sichuan_env._cli import run

HEADS = {"tenpai": 0.95, "waits": 0.92, "hand": 0.88, "deal_in": 0.92}
"""The heads and the issue's AUC goals."""
TITLES = {"tenpai": "tenpai", "waits": "wait tiles", "hand": "held tiles", "deal_in": "deal-in"}


def _auc(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0


def read_report(path: Path) -> dict[str, dict[str, float]]:
    """``{head: {"model": auc, "baseline": best baseline auc}}`` from a report JSON (validated).

    Raises:
        ValueError: not a ``sichuan_env.train.belief.report`` JSON with the four heads.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as JSON: {exc}") from None
    heads = doc.get("heads") if isinstance(doc, dict) else None
    if not isinstance(heads, dict):
        raise ValueError(f"{path}: no 'heads' (not a sichuan_env.train.belief.report JSON)")
    out = {}
    for head in HEADS:
        h = heads.get(head)
        if not isinstance(h, dict) or not _auc((h.get("model") or {}).get("auc")):
            raise ValueError(f"{path}: head {head!r} has no model AUC in [0, 1]")
        base = [v["auc"] for k, v in h.items() if k != "model" and isinstance(v, dict)
                and _auc(v.get("auc"))]  # fmt: skip
        if not base:
            raise ValueError(f"{path}: head {head!r} has no baseline AUC")
        out[head] = {"model": float(h["model"]["auc"]), "baseline": float(max(base))}
    return out


def parse_point(text: str) -> tuple[int, Path]:
    """``"HANDS=PATH"`` as ``(hands, path)``."""
    hands, sep, path = text.partition("=")
    if not sep or not hands.isdigit() or int(hands) < 1 or not path:
        raise ValueError(f"expected HANDS=REPORT (HANDS a positive integer), got {text!r}")
    return int(hands), Path(path)


def slopes(points: list[tuple[int, dict]]) -> dict[str, float]:
    """Each head's least-squares AUC gain per doubling of the hands (needs two sizes)."""
    x = np.log2([h for h, _ in points])
    if len(set(x.tolist())) < 2:
        raise ValueError("a learning curve needs reports at two or more data sizes")
    return {
        head: float(np.polyfit(x, [r[head]["model"] for _, r in points], 1)[0]) for head in HEADS
    }


def _doublings(gap: float, per_doubling: float) -> float | None:
    """Doublings of the largest run's data that close ``gap`` at ``per_doubling`` (None: never)."""
    if gap <= 0:
        return 0.0
    return round(gap / per_doubling, 1) if per_doubling > 0 else None


def plot(points: list[tuple[int, dict]], shipped: tuple[int, dict] | None, out: Path) -> None:
    """Draw the four panels into ``out`` (PNG)."""
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8))
    hands = [h for h, _ in points]
    for ax, head in zip(axes, HEADS, strict=True):
        ax.plot(hands, [r[head]["model"] for _, r in points], "o-", label="model (8 min runs)")
        ax.plot(hands, [r[head]["baseline"] for _, r in points], "s--", color="grey",
                label="best baseline")  # fmt: skip
        ax.axhline(HEADS[head], color="tab:red", ls=":", label=f"goal {HEADS[head]:g}")
        if shipped is not None:
            ax.plot([shipped[0]], [shipped[1][head]["model"]], "*", ms=12, color="tab:green",
                    label="shipped model")  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_title(TITLES[head])
        ax.set_xlabel("training hands")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("AUC on 600 held-out hands")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Belief network: AUC against training data (heuristic self-play)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="python -m research.belief_scaling.plot", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("points", nargs="+", metavar="HANDS=REPORT")
    p.add_argument("--shipped", metavar="HANDS=REPORT", help="the shipped model, marked apart")
    p.add_argument(
        "--out", type=Path, default=Path("research/belief_scaling/results/belief_scaling.png")
    )
    p.add_argument("--json", type=Path, help="write the table and slopes here")
    args = p.parse_args(argv)
    try:
        points = sorted((h, read_report(f)) for h, f in map(parse_point, args.points))
        shipped = None
        if args.shipped:
            h, f = parse_point(args.shipped)
            shipped = (h, read_report(f))
        per_doubling = slopes(points)
    except ValueError as exc:
        p.error(str(exc))
    table = Table(title="Belief network AUC against training hands (held-out heuristic self-play)")
    table.add_column("hands", justify="right")
    for head in HEADS:
        table.add_column(f"{TITLES[head]} (baseline)", justify="right")
    rows = points + ([shipped] if shipped else [])
    for k, (h, r) in enumerate(rows):
        name = f"{h:,}" + (" (shipped)" if shipped and k == len(points) else "")
        table.add_row(name, *[f"{r[x]['model']:.3f} ({r[x]['baseline']:.3f})" for x in HEADS])
    table.add_row("per doubling", *[f"{per_doubling[x]:+.4f}" for x in HEADS])
    table.add_row("goal", *[f"{HEADS[x]:g}" for x in HEADS])
    Console().print(table)
    plot(points, shipped, args.out)
    print(f"wrote {args.out}")
    if args.json:
        doc: dict[str, Any] = {
            "points": [{"hands": h, **r} for h, r in points],
            "shipped": {"hands": shipped[0], **shipped[1]} if shipped else None,
            "auc_per_doubling": per_doubling,
            "goals": HEADS,
        }
        doc["doublings_to_goal_at_this_rate"] = {
            x: _doublings(HEADS[x] - points[-1][1][x]["model"], per_doubling[x]) for x in HEADS
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "research.belief_scaling.plot"))
