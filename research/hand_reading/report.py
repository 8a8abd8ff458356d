"""The belief report with a hand reader beside the network: its predictions and the blend.

    python -m research.hand_reading.report belief --data $DATA/heur-test --games 100 --filter
    python -m research.hand_reading.report belief --data $DATA/heur-test --games 300
        --filter-cache a.npz b.npz c.npz --blend results/belief_blend.json
        --compare model+filter model --json results/belief_smc_report.json

Every option of ``sichuan_env.train.belief.report`` (which scores the model,
the baselines and any ``--predictions`` files), plus:

- ``--filter``: run a policy-aware reader over the hands (``--filter-method
  walls``: ``research.hand_reading.filter.BeliefFilter``, ``smc``:
  ``research.hand_reading.smc.HandReader``; a few decisions per second: needs
  ``--games N``) and score it as the predictor ``"filter"``;
- ``--filter-cache FILE...``: read the reader's predictions from these files
  (``research.hand_reading.filter_eval --save``, merged) if they all exist;
  with one path that does not, compute them and write them there (implies ``--filter``);
- ``--blend FILE``: also score ``"model+filter"``, the blend fitted by
  ``research.hand_reading.blend`` (needs the reader and a checkpoint).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import sichuan_env.train.belief.report as R
from sichuan_env.agents.belief.heads import get as get_head
from sichuan_env.train.belief.predictions import PredictionTable, load_predictions

from research.hand_reading.blend import blended, load_blend
from research.hand_reading.filter_eval import READER_HEADS, predict_folder, save_preds
from sichuan_env._cli import run


def build_parser() -> argparse.ArgumentParser:
    """The library report's parser with the reader's options."""
    p = R.build_parser(prog="python -m research.hand_reading.report", description=__doc__)
    p.add_argument("--filter", action="store_true",
                   help="also score a hand reader (slow, use --games)")  # fmt: skip
    p.add_argument("--filter-method", choices=("walls", "smc"), default="walls",
                   help="the reader run when there is no cache: walls (BeliefFilter) or smc")  # fmt: skip
    p.add_argument("--filter-particles", type=int, default=16, help="walls: walls per hand")
    p.add_argument("--filter-steps", type=int, default=500, help="walls: moves per wall")
    p.add_argument("--filter-burn", type=int, default=800, help="walls: burn-in per wall")
    p.add_argument("--filter-cache", type=Path, nargs="+",
                   help="the reader's predictions (.npz, merged) if they exist; with one path "
                   "that does not, compute them and write them there")  # fmt: skip
    p.add_argument("--blend", type=Path,
                   help="also score model+filter, a blend fitted by research.hand_reading.blend")  # fmt: skip
    return p


def as_table(preds: dict[tuple[int, int], dict[str, np.ndarray]]) -> PredictionTable:
    """``predict_folder``'s predictions as a checked ``PredictionTable`` (the reader's heads)."""
    keys = sorted(preds)
    arrays = {
        h: np.stack([preds[k][h] for k in keys]) if keys else np.zeros((0, *get_head(h).shape))
        for h in READER_HEADS
    }
    return PredictionTable(np.array(keys, dtype=np.int64).reshape(-1, 2), arrays, "filter")


def reader_predictions(args: argparse.Namespace) -> tuple[PredictionTable, dict[str, Any]]:
    """The reader's predictions (from ``--filter-cache`` or a run) and their statistics.

    Raises:
        ValueError: several cache paths of which some are missing, or bad cache files.
    """
    caches = args.filter_cache or []
    if caches and all(c.exists() for c in caches):
        return load_predictions(caches), {"cache": [str(c) for c in caches]}
    if len(caches) > 1:
        raise ValueError(f"--filter-cache: {[str(c) for c in caches if not c.exists()]} missing")
    if args.filter_method == "smc":
        from research.hand_reading.smc import HandReader

        filt: Any = HandReader()
    else:
        from research.hand_reading.filter import BeliefFilter

        filt = BeliefFilter(args.filter_particles, args.filter_steps, args.filter_burn)
    preds, stats = predict_folder(args.data, args.games, filt)
    if caches:
        save_preds(caches[0], preds)
    return as_table(preds), stats


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = build_parser()
    args = p.parse_args(argv)
    R.check_args(p, args)
    reader = args.filter or args.filter_cache is not None
    if reader and args.games is None:
        p.error("--filter needs --games N (the filter scores a few decisions per second)")
    if args.blend is not None and (not reader or args.checkpoint == "none"):
        p.error("--blend needs --filter and a checkpoint")
    try:
        tables, stats = {}, None
        if reader:
            tables["filter"], stats = reader_predictions(args)
        derive = blended(load_blend(args.blend)) if args.blend is not None else None
        data, report = R.make_report(args, predictions=tables, derive=derive)
    except ValueError as exc:
        p.error(str(exc))
    if stats is not None:
        report["filter"] = stats
    R.write_report(args, data, report)
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "research.hand_reading.report"))
