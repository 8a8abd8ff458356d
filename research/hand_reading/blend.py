"""Stack the belief network with a policy-aware filter: a logistic regression per head.

    python -m research.hand_reading.blend belief --data $DATA/heur-val --games 100
        --filter-cache runs/smc/heur-val-100.npz --out research/hand_reading/results/belief_blend.json

The network reads the planes; the filters (``research.hand_reading.smc.HandReader``,
``research.hand_reading.filter.BeliefFilter``) know that the opponents play the
heuristic. Each head's blend is ``sigmoid(b0 + b1 * logit(model) + b2 *
logit(filter))`` (probabilities clipped to ``[EPS, 1 - EPS]`` first), fitted on
the scored rows of a held-out folder (``sichuan_env.train.belief.report``'s rows) that the
report does not use: fit on one set of hands, score on another
(``python -m research.hand_reading.report ... --filter-cache TEST --blend FILE``).
The heads are those the readers predict (``filter_eval.READER_HEADS``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.eval.metrics import auc
from sichuan_env.train.belief.baselines import fit_logistic

from research.hand_reading.filter_eval import READER_HEADS
from sichuan_env._cli import run

HEADS = READER_HEADS
"""The blended heads: the readers' (``research.hand_reading.filter_eval``)."""
EPS = 1e-3
"""Probabilities are clipped to ``[EPS, 1 - EPS]`` before their logits are taken."""
FORMAT = "sichuan-belief-blend/1"


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), EPS, 1 - EPS)
    return np.log(q / (1 - q))


def design(p_model: np.ndarray, p_filter: np.ndarray) -> np.ndarray:
    """``[M, 3]`` features: 1, logit(model), logit(filter) (flattened over the scored cells)."""
    m, f = _logit(p_model).ravel(), _logit(p_filter).ravel()
    if m.shape != f.shape:
        raise ValueError(f"model {m.shape} and filter {f.shape} predictions differ in shape")
    return np.stack([np.ones_like(m), m, f], axis=1)


def apply(coef: list[float] | np.ndarray, p_model: np.ndarray, p_filter: np.ndarray) -> np.ndarray:
    """The blended probabilities (``p_model``'s shape)."""
    z = design(p_model, p_filter) @ np.asarray(coef, dtype=np.float64)
    return (1.0 / (1.0 + np.exp(-z))).reshape(np.shape(p_model)).astype(np.float32)


def blended(coef: dict[str, list[float]]) -> Any:
    """A ``derive`` function for ``sichuan_env.train.belief.report.collect``: ``"model+filter"``.

    It reads the predictors ``"model"`` and ``"filter"`` of each head of ``coef``.

    Raises:
        ValueError: (when called) a batch without the model's or the filter's predictions.
    """

    def derive(by_name: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
        out = {}
        for h, c in coef.items():
            preds = by_name.get(h, {})
            if "model" not in preds or "filter" not in preds:
                raise ValueError("a blend needs the model and the filter's predictions")
            out[h] = {"model+filter": apply(c, preds["model"], preds["filter"])}
        return out

    return derive


def fit(data: dict[str, Any]) -> dict[str, list[float]]:
    """Per-head coefficients from ``sichuan_env.train.belief.report.collect``'s output (model and filter)."""
    out = {}
    for h in HEADS:
        preds = data["preds"][h]
        if "model" not in preds or "filter" not in preds:
            raise ValueError("the blend needs both the model's and the filter's predictions")
        y = data["labels"][h].astype(np.float64)
        if y.size == 0 or y.min() == y.max():
            raise ValueError(f"head {h}: the fitting rows need both labels")
        out[h] = [float(c) for c in fit_logistic(design(preds["model"], preds["filter"]), y)]
    return out


def _finite(v: object) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:  # a JSON integer beyond float range
        return False


def load_blend(path: str | Path) -> dict[str, list[float]]:
    """A blend file's coefficients, checked (nothing read from disk is trusted).

    Raises:
        ValueError: unreadable, another format, a missing head or bad coefficients.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not a blend file ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    coef = data.get("coef")
    if not isinstance(coef, dict) or set(coef) != set(HEADS):
        raise ValueError(f"{path}: coef must name exactly the heads {HEADS}")
    for h, c in coef.items():
        ok = isinstance(c, list) and len(c) == 3
        if not ok or not all(_finite(v) for v in c):
            raise ValueError(f"{path}: coef[{h!r}] must be 3 finite numbers, got {c!r}")
    return {h: [float(v) for v in coef[h]] for h in HEADS}


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="python -m research.hand_reading.blend", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("checkpoint", help='a belief checkpoint (.pt) or "belief" (shipped)')
    p.add_argument("--data", type=Path, required=True, help="held-out dataset folder (obs v2)")
    p.add_argument("--games", type=int, required=True, help="the hands with game_id < GAMES")
    p.add_argument("--filter-cache", type=Path, required=True, nargs="+",
                   help="the filter's predictions on those hands (research.hand_reading.filter_eval --save)")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, help="write the blend (JSON) here")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    if args.games < 1:
        p.error("--games must be >= 1")
    import sichuan_env.train.belief.report as R
    import torch
    from sichuan_env.agents.belief.model import BeliefModel
    from sichuan_env.train.belief.predictions import load_predictions

    torch.set_num_threads(max(1, args.threads))
    try:
        model = BeliefModel.load(args.checkpoint)
        filt = load_predictions(args.filter_cache)
        data = R.collect(args.data, model, games=args.games, predictions={"filter": filt})
        coef = fit(data)
    except ValueError as exc:
        p.error(str(exc))
    fitted = {
        h: {
            "auc_model": auc(data["labels"][h], data["preds"][h]["model"]),
            "auc_filter": auc(data["labels"][h], data["preds"][h]["filter"]),
            "auc_blend": auc(
                data["labels"][h],
                apply(coef[h], data["preds"][h]["model"], data["preds"][h]["filter"]),
            ),
        }
        for h in HEADS
    }
    out = {"format": FORMAT, "coef": coef, "fitted_on": {"data": str(args.data), "games": args.games,
           "filter_cache": [str(c) for c in args.filter_cache], "checkpoint": args.checkpoint,
           "rows": data["rows"], "auc": fitted}}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for h in HEADS:
        f = fitted[h]
        print(f"{h:8s} model {f['auc_model']:.4f}  filter {f['auc_filter']:.4f}  "
              f"blend {f['auc_blend']:.4f}  coef {np.round(coef[h], 3).tolist()}")  # fmt: skip
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "research.hand_reading.blend"))
