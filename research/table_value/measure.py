"""One agent against three heuristics, scored plain and with each value model, on the same hands.

    python -m research.table_value.measure --agent distill --walls 2500 --seed 301 \
        --out research/table_value/results/distill-2500.json

Plays the duplicate match once (``evaluate.play_duplicate``), then adjusts the very
same records with the older per-seat model (``luck``), the whole-table model
(``table_value``) and, with ``--fine-tune N``, the whole-table model fine-tuned on
the match's own hands, cross-fitted. Writes per model: the mean and 95% interval
of the agent's points per hand, the CI ratio (adjusted / plain, with a bootstrap
interval over walls), the seconds of play and of each adjustment, and the per-wall
samples (``per_wall``), so that ``zscores`` can cut them into disjoint wall sets.
An existing ``--out`` is refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval.adjust import lineup_ids
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic

RULES = RuleConfig.preset("xuezhan")


def ci_ratio(plain: np.ndarray, adjusted: np.ndarray, boot: int = 2000, seed: int = 0) -> dict:
    """Adjusted over plain 95% half-width, with a bootstrap interval over walls."""
    rng = np.random.default_rng(seed)
    ratio = float(adjusted.std(ddof=1) / plain.std(ddof=1))
    idx = rng.integers(0, len(plain), size=(boot, len(plain)))
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant resample: inf, refused later
        r = adjusted[idx].std(axis=1, ddof=1) / plain[idx].std(axis=1, ddof=1)
    return {"ratio": ratio, "ci95": [float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))]}


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.table_value.measure", description=__doc__)
    p.add_argument("--agent", required=True)
    p.add_argument("--walls", type=int, default=1000)
    p.add_argument("--seed", type=int, default=301)
    p.add_argument("--fine-tune", type=int, default=0, help="epochs of the cross-fitted variant")
    p.add_argument("--models", nargs="+", default=["luck", "table_value"])
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        p.error(f"--out: {problem}")
    from sichuan_env.agents.eval.table_finetune import cross_fitted_corrections
    from sichuan_env.agents.eval.table_value import TableModel, load_table_for

    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    play_s = time.perf_counter() - t0
    ids = lineup_ids(lineup, records)
    recs = [r for _, _, r in records]
    plain = per_wall(lineup, records, args.walls)[args.agent][0]
    doc: dict = {
        "agent": args.agent, "walls": args.walls, "seed": args.seed, "lineup": lineup,
        "play_s": play_s, "plain": dict(zip(("mean", "ci95"), mean_ci(plain), strict=True)),
        "per_wall": {"plain": plain.round(6).tolist()}, "models": {},
    }  # fmt: skip
    variants = [(m, 0) for m in args.models]
    if args.fine_tune:
        variants.append(("table_value", args.fine_tune))
    for spec, tune in variants:
        model, why = load_table_for(RULES, spec)
        if model is None:
            print(why, file=sys.stderr)
            continue
        t1 = time.perf_counter()
        if tune:
            corr = cross_fitted_corrections(model, records, ids, tune).total
        elif not isinstance(model, TableModel):  # the per-seat model: no lineup ids
            corr = model.corrections(recs).total
        else:
            corr = model.corrections(recs, ids).total
        adjust_s = time.perf_counter() - t1
        adj = per_wall(lineup, records, args.walls, corr)[args.agent][1]
        assert adj is not None
        name = f"{spec}+fine-tune{tune}" if tune else spec
        doc["models"][name] = {
            "mean": mean_ci(adj)[0], "ci95": mean_ci(adj)[1], "ci_ratio": ci_ratio(plain, adj),
            "adjust_s": adjust_s, "adjust_over_play": adjust_s / play_s,
        }  # fmt: skip
        doc["per_wall"][name] = adj.round(6).tolist()
        r = doc["models"][name]
        print(f"{args.agent} {name}: {r['mean']:+.3f} +- {r['ci95']:.3f}, CI ratio "
              f"{r['ci_ratio']['ratio']:.3f} [{r['ci_ratio']['ci95'][0]:.3f}, "
              f"{r['ci_ratio']['ci95'][1]:.3f}], adjust {adjust_s:.0f} s vs play {play_s:.0f} s",
              flush=True)  # fmt: skip
    print(f"{args.agent} plain: {doc['plain']['mean']:+.3f} +- {doc['plain']['ci95']:.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
