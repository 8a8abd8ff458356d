"""Pictures of a search-distillation run (``sichuan_env.train.policy.search_distill``): the fit and the margin choice.

    python -m research.search_distill.plot runs/sd --out docs/img/search_distill.png

Left: the regression error per epoch (training rows and held-out hands, in
points squared). Right: for each margin (the prior gain ``G``: how many
points an action must be predicted to gain before the policy leaves the
heuristic), the duplicate match against three heuristics (points per hand,
95% CI) and the share of held-out labelled own-turn decisions where the
policy leaves the heuristic.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sichuan_env.train.plot import read_jsonl


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def read_report(path: Path) -> list[dict]:
    """The per-margin rows of a run's ``report.json`` (validated: margins and their figures are numbers).

    Raises:
        ValueError: not a search-distillation report.
    """
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as JSON: {exc}") from None
    rows = doc.get("margins") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not rows:
        raise ValueError(
            f"{path}: no 'margins' list (not a sichuan_env.train.policy.search_distill report)"
        )
    for r in rows:
        ok = isinstance(r, dict) and all(_num(r.get(k)) for k in ("margin", "deviation_rate"))
        if not ok:
            raise ValueError(f"{path}: a margin row without numeric 'margin' / 'deviation_rate'")
        dup = ("eval_points_per_hand", "eval_ci95")
        if any(k in r for k in dup) and not all(_num(r.get(k)) for k in dup):
            raise ValueError(f"{path}: a margin row with a duplicate match needs numeric {dup}")
    return sorted(rows, key=lambda r: r["margin"])


def plot(metrics: list[dict], margins: list[dict], out: Path, title: str = "") -> None:
    """Draw the two panels into ``out`` (PNG)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, label in (("train_reg", "training rows"), ("val_reg", "held-out hands")):
        pts = [(r["epoch"], r[key]) for r in metrics if _num(r.get(key)) and _num(r.get("epoch"))]
        if pts:
            a.plot(*zip(*pts, strict=True), "o-", label=label)
    a.set_xlabel("epoch")
    a.set_ylabel("squared error of the predicted gain (points²)")
    a.set_title("advantage regression")
    a.legend()
    xs = [r["margin"] for r in margins]
    dup = [r for r in margins if "eval_points_per_hand" in r]
    if dup:
        b.errorbar([r["margin"] for r in dup], [r["eval_points_per_hand"] for r in dup],
                   yerr=[r["eval_ci95"] for r in dup], fmt="o-", capsize=3,
                   label="duplicate match vs 3 heuristics")  # fmt: skip
    b.axhline(0, color="gray", lw=0.8)
    b.set_xlabel("margin G (points)")
    b.set_ylabel("points per hand")
    b.set_title("the margin: when to leave the heuristic")
    b.legend(loc="upper left", fontsize=8)
    c = b.twinx()
    c.plot(xs, [100 * r["deviation_rate"] for r in margins], "s--", color="tab:orange", alpha=0.7)
    c.set_ylabel("own-turn decisions leaving the heuristic (%)", color="tab:orange")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="research.search_distill.plot", description=__doc__)
    p.add_argument("run", type=Path, help="a sichuan_env.train.policy.search_distill run directory")
    p.add_argument("--out", type=Path, default=Path("docs/img/search_distill.png"))
    p.add_argument("--title", default="")
    args = p.parse_args(argv)
    for f in ("metrics.jsonl", "report.json"):
        if not (args.run / f).is_file():
            p.error(
                f"{args.run / f} is missing (run sichuan_env.train.policy.search_distill first)"
            )
    try:
        margins = read_report(args.run / "report.json")
        metrics = read_jsonl(args.run / "metrics.jsonl")
    except (ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
        p.error(str(exc))
    plot(metrics, margins, args.out, args.title)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
