"""What the luck adjustment buys: CI ratio (adjusted / plain) and cost, per agent vs three heuristics.

    python -m benchmarks.luck                                  # the docs' table (~15 min)
    python -m benchmarks.luck --cases distill:2000 search:100 --seed 1
    python -m benchmarks.luck --value-model runs/value/luck.pt
    python -m benchmarks.luck --estimator advantage            # sichuan-eval's default here

Each case ``AGENT:WALLS`` plays the duplicate match ``AGENT heuristic heuristic
heuristic`` on ``WALLS`` walls (each dealt four times, the seats rotated), then
computes the luck corrections of its hands with the value model (the whole-table
``table_value`` by default, ``sichuan_env.agents.eval.table_value``; ``luck``: the older one).
Reported per case: the agent's points per hand, plain and adjusted, each with
its 95% interval; their ratio (the adjusted interval over the plain one: 0.5
means 4x fewer hands for the same precision, with its own 95% interval from
resampling the walls); the hands either needs for +-0.02; the correlation of
the per-wall plain and adjusted samples; and the seconds of play and of the
adjustment (numba's compile left out: one warm-up hand is adjusted first).
``--estimator advantage`` scores the same way the advantage-sum estimate
(``sichuan_env.agents.eval.advantage``, ``--reps`` paired rollouts where the agent
leaves the heuristic), the default of ``sichuan-eval`` for such lineups.
Prints a table and writes JSON like the other benchmarks.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.eval.adjust import lineup_ids
from sichuan_env.agents.eval.advantage import REPS, AdvantageSum
from sichuan_env.agents.eval.evaluate import MAX_WALLS, play_duplicate
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall
from sichuan_env.agents.eval.table_value import TableModel, load_table_for

from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env import RuleConfig
from sichuan_env._cli import int_arg

CASES = ["random:1000", "defensive:1000", "distill:1000", "exit:1000", "search:60"]
"""The docs' table: each agent against three heuristics, and its walls."""
RULES = RuleConfig.preset("xuezhan")
TARGET = 0.02
"""The precision of the "hands for +-0.02" columns (points per hand, 95% half-width)."""


def parse_case(text: str) -> tuple[str, int]:
    """``"distill:1000"`` -> ``("distill", 1000)``."""
    name, sep, walls = text.rpartition(":")
    if not sep or not name or not walls.isdigit() or not 2 <= int(walls) <= MAX_WALLS:
        raise argparse.ArgumentTypeError(f"a case is AGENT:WALLS (2..{MAX_WALLS}), got {text!r}")
    return name, int(walls)


def ratio_ci(
    plain: np.ndarray, adjusted: np.ndarray, seed: int, boot: int = 2000
) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of ``std(adjusted) / std(plain)`` (walls resampled)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, plain.size, (boot, plain.size))
    r = adjusted[idx].std(axis=1, ddof=1) / np.maximum(plain[idx].std(axis=1, ddof=1), 1e-12)
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def run_case(name: str, walls: int, seed: int, model: Any, reps: int = 0) -> dict:
    """One case's figures (``reps``: the advantage-sum estimate with that many rollouts)."""
    rules = model.rules if not reps else RULES
    lineup = [name, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, walls, rules, seed=seed, progress=False)
    play_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    recs = [r for _, _, r in records]
    if reps:
        corr = AdvantageSum(lineup, rules, reps=reps, seed=seed).of(records)
    elif isinstance(model, TableModel):  # the whole-table model is told who plays each seat
        corr = model.corrections(recs, lineup_ids(lineup, records)).total
    else:
        corr = model.corrections(recs).total
    adjust_s = time.perf_counter() - t0
    plain, adjusted = per_wall(lineup, records, walls, corr)[name]
    assert adjusted is not None
    pm, pc = mean_ci(plain)
    am, ac = mean_ci(adjusted)
    lo, hi = ratio_ci(plain, adjusted, seed)
    hands = 4 * walls  # the candidate's seat-hands
    return {
        "agent": name, "walls": walls, "seed": seed, "hands": hands,
        "points_per_hand": pm, "ci95": pc, "points_per_hand_adjusted": am, "ci95_adjusted": ac,
        "ci_ratio": ac / pc if pc > 0 else float("nan"), "ci_ratio_95": [lo, hi],
        "hands_for_0.02": hands * (pc / TARGET) ** 2,
        "hands_for_0.02_adjusted": hands * (ac / TARGET) ** 2,
        "correlation": float(np.corrcoef(plain, adjusted)[0, 1]),
        "play_seconds": play_s, "adjust_seconds": adjust_s,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    """Run the cases; print the table; write JSON."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.luck", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--cases", nargs="+", type=parse_case, default=[parse_case(c) for c in CASES],
                   metavar="AGENT:WALLS", help=f"default: {' '.join(CASES)}")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0), default=0, help="seed of the walls and agents")
    p.add_argument("--value-model", default="table_value",
                   help="'table_value' (shipped), 'luck' (the older model) or a .pt path")  # fmt: skip
    p.add_argument("--estimator", choices=("luck", "advantage"), default="luck",
                   help="the value model's luck adjustment, or the advantage-sum estimate")  # fmt: skip
    p.add_argument("--reps", type=int_arg(2, 4096), default=REPS,
                   help=f"the advantage-sum estimate's rollouts per divergence (default {REPS})")  # fmt: skip
    p.add_argument(
        "--json", type=Path, default=None, help="default: benchmarks/results/luck-*.json"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    reps = args.reps if args.estimator == "advantage" else 0
    model = None
    if reps:
        lineup = ["value", "heuristic", "heuristic", "heuristic"]
        warm = play_duplicate(lineup, 1, RULES, seed=0, progress=False)
        AdvantageSum(lineup, RULES, reps=2).of(warm)  # numba's compile, outside the timings
    else:
        model, why = load_table_for(RULES, args.value_model)
        if model is None:
            p.error(f"--value-model: {why}")
        warm = play_duplicate(["heuristic"] * 4, 1, model.rules, seed=0, progress=False)
        model.corrections([r for _, _, r in warm])  # numba's compile, outside the timings
    rows = []
    for name, walls in args.cases:
        log(f"{name}: {walls} walls x 4 rotations vs 3 heuristics ...")
        rows.append(run_case(name, walls, args.seed, model, reps))
    table = [[
        r["agent"], str(r["walls"]), f"{r['points_per_hand']:+.3f} ± {r['ci95']:.3f}",
        f"{r['points_per_hand_adjusted']:+.3f} ± {r['ci95_adjusted']:.3f}",
        f"{r['ci_ratio']:.2f} [{r['ci_ratio_95'][0]:.2f}, {r['ci_ratio_95'][1]:.2f}]",
        f"{r['hands_for_0.02']:,.0f}", f"{r['hands_for_0.02_adjusted']:,.0f}",
        f"{r['play_seconds']:.1f}", f"{r['adjust_seconds']:.1f}",
    ] for r in rows]  # fmt: skip
    print_table(
        [("agent vs 3 heuristic", "left"), ("walls", "right"), ("plain", "right"),
         ("adjusted", "right"), ("CI ratio (95%)", "right"), ("hands ±0.02", "right"),
         ("adjusted", "right"), ("play s", "right"), ("adjust s", "right")],
        table,
    )  # fmt: skip
    body = {
        "estimator": args.estimator, "reps": reps or None,
        "value_model": None if reps else str(args.value_model),
        "value_model_sha256": None if model is None else model.doc.get("sha256"),
        "seed": args.seed, "cases": rows,
    }  # fmt: skip
    return write_results("advantage" if reps else "luck", body, args.json)


if __name__ == "__main__":
    main()
