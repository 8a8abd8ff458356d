r"""Per hand, not per wall: the agent seat's variance plain and adjusted by each value model.

    python -m research.luck_variance.perhand --agent distill --walls 1000 --seed 711 \
        luck runs/lv-fit/luck.pt

The same duplicate match as ``research.table_value.measure`` (one agent against
three heuristics, seeds alike give the same hands); prints, for the agent's seat
of every hand, the variance of its points and of its points less each model's
corrections. A model can explain more of each hand and none more of a wall's
four rotations, whose sum is what an evaluation's interval is made of.
"""

from __future__ import annotations

import argparse

import numpy as np
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel

from research.luck_variance.data import RULES


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.luck_variance.perhand", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--agent", required=True)
    p.add_argument("--walls", type=int, default=1000)
    p.add_argument("--seed", type=int, default=711)
    p.add_argument("models", nargs="+")
    args = p.parse_args(argv)
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=False)
    recs = [r for _, _, r in records]
    seat = np.array([(-rot) % 4 for _, rot, _ in records])  # lineup position 0's seat
    points = np.array([r["result"]["scores"] for r in recs], dtype=np.float64)
    rows = np.arange(len(recs))
    print(f"{args.agent}, {len(recs)} hands: per-hand variance of the agent's seat")
    print(f"  plain {points[rows, seat].var(ddof=1):.3f}")
    for spec in args.models:
        corr = LuckModel.load(spec).corrections(recs).total
        print(f"  {spec}: {(points - corr)[rows, seat].var(ddof=1):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
