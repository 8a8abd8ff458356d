"""Why a value model removes more or less luck: its per-wall corrections against the points.

    python -m research.table_value.diagnose agents/checkpoints/table_value.pt \
        runs/table-fit-noplanes/table_value.pt --walls 600 --seed 411

Plays ``distill`` against three heuristics on ``--walls`` walls and, for the shipped
``luck`` model and each whole-table model given (with the lineup, and with every
seat ``unknown``), sums each wall's corrections of ``distill``'s seats. Prints their
variance, their correlation with the plain per-wall points, and the residual ratio
``sqrt(1 - corr^2)``: the CI ratio with the best (in-sample) coefficient.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from sichuan_env.agents.eval.adjust import lineup_ids
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.match_stats import per_wall
from sichuan_env.agents.eval.table_value import TableModel

from sichuan_env import RuleConfig


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = argparse.ArgumentParser(prog="python -m research.table_value.diagnose", description=__doc__)
    p.add_argument("models", nargs="*", help="whole-table .pt files")
    p.add_argument("--walls", type=int, default=600)
    p.add_argument("--seed", type=int, default=411)
    args = p.parse_args(argv)
    torch.set_num_threads(2)
    rules = RuleConfig.preset("xuezhan")
    lineup = ["distill", "heuristic", "heuristic", "heuristic"]
    recs = play_duplicate(lineup, args.walls, rules, seed=args.seed, progress=False)
    ids = lineup_ids(lineup, recs)
    rs = [r for _, _, r in recs]

    def agent_wall(corr: np.ndarray) -> np.ndarray:
        out = np.zeros(args.walls)
        for i, (w, rot, _) in enumerate(recs):
            for s in range(4):
                if lineup[(s + rot) % 4] == "distill":
                    out[w] += corr[i, s]
        return out / 4

    plain = per_wall(lineup, recs, args.walls)["distill"][0]
    found = {"luck": LuckModel.load("luck").corrections(rs).total}
    for path in args.models:
        m = TableModel.load(path)
        found[path] = m.corrections(rs, ids).total
        found[f"{path} (every seat unknown)"] = m.corrections(rs).total
    for name, corr in found.items():
        cov = np.cov(plain, agent_wall(corr))
        r = cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
        print(f"{name}: variance {cov[1, 1]:.3f} (points {cov[0, 0]:.3f}), correlation {r:.3f}, "
              f"residual ratio {np.sqrt(1 - r * r):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
