"""The belief-model report: AUC, calibration and top-1 waits of a model against the baselines.

    python -m sichuan_env.train.belief.report agents/checkpoints/belief.pt --data $DATA/heur-test
        --json docs/belief_report.json --plots docs
    python -m sichuan_env.train.belief.report belief --data $DATA/heur-test --games 100
        --predictions reader=runs/a.npz,runs/b.npz --compare model reader

Reads a dataset folder (``sichuan_env.train.data.make_dataset``, observation v2) and scores
``BeliefModel`` and the count/rule baselines (``sichuan_env.train.belief.baselines``) on
the same rows (a sequence model also reads each row's event tokens from the
folder's ``games.parquet``). Each head is scored on the cells of its table
entry (``sichuan_env.agents.belief.heads``):

| head | rows scored | label |
| --- | --- | --- |
| tenpai | opponents not yet won | ``tenpai`` |
| waits | the 27 tiles of each tenpai opponent (pooled) | ``waits`` |
| hand | the 27 tiles of each opponent not yet won (pooled) | ``hand > 0`` |
| deal_in | own-turn decisions, each legal discard tile | any opponent's ``deal_in > 0`` |

``--predictions NAME=FILE[,FILE...]`` adds another predictor from prediction
files (``sichuan_env.train.belief.predictions``: ``.npz`` by ``(game_id,
decision)``, checked; it must cover every scored row, so use ``--games N`` to
score the hands with ``game_id < N`` only, every predictor on the same rows).
``--compare A B`` gives a 95% interval of AUC(A) - AUC(B) per head, a paired
bootstrap over hands (``sichuan_env.agents.eval.metrics``).

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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import sichuan_env.train.belief.baselines as belief_baselines
from sichuan_env.agents.belief.heads import HEADS, legal_discards
from sichuan_env.agents.eval.metrics import auc, ece, paired_bootstrap, reliability, roc_curve
from sichuan_env.train.belief.predictions import PredictionTable, load_predictions
from sichuan_env.train.data.dataset import EventTable, iter_batches, read_meta

from sichuan_env._cli import PlainHelp, dir_problem, int_arg, path_problem, run
from sichuan_env._files import save_figure, write_atomic

Preds = dict[str, dict[str, np.ndarray]]
"""``{head: {predictor: probabilities}}`` of one batch."""


def targets(batch: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{head: (label, scored)}`` boolean arrays in the heads' shapes (see the table above).

    Args:
        batch: a decoded dataset batch (``iter_batches``), with its ``mask``.
    """
    src = {**batch, "legal": legal_discards(batch["mask"])}
    return {h.name: (h.label_of(batch[h.column]), h.mask_of(src)) for h in HEADS}


def _top1(pred: np.ndarray, label: np.ndarray, scope: np.ndarray) -> tuple[int, int]:
    best = pred.argmax(axis=2)  # [N, 3]
    hit = np.take_along_axis(label, best[:, :, None], axis=2)[:, :, 0]
    return int(hit[scope].sum()), int(scope.sum())


def _add(by_name: Preds, new: Mapping[str, Mapping[str, np.ndarray]], first: bool) -> None:
    for h, preds in new.items():
        taken = set(preds) & set(by_name.get(h, {}))
        if taken:
            raise ValueError(f"head {h}: predictor name {min(taken)!r} is taken")
        old = by_name.get(h, {})
        by_name[h] = {**preds, **old} if first else {**old, **preds}


def collect(
    folder: str | Path,
    model: Any | None,
    batch_size: int = 4096,
    max_rows: int | None = None,
    games: int | None = None,
    predictions: Mapping[str, PredictionTable] | None = None,
    derive: Callable[[Preds], Mapping[str, Mapping[str, np.ndarray]]] | None = None,
) -> dict[str, Any]:
    """Labels and every predictor's probabilities on the scored rows of a dataset folder.

    Args:
        folder: the dataset folder (observation v2).
        model: a ``BeliefModel`` (named ``"model"``), or None.
        batch_size: rows decoded at a time.
        max_rows: stop after about this many decisions.
        games: keep only the rows of hands with ``game_id < games``.
        predictions: more predictors by name (``load_predictions``); each must cover every
            kept row.
        derive: predictors computed from the others on each batch (``{head: {name: p}}`` in
            the heads' full shapes), e.g. a blend; called with every predictor so far.

    Returns:
        ``{"labels": {head: y}, "preds": {head: {name: p}}, "top1": {head: {name: [hits, n]}},
        "rows": decisions read, "groups": {head: game_id of each scored cell}}``.

    Raises:
        ValueError: not observation v2, a prediction file missing a row, a name taken twice.
    """
    meta = read_meta(folder)
    if meta["obs_version"] != 2:
        raise ValueError(
            f"{folder}: the report needs observation v2 data, got v{meta['obs_version']}"
        )
    reserved = {"model"} | {n for rules in belief_baselines.BASELINES.values() for n in rules}
    taken = sorted(reserved & set(predictions or {}))
    if taken:
        raise ValueError(f"the predictor name {taken[0]!r} is taken (the model's or a baseline's)")
    labels: dict[str, list[np.ndarray]] = {h.name: [] for h in HEADS}
    groups: dict[str, list[np.ndarray]] = {h.name: [] for h in HEADS}
    preds: dict[str, dict[str, list[np.ndarray]]] = {h.name: {} for h in HEADS}
    top1: dict[str, dict[str, list[int]]] = {h.name: {} for h in HEADS if h.top1}
    rows = 0
    events = EventTable(folder) if getattr(model, "needs_tokens", False) else None
    for batch in iter_batches(folder, batch_size):
        if games is not None:
            keep = batch["game_id"] < games
            if not keep.any():
                continue
            batch = {k: v[keep] for k, v in batch.items()}
        tg = targets(batch)
        by_name: Preds = {h.name: {} for h in HEADS}
        _add(by_name, belief_baselines.predict(batch["obs"]), first=False)
        for name, table in (predictions or {}).items():
            found = table.lookup(batch["game_id"], batch["decision"])
            _add(by_name, {h: {name: p} for h, p in found.items()}, first=True)
        if model is not None:
            tokens = None if events is None else events.row_tokens(batch)
            args = (batch["obs"],) if tokens is None else (batch["obs"], tokens)
            _add(by_name, {h: {"model": p} for h, p in model.predict(*args).items()}, first=True)
        if derive is not None:
            _add(by_name, derive(by_name), first=True)
        for h in HEADS:
            y, scored = tg[h.name]
            labels[h.name].append(y[scored])
            gid = batch["game_id"].reshape((-1,) + (1,) * len(h.shape))
            groups[h.name].append(np.broadcast_to(gid, y.shape)[scored])
            for name, p in by_name[h.name].items():
                preds[h.name].setdefault(name, []).append(np.asarray(p, np.float32)[scored])
                if h.top1:
                    hits, n = _top1(np.asarray(p), y, scored[:, :, 0])
                    acc = top1[h.name].setdefault(name, [0, 0])
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
    """AUC, ECE, positive rate and counts per head and predictor (and top-1 where the head has it)."""
    out: dict[str, Any] = {"rows": data["rows"], "heads": {}}
    for h, y in data["labels"].items():
        head: dict[str, Any] = {
            "n": int(y.size),
            "positive_rate": float(y.mean()) if y.size else 0.0,
        }
        for name, p in data["preds"][h].items():
            entry = {"auc": auc(y, p), "ece": ece(y, p), "reliability": reliability(y, p)}
            if name in data["top1"].get(h, {}):
                hits, n = data["top1"][h][name]
                entry["top1"] = hits / max(n, 1)
            head[name] = entry
        out["heads"][h] = head
    return out


def compare(
    data: dict[str, Any], a: str, b: str, boot: int = 200, seed: int = 0
) -> dict[str, dict[str, float]]:
    """AUC(a) - AUC(b) per head both predict, a 95% interval from a paired bootstrap over hands.

    ``data`` is ``collect``'s output; the hands (``groups``) are resampled with
    replacement, both predictors scored on each resample (``paired_bootstrap``).

    Raises:
        ValueError: ``a == b``, ``boot < 1``, or no head that both predict.
    """
    if a == b:
        raise ValueError("--compare needs two different predictors")
    if boot < 1:
        raise ValueError(f"boot must be >= 1, got {boot}")
    rng = np.random.default_rng(seed)
    out = {}
    for h, preds in data["preds"].items():
        if a in preds and b in preds:
            out[h] = paired_bootstrap(data["labels"][h], preds[a], preds[b], data["groups"][h],
                                      auc, boot, rng)  # fmt: skip
    if not out:
        names = sorted({n for p in data["preds"].values() for n in p})
        raise ValueError(f"--compare: no head has both {a!r} and {b!r}; predictors: {names}")
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
    names = list(data["labels"])
    roc_fig, roc_axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4.2), squeeze=False)
    cal_fig, cal_axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4.2), squeeze=False)
    for ax_r, ax_c, h in zip(roc_axes[0], cal_axes[0], names, strict=True):
        y = data["labels"][h].astype(bool)
        for name, p in data["preds"][h].items():
            fpr, tpr = roc_curve(y, p)
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
        save_figure(fig, path, dpi=90)
        plt.close(fig)
    return paths


def parse_predictions(specs: list[str] | None) -> dict[str, PredictionTable]:
    """``--predictions NAME=FILE[,FILE...]`` (repeatable; one name's files merge), loaded.

    Raises:
        ValueError: a spec without a name or files, a reserved name, or a bad file.
    """
    files: dict[str, list[str]] = {}
    for spec in specs or []:
        name, sep, paths = spec.partition("=")
        name = name.strip()
        if not sep or not name or not paths.strip():
            raise ValueError(f"--predictions takes NAME=FILE[,FILE...], got {spec!r}")
        if name == "model":
            raise ValueError("--predictions: the name 'model' is the checkpoint's")
        files.setdefault(name, []).extend(p for p in paths.split(",") if p)
    return {name: load_predictions(paths) for name, paths in files.items()}


def build_parser(prog: str = "python -m sichuan_env.train.belief.report",
                 description: str | None = __doc__) -> argparse.ArgumentParser:  # fmt: skip
    """The CLI's argument parser (a research report adds its own options to it)."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=PlainHelp)  # fmt: skip
    p.add_argument("checkpoint", help='a belief checkpoint (.pt), "belief" (shipped) or "none"')
    p.add_argument("--data", type=Path, required=True, help="a dataset folder (observation v2)")
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument(
        "--plots", type=Path, help="write belief_roc.png and belief_calibration.png here"
    )
    p.add_argument("--max-rows", type=int_arg(1, 10**9), help="read at most this many decisions")
    p.add_argument("--threads", type=int_arg(1, 1024), default=2)
    p.add_argument("--games", type=int, help="score only the hands with game_id < GAMES")
    p.add_argument("--predictions", action="append", metavar="NAME=FILE[,FILE...]",
                   help="also score this predictor's prediction files (.npz; repeatable)")  # fmt: skip
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="a 95%% interval of AUC(A) - AUC(B) per head (bootstrap over hands)")  # fmt: skip
    return p


def check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Reject bad option values and unwritable outputs (``p.error``), before any scoring."""
    if args.games is not None and args.games < 1:
        p.error("--games must be >= 1")
    if args.max_rows is not None and args.max_rows < 1:
        p.error("--max-rows must be >= 1")
    if args.json is not None and (problem := path_problem(args.json)):
        p.error(f"--json: {problem}")
    if args.plots is not None and (problem := dir_problem(args.plots)):
        p.error(f"--plots: {problem}")


def make_report(
    args: argparse.Namespace,
    predictions: Mapping[str, PredictionTable] | None = None,
    derive: Callable[[Preds], Mapping[str, Mapping[str, np.ndarray]]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(collect's data, the report)`` for parsed arguments, with extra predictors.

    Raises:
        ValueError: a bad checkpoint, dataset, prediction file or comparison.
    """
    model = None
    if args.checkpoint != "none":
        import torch
        from sichuan_env.agents.belief.model import BeliefModel

        torch.set_num_threads(max(1, args.threads))
        model = BeliefModel.load(args.checkpoint)
    tables = parse_predictions(args.predictions)
    clash = sorted(set(tables) & set(predictions or {}))
    if clash:
        raise ValueError(f"--predictions: the name {clash[0]!r} is taken")
    tables.update(predictions or {})
    data = collect(args.data, model, max_rows=args.max_rows, games=args.games,
                   predictions=tables, derive=derive)  # fmt: skip
    report = score(data)
    if args.compare:
        report["compare"] = compare(data, *args.compare)
    if tables:
        report["predictions"] = {name: {"source": t.source, "rows": len(t), "heads": list(t.heads)}
                                 for name, t in tables.items()}  # fmt: skip
    report["checkpoint"] = args.checkpoint
    report["data"] = str(args.data)
    return data, report


def write_report(args: argparse.Namespace, data: dict[str, Any], report: dict[str, Any]) -> None:
    """Print the table and comparisons; write ``--json`` and ``--plots``."""
    print_table(report)
    for h, c in report.get("compare", {}).items():
        print(f"{h}: AUC({args.compare[0]}) - AUC({args.compare[1]}) = {c['diff']:+.4f} "
              f"[{c['lo']:+.4f}, {c['hi']:+.4f}] (95%, {c['boot']} bootstraps over hands)")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.json, json.dumps(report, indent=1) + "\n")
    if args.plots:
        for path in plot(data, report, args.plots):
            print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = build_parser()
    args = p.parse_args(argv)
    check_args(p, args)
    try:
        data, report = make_report(args)
    except ValueError as exc:
        p.error(str(exc))
    write_report(args, data, report)
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "sichuan_env.train.belief.report"))
