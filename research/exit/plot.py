"""Pictures of an expert-iteration run (``sichuan_env.train.policy.exit``): strength per round and per CPU-hour.

    python -m research.exit.plot runs/exit --out docs/img/exit.png --json research/exit/results/summary.json

Left: each round's network against three heuristics and against three copies
of the previous round's network (points per hand, duplicate, 95% CI;
adjusted when every round measured it: luck-adjusted, or the advantage sum of a run
made with ``--estimator advantage``), over the
CPU-hours spent so far (wall-clock seconds of every stage times ``--cores``).
Middle: label throughput per round (rows and hands labelled per second).
Right: each round's fit, the held-out regression error per epoch.
The JSON holds the figures drawn.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sichuan_env.train.plot import read_jsonl


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def summary(run: Path, cores: int = 2) -> dict:
    """Per finished round: CPU-hours so far, the two matches, label throughput and the fit's curve.

    Raises:
        ValueError: ``exit.json`` missing or malformed, or a round's figures not numbers.
    """
    from sichuan_env.train.policy.exit import read_state

    doc = read_state(run)
    out, hours = [], 0.0
    for r in doc["rounds"]:
        secs = r.get("seconds", {})
        if not all(_num(v) and v >= 0 for v in secs.values()):
            raise ValueError(f"round {r['round']}: stage seconds are not numbers")
        hours += cores * sum(secs.values()) / 3600
        if "eval" not in r["done"]:
            continue
        row: dict = {
            "round": r["round"],
            "cpu_hours": round(hours, 3),
            "margin": r["fit"]["margin"],
        }
        for k in ("vs_heuristic", "vs_previous"):
            m = r.get(k, {})
            if not (_num(m.get("points_per_hand")) and _num(m.get("ci95"))):
                raise ValueError(f"round {r['round']}: {k} is not a match result")
            row[k] = {"points_per_hand": m["points_per_hand"], "ci95": m["ci95"]}
            if _num(m.get("adjusted")) and _num(m.get("adjusted_ci95")):
                row[k] |= {"adjusted": m["adjusted"], "adjusted_ci95": m["adjusted_ci95"],
                           "estimator": m.get("estimator", "luck")}  # fmt: skip
        lab = r.get("labels", {})
        if _num(lab.get("seconds")) and lab["seconds"] > 0 and _num(lab.get("new_rows")):
            row["label_rows_per_s"] = lab["new_rows"] / lab["seconds"]
            row["label_hands_per_s"] = doc["settings"]["hands"] / lab["seconds"]
        metrics = run / f"round-{r['round']:02d}" / "fit" / "metrics.jsonl"
        if metrics.is_file():
            row["val_reg"] = [x["val_reg"] for x in read_jsonl(metrics) if _num(x.get("val_reg"))]
        out.append(row)
    if not out:
        raise ValueError(f"{run}: no finished round to draw")
    return {"settings": doc["settings"], "rounds": out}


def draw(s: dict, png: Path) -> None:
    """The three panels of ``summary`` into ``png``."""
    rounds = s["rounds"]
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    x = [0.0] + [r["cpu_hours"] for r in rounds]
    adj = all("adjusted" in r[k] for r in rounds for k in ("vs_heuristic", "vs_previous"))
    mean, ci = ("adjusted", "adjusted_ci95") if adj else ("points_per_hand", "ci95")
    for k, label, c in (("vs_heuristic", "vs 3 heuristics", "C0"),
                        ("vs_previous", "vs 3 x previous round", "C1")):  # fmt: skip
        xs = [r["cpu_hours"] for r in rounds]
        ys = [r[k][mean] for r in rounds]
        es = [r[k][ci] for r in rounds]
        ax[0].errorbar(xs, ys, yerr=es, marker="o", capsize=4, color=c, label=label)
        for r, y in zip(rounds, ys, strict=True):
            ax[0].annotate(f"r{r['round']}", (r["cpu_hours"], y), textcoords="offset points",
                           xytext=(5, 5), fontsize=8)  # fmt: skip
    ax[0].axhline(0, color="grey", lw=0.8)
    kinds = {r[k].get("estimator") for r in rounds for k in ("vs_heuristic", "vs_previous")}
    how = "advantage sum" if kinds == {"advantage"} else "luck-adjusted"
    ylabel = f"points per hand, {how} (95% CI)" if adj else "points per hand (95% CI)"
    ax[0].set(xlabel="CPU-hours (every stage of the rounds)", ylabel=ylabel,
              title="each round's network", xlim=(0, max(x) * 1.1))  # fmt: skip
    ax[0].legend(fontsize=8)
    have = [r for r in rounds if "label_rows_per_s" in r]
    ax[1].bar([r["round"] - 0.2 for r in have], [r["label_rows_per_s"] for r in have], 0.4,
              label="rows/s")  # fmt: skip
    ax[1].bar([r["round"] + 0.2 for r in have], [r["label_hands_per_s"] for r in have], 0.4,
              label="hands/s")  # fmt: skip
    ax[1].set(xlabel="round", ylabel="per second", title="label throughput")
    ax[1].legend(fontsize=8)
    for r in rounds:
        v = r.get("val_reg", [])
        ax[2].plot(range(1, len(v) + 1), v, marker="o", label=f"round {r['round']}")
    ax[2].set(xlabel="epoch", ylabel="held-out squared error (points²)", title="fit per round")
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Draw ``RUN`` into ``--out``; with ``--json``, write the figures drawn."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path, help="the expert-iteration run directory")
    p.add_argument("--out", type=Path, required=True, help="PNG to write")
    p.add_argument("--json", type=Path, help="write the figures drawn here")
    p.add_argument(
        "--cores", type=int, default=2, help="cores the run used (CPU-hours = wall-clock x cores)"
    )
    args = p.parse_args(argv)
    try:
        s = summary(args.run, args.cores)
    except ValueError as exc:
        print(f"research.exit.plot: {exc}", file=sys.stderr)
        return 1
    draw(s, args.out)
    if args.json:
        args.json.write_text(json.dumps(s, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
