"""The belief-model report: AUC, calibration and top-1 waits of a model against the baselines.

    python -m sichuan_env.train.belief.report agents/checkpoints/belief.pt --data $DATA/heur-test
        --json docs/belief_report.json --plots docs

Reads a dataset folder (``sichuan_env.train.data.make_dataset``, observation v2) and scores
``BeliefModel`` and the count/rule baselines (``sichuan_env.train.belief.baselines``) on
the same rows (a sequence model also reads each row's event tokens from the
folder's ``games.parquet``):

| head | rows scored | label |
| --- | --- | --- |
| tenpai | opponents not yet won | ``tenpai`` |
| waits | the 27 tiles of each tenpai opponent (pooled) | ``waits`` |
| hand | the 27 tiles of each opponent not yet won (pooled) | ``hand > 0`` |
| deal_in | own-turn decisions, each legal discard tile | any opponent's ``deal_in > 0`` |

``--filter`` also scores the policy-aware belief filter
(``research.hand_reading.filter``, a few decisions per second: use ``--games N`` to
score the hands with ``game_id < N`` only, every predictor on the same rows;
``--filter-cache`` keeps its predictions).

Metrics: ROC AUC (rank based, ties averaged), expected calibration error
(``ece``: 15 equal-width bins, weighted by count), the positive rate, and for
waits the top-1 accuracy (the most probable tile is a wait). Prints a table,
writes JSON (``--json``) and ROC / calibration plots (``--plots DIR``:
``belief_roc.png``, ``belief_calibration.png``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import sichuan_env.train.belief.baselines as belief_baselines
from sichuan_env.train.data.dataset import iter_batches, read_meta

from sichuan_env._cli import run
from sichuan_env.engine.actions import DISCARD

HEAD_NAMES = ("tenpai", "waits", "hand", "deal_in")
ECE_BINS = 15


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC of scores for binary labels (Mann–Whitney; tied scores share their mean rank).

    Raises:
        ValueError: different lengths, or only one class present.
    """
    y = np.asarray(y).astype(bool).ravel()
    s = np.asarray(score, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"labels {y.shape} and scores {s.shape} differ")
    pos = int(y.sum())
    neg = y.size - pos
    if pos == 0 or neg == 0:
        raise ValueError("AUC needs both positive and negative labels")
    order = np.argsort(s, kind="mergesort")
    sorted_s = s[order]
    # Average rank (1-based) of each group of tied scores.
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])
    ends = np.r_[starts[1:], s.size]
    avg = (starts + ends + 1) / 2.0
    ranks = np.empty(s.size)
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def ece(y: np.ndarray, p: np.ndarray, bins: int = ECE_BINS) -> float:
    """Expected calibration error: sum over equal-width bins of ``n_b / n * |mean(p) - mean(y)|``.

    A probability of exactly 1 falls in the last bin.

    Raises:
        ValueError: different lengths, no rows, or probabilities outside [0, 1].
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    if y.shape != p.shape or y.size == 0:
        raise ValueError(
            f"labels {y.shape} and probabilities {p.shape} must match and be non-empty"
        )
    if p.min() < 0 or p.max() > 1:
        raise ValueError("probabilities must lie in [0, 1]")
    b = np.minimum((p * bins).astype(np.int64), bins - 1)
    n = np.bincount(b, minlength=bins)
    gap = np.abs(np.bincount(b, p, bins) - np.bincount(b, y, bins))
    return float(gap.sum() / y.size) if n.sum() else 0.0


def reliability(y: np.ndarray, p: np.ndarray, bins: int = ECE_BINS) -> dict[str, list[float]]:
    """Per bin: mean probability, positive rate and count (bins with rows only)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    b = np.minimum((p * bins).astype(np.int64), bins - 1)
    n = np.bincount(b, minlength=bins)
    keep = n > 0
    return {
        "mean_p": (np.bincount(b, p, bins)[keep] / n[keep]).tolist(),
        "rate": (np.bincount(b, y, bins)[keep] / n[keep]).tolist(),
        "count": n[keep].tolist(),
    }


def targets(batch: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{head: (label, scored)}`` boolean arrays in the heads' shapes (see the table above)."""
    active = batch["active"].astype(bool)
    tenpai = batch["tenpai"].astype(bool)
    own_turn = batch["mask"][:, DISCARD : DISCARD + 27] == 1
    return {
        "tenpai": (tenpai, active),
        "waits": (batch["waits"] > 0, np.repeat(tenpai[:, :, None], 27, axis=2)),
        "hand": (batch["hand"] > 0, np.repeat(active[:, :, None], 27, axis=2)),
        "deal_in": ((batch["deal_in"] > 0).any(axis=1), own_turn),
    }


def _top1(pred: np.ndarray, waits: np.ndarray, tenpai: np.ndarray) -> tuple[int, int]:
    best = pred.argmax(axis=2)  # [N, 3]
    hit = np.take_along_axis(waits > 0, best[:, :, None], axis=2)[:, :, 0]
    return int(hit[tenpai].sum()), int(tenpai.sum())


def collect(
    folder: str | Path,
    model: Any | None,
    batch_size: int = 4096,
    max_rows: int | None = None,
    games: int | None = None,
    filter_preds: dict[tuple[int, int], dict[str, np.ndarray]] | None = None,
    blend: dict[str, list[float]] | None = None,
) -> dict[str, Any]:
    """Labels and every predictor's probabilities on the scored rows of a dataset folder.

    ``games`` keeps only the rows of hands with ``game_id < games``;
    ``filter_preds`` (``research.hand_reading.filter_eval.predict_folder``) adds the
    predictor ``"filter"``, which must cover every kept row; ``blend``
    (``research.hand_reading.blend.load_blend``, needs the model and the filter) adds
    ``"model+filter"``.

    Returns:
        ``{"labels": {head: y}, "preds": {head: {name: p}}, "top1": {name: [hits, n]},
        "rows": decisions read, "groups": {head: game_id of each scored cell}}``; the model
        is named ``"model"``.
    """
    meta = read_meta(folder)
    if meta["obs_version"] != 2:
        raise ValueError(
            f"{folder}: the report needs observation v2 data, got v{meta['obs_version']}"
        )
    labels: dict[str, list[np.ndarray]] = {h: [] for h in HEAD_NAMES}
    groups: dict[str, list[np.ndarray]] = {h: [] for h in HEAD_NAMES}
    preds: dict[str, dict[str, list[np.ndarray]]] = {h: {} for h in HEAD_NAMES}
    top1: dict[str, list[int]] = {}
    rows = 0
    events = None
    if model is not None and getattr(model, "needs_tokens", False):
        from sichuan_env.train.belief.seq import EventTable

        events = EventTable(folder)
    for batch in iter_batches(folder, batch_size):
        if games is not None:
            keep = batch["game_id"] < games
            if not keep.any():
                continue
            batch = {k: v[keep] for k, v in batch.items()}
        tg = targets(batch)
        by_name = belief_baselines.predict(batch["obs"])
        if filter_preds is not None:
            keys = [
                (int(g), int(d)) for g, d in zip(batch["game_id"], batch["decision"], strict=True)
            ]
            missing = [k for k in keys if k not in filter_preds]
            if missing:
                raise ValueError(f"the filter's predictions lack (game_id, decision) {missing[0]}")
            frows = [filter_preds[k] for k in keys]
            for h in HEAD_NAMES:
                by_name[h] = {"filter": np.stack([r[h] for r in frows]), **by_name[h]}
        if model is not None:
            tokens = None if events is None else events.row_tokens(batch)
            out = (
                model.predict(batch["obs"])
                if tokens is None
                else model.predict(batch["obs"], tokens)
            )
            for h in HEAD_NAMES:
                by_name[h] = {"model": out[h], **by_name[h]}
        if blend is not None:
            if model is None or filter_preds is None:
                raise ValueError("a blend needs the model and the filter's predictions")
            from research.hand_reading.blend import apply

            for h in HEAD_NAMES:
                mixed = apply(blend[h], by_name[h]["model"], by_name[h]["filter"])
                by_name[h] = {"model+filter": mixed, **by_name[h]}
        for h in HEAD_NAMES:
            y, scored = tg[h]
            labels[h].append(y[scored])
            gid = batch["game_id"].reshape((-1,) + (1,) * (y.ndim - 1))
            groups[h].append(np.broadcast_to(gid, y.shape)[scored])
            for name, p in by_name[h].items():
                preds[h].setdefault(name, []).append(np.asarray(p, dtype=np.float32)[scored])
        tenpai = batch["tenpai"].astype(bool)
        for name, p in by_name["waits"].items():
            hits, n = _top1(p, batch["waits"], tenpai)
            acc = top1.setdefault(name, [0, 0])
            acc[0] += hits
            acc[1] += n
        rows += len(batch["obs"])
        if max_rows is not None and rows >= max_rows:
            break
    return {
        "labels": {h: np.concatenate(v) for h, v in labels.items()},
        "preds": {h: {k: np.concatenate(v) for k, v in d.items()} for h, d in preds.items()},
        "top1": top1,
        "rows": rows,
        "groups": {h: np.concatenate(v) for h, v in groups.items()},
    }


def score(data: dict[str, Any]) -> dict[str, Any]:
    """AUC, ECE, positive rate and counts per head and predictor (and top-1 waits)."""
    out: dict[str, Any] = {"rows": data["rows"], "heads": {}}
    for h in HEAD_NAMES:
        y = data["labels"][h]
        head: dict[str, Any] = {
            "n": int(y.size),
            "positive_rate": float(y.mean()) if y.size else 0.0,
        }
        for name, p in data["preds"][h].items():
            entry = {"auc": auc(y, p), "ece": ece(y, p), "reliability": reliability(y, p)}
            if h == "waits":
                hits, n = data["top1"][name]
                entry["top1"] = hits / max(n, 1)
            head[name] = entry
        out["heads"][h] = head
    return out


def print_table(report: dict[str, Any]) -> None:
    """The report as a rich table: one row per head and predictor."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"belief report ({report['rows']} decisions)")
    for col in ("head", "predictor", "scored", "positives", "AUC", "ECE", "top-1"):
        table.add_column(col, justify="left" if col in ("head", "predictor") else "right")
    for h, head in report["heads"].items():
        for name, e in head.items():
            if not isinstance(e, dict):
                continue
            top = f"{e['top1']:.3f}" if "top1" in e else ""
            table.add_row(
                h, name, str(head["n"]), f"{head['positive_rate']:.3f}",
                f"{e['auc']:.4f}", f"{e['ece']:.4f}", top,
            )  # fmt: skip
    Console().print(table)


def plot(data: dict[str, Any], report: dict[str, Any], out_dir: Path) -> list[Path]:
    """ROC curves and reliability diagrams, one panel per head; returns the PNG paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    roc_fig, roc_axes = plt.subplots(1, 4, figsize=(16, 4.2))
    cal_fig, cal_axes = plt.subplots(1, 4, figsize=(16, 4.2))
    for ax_r, ax_c, h in zip(roc_axes, cal_axes, HEAD_NAMES, strict=True):
        y = data["labels"][h].astype(bool)
        for name, p in data["preds"][h].items():
            fpr, tpr = _roc(y, p)
            a = report["heads"][h][name]["auc"]
            ax_r.plot(fpr, tpr, label=f"{name} ({a:.3f})")
            rel = report["heads"][h][name]["reliability"]
            e = report["heads"][h][name]["ece"]
            ax_c.plot(rel["mean_p"], rel["rate"], "o-", ms=3, label=f"{name} (ECE {e:.3f})")
        for ax, xl, yl in ((ax_r, "false positive rate", "true positive rate"),
                           (ax_c, "predicted probability", "observed rate")):  # fmt: skip
            ax.plot([0, 1], [0, 1], ":", color="grey")
            ax.set_title(h)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.legend(fontsize=7, loc="lower right")
    paths = [out_dir / "belief_roc.png", out_dir / "belief_calibration.png"]
    for fig, path in zip((roc_fig, cal_fig), paths, strict=True):
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
    return paths


def _roc(y: np.ndarray, p: np.ndarray, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-p, kind="mergesort")
    ys = y[order]
    tp = np.r_[0, np.cumsum(ys)]
    fp = np.r_[0, np.cumsum(~ys)]
    pick = np.unique(np.linspace(0, ys.size, points).astype(np.int64))
    return fp[pick] / max(fp[-1], 1), tp[pick] / max(tp[-1], 1)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="python -m sichuan_env.train.belief.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("checkpoint", help='a belief checkpoint (.pt), "belief" (shipped) or "none"')
    p.add_argument("--data", type=Path, required=True, help="a dataset folder (observation v2)")
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument(
        "--plots", type=Path, help="write belief_roc.png and belief_calibration.png here"
    )
    p.add_argument("--max-rows", type=int, help="read at most this many decisions")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--games", type=int, help="score only the hands with game_id < GAMES")
    p.add_argument(
        "--filter", action="store_true",
        help="also score the policy-aware belief filter (research.hand_reading.filter; slow, use --games)",
    )  # fmt: skip
    p.add_argument("--filter-particles", type=int, default=16, help="filter walls per hand")
    p.add_argument(
        "--filter-steps", type=int, default=500, help="filter moves per wall and decision"
    )
    p.add_argument("--filter-burn", type=int, default=800, help="filter burn-in per wall")
    p.add_argument(
        "--filter-cache", type=Path, nargs="+",
        help="read the filter's predictions from these .npz files (merged) if they exist; "
        "with one path that does not, compute them and write them there",
    )  # fmt: skip
    p.add_argument(
        "--filter-method", choices=("walls", "smc"), default="walls",
        help="the filter run when there is no cache: walls (BeliefFilter) or smc (HandReader)",
    )  # fmt: skip
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="a 95%% interval of AUC(A) - AUC(B) per head (bootstrap over hands)")  # fmt: skip
    p.add_argument("--blend", type=Path,
                   help="also score model+filter, a blend fitted by research.hand_reading.blend (--filter)")  # fmt: skip
    args = p.parse_args(argv)
    if args.games is not None and args.games < 1:
        p.error("--games must be >= 1")
    if args.filter and args.games is None:
        p.error("--filter needs --games N (the filter scores a few decisions per second)")
    if args.blend is not None and (not args.filter or args.checkpoint == "none"):
        p.error("--blend needs --filter and a checkpoint")
    model = None
    try:
        if args.checkpoint != "none":
            import torch
            from sichuan_env.agents.belief.model import BeliefModel

            torch.set_num_threads(max(1, args.threads))
            model = BeliefModel.load(args.checkpoint)
        filter_preds = None
        if args.filter:
            from research.hand_reading.filter import BeliefFilter
            from research.hand_reading.filter_eval import load_many, predict_folder, save_preds

            caches = args.filter_cache or []
            if caches and all(c.exists() for c in caches):
                filter_preds = load_many(caches)
                filter_stats = {"cache": [str(c) for c in caches]}
            elif len(caches) > 1:
                raise ValueError(
                    f"--filter-cache: {[str(c) for c in caches if not c.exists()]} missing"
                )
            else:
                if args.filter_method == "smc":
                    from research.hand_reading.smc import HandReader

                    filt = HandReader()
                else:
                    filt = BeliefFilter(args.filter_particles, args.filter_steps, args.filter_burn)
                filter_preds, filter_stats = predict_folder(args.data, args.games, filt)
                if caches:
                    save_preds(caches[0], filter_preds)
        blend = None
        if args.blend is not None:
            from research.hand_reading.blend import load_blend

            blend = load_blend(args.blend)
        data = collect(args.data, model, max_rows=args.max_rows, games=args.games,
                       filter_preds=filter_preds, blend=blend)  # fmt: skip
        report = score(data)
        if args.compare:
            from research.hand_reading.blend import compare

            report["compare"] = compare(data, *args.compare)
        if args.filter:
            report["filter"] = filter_stats
    except ValueError as exc:
        p.error(str(exc))
    report["checkpoint"] = args.checkpoint
    report["data"] = str(args.data)
    print_table(report)
    for h, c in report.get("compare", {}).items():
        print(f"{h}: AUC({args.compare[0]}) - AUC({args.compare[1]}) = {c['diff']:+.4f} "
              f"[{c['lo']:+.4f}, {c['hi']:+.4f}] (95%, {c['boot']} bootstraps over hands)")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.plots:
        for path in plot(data, report, args.plots):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "sichuan_env.train.belief.report"))
