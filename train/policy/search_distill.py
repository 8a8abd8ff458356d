"""Search distillation by advantage regression: a prior network learns where leaving the heuristic pays.

A ``PolicyConfig(prior=True)`` network acts by ``argmax(l + G * onehot(h))``:
``l`` its own logits, ``h`` the heuristic's action, ``G`` its ``prior_gain``.
Here ``l[a] - l[h]`` is fitted (squared error) to the search's estimate of
how many points action ``a`` gains over ``h`` (``sichuan_env.train.policy.search_labels``: the
mean over paired rollouts, one noisy draw per row; the network learns its
expectation given the observation). Acting then leaves the heuristic only
for an action whose predicted gain clears ``G`` points. Legal actions that
are not candidates (discards two shanten behind, and every alternative at
claims and setup, taken from heuristic self-play) are pushed at least
``--floor`` points below ``h`` (a squared hinge), so they are never chosen.
The trunk starts from ``--init`` (a behaviour-cloned prior network); its
policy layer starts at zero (every predicted gain 0) unless ``--keep-head``.
Labels of one phase only (``exit_labels --after-win``) still move the shared
trunk everywhere; ``--anchor-before-win ROWS`` adds ROWS decisions from before
any win, each fitted to ``--init``'s own predicted gains
(``sichuan_env.train.policy.distill_anchor``).

``G`` is chosen among ``--margins`` by a duplicate match of each against
three heuristics (``--select-walls`` walls, seed ``--select-seed``: the same walls
for every margin), scored by the advantage-sum estimate
(``--select-estimator advantage``, the default: unbiased, about a quarter of the plain
estimate's variance for these networks) or plain points; confirm the choice on other
seeds with ``sichuan_env.agents.eval.evaluate``. Alongside, held-out
hands (a tenth of the label set, split by hand) give a noisy estimate: the network's choice at every held-out row is scored by that
row's own rollout gain; their sum per hand, divided by the share of
decisions labelled and by the four seats, estimates the points per hand a
seat gains over the heuristic (first order: one step of policy
improvement, the performance-difference identity), with a 95% interval
over hands. The best held-out checkpoint
(regression error) is the one kept. The objective and the held-out estimate
are in ``sichuan_env.train.policy.distill_objective``.

``--resume`` continues a run stopped early (``--minutes``, ``--run-minutes``, Ctrl-C
after an epoch) or extends it (a larger ``--epochs``), and the result is the run
that was never stopped: each epoch's shuffle is drawn from ``--seed`` and the
epoch's number. A resume with another setting that changes the result
(``--objective``, ``--lr``, ``--seed``, ``--margins``, ...) is refused, naming it;
``--threads``, ``--device``, ``--amp`` and the budgets may change, and ``--init`` /
``--keep-head`` come from the run.

    python -m sichuan_env.train.policy.search_distill --labels runs/labels --init runs/bcp/last.pt --run runs/sd
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.device import add_device_args, amp_dtype, autocast, resolve_device
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.common import (
    BEST,
    ESTIMATORS,
    RUN_FILES,
    MetricLog,
    add_budget_args,
    budget_left,
    check_run_budget,
    command_line,
    git_commit,
    load_run,
    refuse_changed_settings,
    run_settings,
    save_run_or_fail,
    setup,
    step_rng,
    write_failure,
)
from sichuan_env.train.policy.distill_anchor import anchor_rows, before_win_rows
from sichuan_env.train.policy.distill_objective import (
    MARGINS,
    OBJECTIVES,
    init_choices,
    margin_table,
    prepare,
    tensors,
    val_loss,
)
from sichuan_env.train.policy.search_labels import load_labels, read_label_meta

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    run,
    write_atomic,
)

PROG = "sichuan_env.train.policy.search_distill"
COUNTERS = {"epoch": int, "samples": int, "wall_clock_s": float, "best_val": BEST}
"""The run's counters (``state.pt``) and their types."""
START_ONLY = ("init", "keep_head")
"""Options that shape a new run only; a resumed run takes them from its checkpoint."""
OLD_RUN_KEYS = ("val_mod", "objective", "temperature")
"""Settings a run saved before ``settings`` was recorded kept at its metadata's top level."""


def _labels_key(dirs: list[Path]) -> str:
    """How a run records its label directories (one: the path, as before; several: joined by spaces)."""
    return " ".join(map(str, dirs))


HAND_STRIDE = 10**9
"""Hand indices of the ``i``-th pooled label directory are offset by ``i * HAND_STRIDE * val_mod``."""


def pooled_labels(dirs: list[Path], val_mod: int) -> tuple[dict[str, np.ndarray], dict]:
    """The rows of every label directory, pooled, and the first one's ``meta.json``.

    Hand indices stay distinct across directories (each is offset by a
    multiple of ``val_mod``, so a hand keeps its held-out split).

    Raises:
        ValueError: a directory that cannot be read, or directories labelled at different ``p_label``.
    """
    parts, metas = [], []
    for i, d in enumerate(dirs):
        rows = load_labels(d)
        if len(rows["hand"]) and rows["hand"].max() >= HAND_STRIDE:
            raise ValueError(f"{d}: hand indices reach {HAND_STRIDE}")
        rows["hand"] = rows["hand"] + i * HAND_STRIDE * val_mod
        parts.append(rows)
        metas.append(read_label_meta(d))
    p_labels = {float(m["settings"]["p_label"]) for m in metas}
    if len(p_labels) > 1:
        raise ValueError(f"the label directories were made at different p_label {sorted(p_labels)}")
    return {k: np.concatenate([r[k] for r in parts]) for k in parts[0]}, metas[0]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m sichuan_env.train.policy.search_distill``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], prog=PROG)
    p.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        required=True,
        help="label directories (sichuan_env.train.policy.search_labels or exit_labels; several are pooled)",
    )
    p.add_argument("--no-anchor-claims", dest="anchor_claims", action="store_false",
                   help="no heuristic claim answers as anchor rows (labels that search claims)")  # fmt: skip
    p.add_argument("--init", type=Path, help="a prior network checkpoint to start from")
    p.add_argument("--run", type=Path, required=True, help="output directory")
    p.add_argument("--resume", action="store_true", help="continue the run in --run")
    add_overwrite(p, "run")
    p.add_argument("--epochs", type=int_arg(1, 10**6), default=12)
    add_budget_args(p, 60.0)
    p.add_argument("--batch", type=int_arg(1, 1 << 20), default=512)
    p.add_argument("--lr", type=float_arg(0, 1), default=3e-4)
    p.add_argument("--floor", type=float_arg(0, 1000, include_lo=True), default=1.0,
                   help="non-candidates this far below (points)")  # fmt: skip
    p.add_argument("--hinge-coef", type=float_arg(0, 1000, include_lo=True), default=1.0)
    p.add_argument("--objective", choices=sorted(OBJECTIVES), default="regression",
                   help="regression of each candidate's gain (default), or softmax: a cross-entropy "
                        "to softmax(gain / --temperature) over the candidates")  # fmt: skip
    p.add_argument("--temperature", type=float_arg(0, 100), default=1.0, help="softmax temperature, points (1)")  # fmt: skip
    p.add_argument("--keep-head", action="store_true", help="keep --init's policy layer (default: zeroed, every predicted gain 0)")  # fmt: skip
    p.add_argument("--anchor-decisions", type=int_arg(1, 10**8), default=300_000, help="self-play decisions scanned for claim/setup rows")  # fmt: skip
    p.add_argument("--anchor-before-win", type=int_arg(0, 10**8), default=0, metavar="ROWS",
                   help="ROWS self-play decisions from before any seat has won, each fitted to "
                        "--init's own predicted gains: keeps its play there while after-win labels "
                        "(exit_labels --after-win) move the trunk (0: none)")  # fmt: skip
    p.add_argument("--val-mod", type=int_arg(2, 10**6), default=10,
                   help="hands with index %% MOD == 0 are held out")  # fmt: skip
    p.add_argument("--margins", type=float_arg(0, 1000, include_lo=True), nargs="+", default=list(MARGINS), help="prior gains (points) to choose from")  # fmt: skip
    p.add_argument("--select-walls", type=int_arg(0, 100_000), default=2500, help="duplicate walls per margin (0: choose by the held-out estimate)")  # fmt: skip
    p.add_argument("--select-seed", type=int_arg(0, MAX_SEED), default=100)
    p.add_argument("--select-estimator", choices=ESTIMATORS, default="advantage",
                   help="what the match scores: the advantage-sum estimate (default; about a "
                        "quarter of plain's variance), or plain points")  # fmt: skip
    p.add_argument("--threads", type=int_arg(1, 1024), default=2)
    add_device_args(p)
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    return p


def main(argv: list[str] | None = None) -> dict:
    """Fit, pick the margin on held-out hands, save ``RUN/distilled.pt``; returns the report."""
    p = build_parser()
    args = p.parse_args(argv)
    if (args.init is None) == (not args.resume):
        p.error("give --init to start a run or --resume to continue one (not both)")
    problem = dir_problem(args.run)
    if problem:
        p.error(f"--run: {problem}")
    claim_output_or_exit(p, "--run", args.run, (*RUN_FILES, "distilled.pt", "distilled.json",
                         "report.json"), resume=args.resume, overwrite=args.overwrite, what="run")  # fmt: skip
    try:
        rows, label_meta = pooled_labels(args.labels, args.val_mod)
    except (OSError, ValueError) as exc:
        fail(PROG, f"--labels: {exc}")
    p_label = float(label_meta["settings"]["p_label"])
    is_val = rows["hand"] % args.val_mod == 0
    if not is_val.any():
        fail(PROG, f"--labels: no held-out rows: none of the {len(np.unique(rows['hand']))} "
                   f"hands has an index divisible by --val-mod {args.val_mod}")  # fmt: skip
    if is_val.all():
        fail(PROG, f"--labels: every row is held out (--val-mod {args.val_mod}): none to train on")
    setup(args.threads, args.seed)
    device = resolve_device(args.device)
    cast = amp_dtype(device, args.amp)

    def make_opt(net: PolicyNet) -> torch.optim.Optimizer:
        return torch.optim.Adam(
            [q for n, q in net.named_parameters() if n != "prior_gain"], lr=args.lr
        )

    init = str(args.init)
    settings = run_settings(args, skip=START_ONLY)
    if args.resume:
        try:
            net, opt, counters, doc = load_run(
                args.run, make_opt, counters=COUNTERS, method="search_distill", device=device
            )
        except (OSError, ValueError) as exc:
            fail(PROG, f"--resume: {exc}")
        refuse_changed_settings(PROG, p, args.run, stored_settings(doc, settings), settings)
        init = str(doc.get("init"))
        if counters["epoch"] >= args.epochs:
            fail(PROG, f"--resume: {args.run} has run {counters['epoch']} epochs: raise --epochs")
        check_run_budget(PROG, args, counters["wall_clock_s"])
    else:
        try:
            net, _ = load_network(args.init)
        except (OSError, ValueError) as exc:
            fail(PROG, f"--init: {exc}")
        if not net.config.prior:
            fail(PROG, "--init must be a prior network (sichuan_env.train.policy.bc --prior)")
        if not args.keep_head:
            with torch.no_grad():
                net.policy.weight.zero_()
                net.policy.bias.zero_()
        net.to(device).train()
        opt = make_opt(net)
        counters = {"epoch": 0, "samples": 0, "wall_clock_s": 0.0, "best_val": float("inf")}
    train_rows = {k: v[~is_val] for k, v in rows.items()}
    anchor = anchor_rows(args.anchor_decisions, args.seed + 17, claims=args.anchor_claims)
    parts = [train_rows, anchor]
    if args.anchor_before_win:
        try:
            ref, _ = load_network(init)  # the network whose play before a win is kept
        except (OSError, ValueError) as exc:
            fail(PROG, f"--anchor-before-win: the init network {init}: {exc}")
        parts.append(before_win_rows(ref, args.anchor_before_win, args.seed + 29, args.floor))
    train_rows = {k: np.concatenate([q[k] for q in parts]) for k in train_rows}
    try:
        train = prepare(train_rows, net)
        val = prepare({k: v[is_val] for k, v in rows.items()}, net)
    except ValueError as exc:
        fail(PROG, f"--labels: {exc}")
    ref_choice = init_choices(init, val, device)  # for the held-out gain over --init's play
    log: MetricLog | None = None  # opened once an epoch is saved: a failed run writes nothing
    meta = {"rules": RuleConfig().to_dict(), "method": "search_distill", "init": init,
            "labels": _labels_key(args.labels), "val_mod": args.val_mod, "label_settings": label_meta["settings"],
            "label_rows": len(rows["hand"]), "objective": args.objective,
            "anchor_before_win": args.anchor_before_win,
            "temperature": args.temperature, "settings": settings,
            "command": command_line(PROG, argv), "commit": git_commit()}  # fmt: skip
    t0, base_clock = time.time(), counters["wall_clock_s"]
    from rich.progress import track

    first = True  # at least one epoch: the budgets are checked after each
    while counters["epoch"] < args.epochs and (first or budget_left(args, t0, base_clock)):
        first = False
        # the epoch's shuffle from (seed, epoch): a resumed run draws what an uninterrupted one does
        rng = step_rng(args.seed, counters["epoch"])
        order = rng.permutation(len(train["obs"]))
        regs, hinges = [], []
        steps = range(0, len(order), args.batch)
        for i in track(steps, description=f"distill epoch {counters['epoch'] + 1}"):
            batch = tensors(train, order[i : i + args.batch], device)
            with autocast(device, cast):
                if args.objective == "softmax":
                    loss, reg, hinge = OBJECTIVES["softmax"](
                        net, *batch, args.floor, args.hinge_coef, args.temperature
                    )
                else:
                    loss, reg, hinge = OBJECTIVES["regression"](
                        net, *batch, args.floor, args.hinge_coef
                    )
            opt.zero_grad()
            loss.backward()
            opt.step()
            regs.append(float(reg.detach()))
            hinges.append(float(hinge.detach()))
        counters["samples"] += len(order)
        counters["epoch"] += 1
        counters["wall_clock_s"] = base_clock + time.time() - t0
        net.eval()
        vl = val_loss(net, val, args.floor)
        table = margin_table(net, val, p_label, args.margins, ref_choice)
        net.train()
        if not all(map(math.isfinite, (*regs, *hinges, vl))):
            fail(PROG, f"epoch {counters['epoch']}: the loss is not finite (the run diverged; "
                       "try a smaller --lr): nothing of this epoch is saved")  # fmt: skip
        best = _best(table, "gain_per_hand")
        row = {"epoch": counters["epoch"], "train_reg": float(np.mean(regs)),
               "train_hinge": float(np.mean(hinges)), "val_reg": vl,
               "best_margin": best["margin"], "val_gain_per_hand": best["gain_per_hand"],
               "val_ci95": best["ci95"], "val_gain_over_init": best.get("gain_over_init"),
               "wall_clock_s": counters["wall_clock_s"]}  # fmt: skip
        meta.update(wall_clock_s=counters["wall_clock_s"], epoch=counters["epoch"])
        save_run_or_fail(PROG, args.run, net, opt, counters, meta)
        if vl < counters["best_val"]:
            counters["best_val"] = vl
            save_run_or_fail(PROG, args.run, net, opt, counters, meta, name="best")
        if log is None:
            log = MetricLog(args.run / "metrics.jsonl")
        log.write(counters["samples"], **row)
        print(json.dumps(row))
    if log is not None:
        log.close()
    return finish(args, val, p_label, meta, ref_choice)


def stored_settings(doc: dict, now: dict) -> dict:
    """The settings a run's checkpoint records (runs saved before them: the few it kept)."""
    stored = doc.get("settings")
    if isinstance(stored, dict):
        return stored
    old = {k: doc[k] for k in OLD_RUN_KEYS if k in doc}
    old["anchor_before_win"] = doc.get("anchor_before_win", 0)  # runs made before the setting
    if "labels" in doc:  # recorded joined by spaces
        old["labels"] = now["labels"] if " ".join(now["labels"]) == doc["labels"] else doc["labels"]
    return old


def _best(table: list[dict], key: str) -> dict:
    """The row of ``table`` with the largest ``key``; every value must be finite.

    Raises:
        SystemExit: a NaN or infinite estimate (``fail``: status 1): no margin is chosen from it.
    """
    bad = [r["margin"] for r in table if not math.isfinite(r[key])]
    if bad:
        fail(PROG, f"the {key} of margins {bad} is not finite: no margin can be chosen")
    return max(table, key=lambda r: r[key])


def finish(args: argparse.Namespace, val: dict, p_label: float, meta: dict,
           ref_choice: np.ndarray | None = None) -> dict:  # fmt: skip
    """Pick the margin for the best (lowest held-out error) checkpoint and save ``distilled.pt``.

    Each margin gets the held-out rollout estimate (``margin_table``) and,
    with ``--select-walls`` > 0, a duplicate match against three heuristics
    (``sichuan_env.train.common.evaluate_vs_heuristic``, seed ``--select-seed``), which
    then decides; otherwise the held-out estimate does.
    """
    from rich.console import Console
    from rich.table import Table
    from sichuan_env.agents.nn.torch_agent import save_checkpoint
    from sichuan_env.train.common import evaluate_vs_heuristic

    net, doc = load_network(args.run / "best.pt")
    net.to(resolve_device(args.device)).eval()
    table = margin_table(net, val, p_label, args.margins, ref_choice)
    key = "gain_per_hand"
    if args.select_walls > 0:
        key = "eval_adjusted" if args.select_estimator == "advantage" else "eval_points_per_hand"
        for r in table:
            with torch.no_grad():
                net.prior_gain.fill_(r["margin"])
            r.update(evaluate_vs_heuristic(net, args.select_walls, RuleConfig(), args.select_seed,
                                           args.select_estimator))  # fmt: skip
    best = _best(table, key)
    with torch.no_grad():
        net.prior_gain.fill_(best["margin"])
    meta = dict(meta, margin=best["margin"], selection=best, epoch=doc.get("epoch"),
                wall_clock_s=doc.get("wall_clock_s", meta.get("wall_clock_s", 0.0)))  # fmt: skip
    try:
        save_checkpoint(args.run / "distilled.pt", net, meta)
    except OSError as exc:
        fail(PROG, f"{write_failure(exc)}; {args.run} keeps its last good files")
    hands = len(np.unique(val["hand"]))
    t = Table(title=f"margins: held-out rollout estimate ({hands} hands) and duplicate match")
    for c in ("margin", "held-out gain/hand", "over --init", "deviations", "vs heuristic (dup.)"):
        t.add_column(c, justify="right")
    for r in table:
        dup = (f"{r['eval_points_per_hand']:+.3f} ± {r['eval_ci95']:.3f}"
               if "eval_ci95" in r else "-")  # fmt: skip
        if "eval_adjusted" in r:
            dup += f" (adj. {r['eval_adjusted']:+.3f} ± {r['eval_adjusted_ci95']:.3f})"
        over = (f"{r['gain_over_init']:+.3f} ± {r['gain_over_init_ci95']:.3f}"
                if "gain_over_init" in r else "-")  # fmt: skip
        t.add_row(f"{r['margin']:.2f}", f"{r['gain_per_hand']:+.3f} ± {r['ci95']:.3f}", over,
                  f"{100 * r['deviation_rate']:.1f}%", dup)  # fmt: skip
    Console().print(t)
    Console().print(f"chosen margin {best['margin']}: {args.run / 'distilled.pt'}")
    report = {"margins": table, "chosen": best, "checkpoint": str(args.run / "distilled.pt"),
              "select_walls": args.select_walls, "select_seed": args.select_seed,
              "select_estimator": args.select_estimator if args.select_walls > 0 else None,
              "commit": git_commit()}  # fmt: skip
    write_atomic(args.run / "report.json", json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
