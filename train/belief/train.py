"""Train a belief model: opponents' tenpai, waits, held tiles and deal-in tiles from observation v2.

    python -m sichuan_env.train.belief.train --data $DATA/heur-train --run runs/belief --minutes 40
    python -m sichuan_env.train.belief.train --arch seq --data $DATA/heur-train11
        --run runs/belief-seq --seq-hidden 128 --init belief --minutes 30

Reads one or more dataset folders (``sichuan_env.train.data.make_dataset``, observation v2),
one Parquet shard at a time (its packed observations stay packed in memory
and are unpacked per mini-batch), in a seeded order that changes each epoch.
Hands whose ``game_id % --val-every == 0`` (per folder) are held out: the
first ``--val-rows`` of them form the validation set, never trained on. The
heads, their labels and the rows each is trained and scored on come from the
head table (``sichuan_env.agents.belief.heads``): the loss is the sum over
the network's heads of the masked mean binary cross-entropy (tenpai and held
tiles for opponents not yet won, waits for tenpai opponents, deal-in at
own-turn decisions, every tile; the validation AUC, like the report, scores
the legal discards).

``--arch mlp`` trains the planes-only network on shuffled rows. ``--arch
seq`` adds a GRU over the acting seat's public event tokens
(``sichuan_env.encoding.events``, stored per hand in the dataset's
``games.parquet``) and batches whole (hand, seat) sequences of about
``--batch`` rows (``sichuan_env.train.belief.batches``); ``--init
CHECKPOINT`` starts from a belief checkpoint's weights (its architecture; the
new projection starts at zero, so the network first predicts exactly as that
checkpoint); ``--seq-hidden 0`` trains the planes-only network through the
same batches (the control); ``--seq-lr-mult`` scales the learning rate of the
sequence branch.

Every ``--eval-every`` steps the run logs the validation losses and AUCs
to ``run/metrics.jsonl``, saves ``run/last.pt`` (+ JSON) and ``run/state.pt``
(optimizer, counters) and, when the validation loss improved, ``run/best.pt``.
``--resume`` continues from there, at the same mini-batch of the same shard,
and gives the run that was never stopped: the shard order, the batches and
each step's dropout come from ``--seed`` and the position in the run, and a new
network's weights from ``--seed`` alone. A resume with another setting that
changes the result is refused, naming it (``--epochs`` too: it sets the
learning-rate schedule); ``--threads``, ``--device``, ``--amp`` and the budgets may
change, and the network options (``--init``, ``--hidden``, ``--layers``, ...) come
from the run. The run stops after ``--epochs`` epochs, ``--minutes`` minutes of
this call or ``--run-minutes`` of the whole run; the learning rate follows a
cosine from ``--lr`` to a tenth of it over the planned epochs. ``--ship PATH`` also writes the best network as float16
(e.g. ``agents/checkpoints/belief.pt``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.belief.model import (
    BeliefConfig,
    BeliefModel,
    BeliefNet,
    load_belief_network,
    save_belief,
)
from sichuan_env.agents.device import add_device_args, autocast, cpu_state, from_args
from sichuan_env.train.belief.batches import (
    MAX_FOLDERS,
    batch_indices,
    concat_rows,
    forward,
    load_shard,
    select_rows,
    take,
)
from sichuan_env.train.belief.losses import evaluate, losses
from sichuan_env.train.common import (
    BEST,
    RUN_FILES,
    MetricLog,
    add_budget_args,
    all_or_nothing,
    check_counters,
    check_optimizer,
    check_run_budget,
    check_state_matches,
    derived_seed,
    git_commit,
    last_sha256,
    load_optimizer,
    read_state,
    refuse_changed_settings,
    run_settings,
    say_written,
    seeded_build,
    setup,
    write_failure,
)
from sichuan_env.train.data.dataset import EventTable, check_compatible, read_meta, shards

from sichuan_env._cli import (
    MAX_SEED,
    PlainHelp,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    path_problem,
    run,
)
from sichuan_env._files import write_atomic
from sichuan_env._progress import progress_bar

PROG = "sichuan_env.train.belief.train"
COUNTERS = {"step": int, "epoch": int, "shard": int, "batch": int, "best": BEST, "wall": float}
"""The run's counters (``state.pt``) and their types."""
START_ONLY = ("init", "hidden", "layers", "tile_channels", "dropout", "tenpai_pool", "seq_hidden",
              "seq_embed")  # fmt: skip
"""Options that shape a new run's network only; a resumed run takes it from its checkpoint."""
NOT_RESULTS = ("mixed_rules", "ship")
"""Options that do not change what the run computes (a check, an extra copy)."""
SEQ_PARAMS = ("embed.", "gru.", "seq_proj.", "seq_out.")
"""Name prefixes of the sequence branch's parameters (learning rate x ``--seq-lr-mult``)."""


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser."""
    p = argparse.ArgumentParser(prog="python -m sichuan_env.train.belief.train", description=__doc__,
                                formatter_class=PlainHelp)  # fmt: skip
    p.add_argument("--data", type=Path, nargs="+", required=True, help="dataset folder(s), v2")
    p.add_argument("--run", type=Path, default=Path("runs/belief"), help="run directory")
    p.add_argument("--epochs", type=int_arg(1, 10**6), default=3)
    add_budget_args(p, 40.0, unit="step")
    p.add_argument("--batch", type=int_arg(1, 1 << 20), default=512)
    p.add_argument("--lr", type=float_arg(0, 1), default=1e-3)
    p.add_argument("--weight-decay", type=float_arg(0, 10, include_lo=True), default=1e-5)
    p.add_argument("--hidden", type=int_arg(8, 4096), default=BeliefConfig.hidden)
    p.add_argument("--layers", type=int_arg(1, 8), default=BeliefConfig.layers)
    p.add_argument("--tile-channels", type=int_arg(4, 512), default=BeliefConfig.tile_channels)
    p.add_argument("--dropout", type=float_arg(0, 0.99, include_lo=True), default=BeliefConfig.dropout)  # fmt: skip
    p.add_argument("--tenpai-pool", action="store_true", help="tenpai head reads pooled tiles")
    p.add_argument("--arch", choices=("mlp", "seq"), default="mlp",
                   help="seq: also a GRU over the event tokens, sequence batches")  # fmt: skip
    p.add_argument("--seq-hidden", type=int_arg(0, 1024), default=128, help="--arch seq: GRU width (0: none)")  # fmt: skip
    p.add_argument("--seq-embed", type=int_arg(4, 512), default=BeliefConfig.seq_embed)
    p.add_argument("--seq-lr-mult", type=float_arg(0, 100), default=1.0, help="--arch seq: GRU branch's lr x")  # fmt: skip
    p.add_argument("--init", help="--arch seq: start from this belief checkpoint's weights")
    p.add_argument("--val-every", type=int_arg(2, 10**6), default=20, help="hold out game_id %% N == 0")  # fmt: skip
    p.add_argument("--val-rows", type=int_arg(1, 10**7), default=20000)
    p.add_argument("--eval-every", type=int_arg(1, 10**9), default=500, help="steps between evaluations")  # fmt: skip
    p.add_argument("--threads", type=int_arg(1, 1024), default=2, help="torch threads")
    add_device_args(p)
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    p.add_argument("--mixed-rules", action="store_true",
                   help="train on --data folders played under different rules")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="continue run/last.pt")
    add_overwrite(p, "run")
    p.add_argument("--ship", type=Path, help="also write the best network here, float16")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def save_progress(
    run_dir: Path,
    net: BeliefNet,
    opt: torch.optim.Optimizer,
    counters: dict[str, Any],
    meta: dict[str, Any],
    metrics: dict[str, Any],
    ship: Path | None,
) -> None:
    """Save a training run's checkpoint files.

    ``run_dir/last.pt`` always; ``best.pt`` (and the float16 ``ship`` copy) on a
    new best validation loss; the optimizer and counters (``state.pt``) for ``--resume``.
    """
    info = {**meta, "wall_clock_s": round(counters["wall"], 1), "steps": counters["step"],
            "metrics": metrics}  # fmt: skip
    check_optimizer(opt, f"not saving {run_dir}")  # the weights: save_belief refuses NaN ones
    names = ("best.pt", "best.json", "last.pt", "last.json", "state.pt")
    files = [run_dir / n for n in names]
    if ship:
        files += [ship, ship.with_suffix(".json")]
    best = counters["best"]
    try:
        with all_or_nothing(files):  # a failed write leaves every file as it was
            if metrics["val_loss"] < counters["best"]:
                counters["best"] = metrics["val_loss"]
                save_belief(run_dir / "best.pt", net, info)
                if ship:
                    save_belief(ship, net, info, dtype="float16")
            save_belief(run_dir / "last.pt", net, info)
            state = {"optimizer": cpu_state(opt.state_dict()), "counters": counters,  # on a CPU
                     "last_sha256": last_sha256(run_dir)}  # which last.pt it goes with  # fmt: skip
            write_atomic(run_dir / "state.pt", lambda f: torch.save(state, f))
    except BaseException:
        counters["best"] = best
        raise


def new_net(args: argparse.Namespace) -> BeliefNet:
    """The network a new run starts from (``--arch``, the sizes, ``--init``).

    Raises:
        ValueError: a bad architecture, or an ``--init`` checkpoint that does not fit.
    """
    seq = {"seq_hidden": args.seq_hidden if args.arch == "seq" else 0, "seq_embed": args.seq_embed}
    if args.init is None:
        config = BeliefConfig(obs_version=2, hidden=args.hidden, layers=args.layers,
                              tile_channels=args.tile_channels, dropout=args.dropout,
                              tenpai_pool=args.tenpai_pool, **seq)  # fmt: skip
        return seeded_build(args.seed, lambda: BeliefNet(config))  # from --seed alone
    src = BeliefModel.load(args.init).net
    config = BeliefConfig(**{**src.config.to_dict(), "dropout": args.dropout, **seq})
    net = seeded_build(args.seed, lambda: BeliefNet(config))
    missing, extra = net.load_state_dict(src.state_dict(), strict=False)
    if extra or any(not k.startswith(SEQ_PARAMS) for k in missing):
        raise ValueError(f"--init {args.init}: tensors missing {missing[:5]}, unexpected {extra}")
    return net


def make_optimizer(net: BeliefNet, args: argparse.Namespace) -> torch.optim.Optimizer:
    """AdamW; the sequence branch's group runs at ``--seq-lr-mult`` times the learning rate."""
    new = [p for n, p in net.named_parameters() if n.startswith(SEQ_PARAMS)]
    old = [p for n, p in net.named_parameters() if not n.startswith(SEQ_PARAMS)]
    groups = [{"params": old, "mult": 1.0}]
    if new:
        groups.append({"params": new, "mult": args.seq_lr_mult})
    return torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay)


def _start(args: argparse.Namespace, p: argparse.ArgumentParser, settings: dict) -> tuple:
    """``(net, optimizer, counters)``: resumed from ``--run`` (its ``settings`` checked) or new."""
    run_dir: Path = args.run
    claim_output_or_exit(p, "--run", run_dir, RUN_FILES, resume=args.resume,
                         overwrite=args.overwrite, what="run")  # fmt: skip
    try:
        if args.resume:
            if not (run_dir / "last.pt").is_file():
                raise ValueError(f"{run_dir} holds no last.pt (not a run, or none saved yet)")
            net, doc = load_belief_network(run_dir / "last.pt")
            state = read_state(run_dir / "state.pt")
            check_state_matches(state, doc, run_dir)
            what = f"cannot resume from {run_dir / 'state.pt'}"
            counters = check_counters(state["counters"], COUNTERS, what)
            net.to(args.device)  # before the optimizer: its state follows
            opt = make_optimizer(net, args)
            load_optimizer(opt, state["optimizer"], what)
            stored = doc.get("settings")
            if not isinstance(stored, dict):  # runs saved before the settings were recorded
                stored = {k: doc[k] for k in ("data", "seed") if k in doc}
            refuse_changed_settings(PROG, p, run_dir, stored, settings)
            check_run_budget(PROG, args, counters["wall"])
        else:
            net = new_net(args).to(args.device)
            opt = make_optimizer(net, args)
            counters = {"step": 0, "epoch": 0, "shard": 0, "batch": 0, "best": math.inf,
                        "wall": 0.0}  # fmt: skip
    except (ValueError, OSError) as exc:
        fail(PROG, f"cannot {'resume' if args.resume else 'start'} the run in {run_dir}: {exc}")
    return net.train(), opt, counters


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the last evaluation."""
    p = build_parser()
    args = p.parse_args(argv)
    problem = dir_problem(args.run) or (args.ship and path_problem(args.ship))
    if problem:
        p.error(str(problem))
    if args.init is not None and args.arch != "seq":
        p.error("--init needs --arch seq")
    if len(args.data) > MAX_FOLDERS:
        p.error(f"at most {MAX_FOLDERS} --data folders")
    try:
        metas = [read_meta(d) for d in args.data]
        check_compatible(args.data, metas, mixed_rules=args.mixed_rules)
        events = [EventTable(d) for d in args.data] if args.arch == "seq" else None
    except ValueError as exc:
        fail(PROG, exc)
    if any(m["obs_version"] != 2 for m in metas):
        fail(PROG, "every --data folder must hold observation v2 data")
    setup(args.threads, args.seed)
    rows = int(metas[0]["obs_shape"][0])
    files = [(s, i) for i, d in enumerate(args.data) for s in shards(d)]
    if not files:
        fail(PROG, "the --data folders hold no decision shards")
    total_rows = sum(int(m["decisions"]) for m in metas) * (1 - 1 / args.val_every)
    planned = max(1, int(args.epochs * total_rows / args.batch))
    settings = run_settings(args, skip=(*START_ONLY, *NOT_RESULTS))
    settings["epochs"] = args.epochs  # it sets the learning-rate schedule: not a mere limit here
    net, opt, counters = _start(args, p, settings)
    device, cast = from_args(args)
    heads = net.config.head_specs
    run_dir: Path = args.run

    def load(path: Path, folder: int) -> dict[str, np.ndarray]:
        try:
            return load_shard(path, heads, None if events is None else events[folder], folder)
        except ValueError as exc:
            fail(PROG, exc)

    val_parts, n_val = [], 0
    for path, folder in files:
        if n_val >= args.val_rows:
            break
        d = load(path, folder)
        val_parts.append(select_rows(d, d["game_id"] % args.val_every == 0))
        n_val += len(val_parts[-1]["game_id"])
    val = select_rows(concat_rows(val_parts), slice(0, args.val_rows))
    if not len(val["game_id"]):
        fail(PROG, f"no validation rows: no hand of the --data folders has game_id % {args.val_every} == 0")  # fmt: skip
    log: MetricLog | None = None  # opened at the first checkpoint: a failed run writes nothing
    meta = {
        "rules": metas[0]["rules"],
        "command": "python -m sichuan_env.train.belief.train "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": git_commit(),
        "data": [str(d) for d in args.data],
        "seed": args.seed,
        "settings": settings,
    }
    t0 = time.perf_counter() - counters["wall"]
    start_step = counters["step"]
    deadline = time.perf_counter() + 60 * args.minutes
    if args.run_minutes is not None:  # the run's budget: its training time so far counts
        deadline = min(deadline, time.perf_counter() + 60 * args.run_minutes - counters["wall"])
    last: dict[str, Any] = {}

    def checkpoint() -> None:
        nonlocal last, log
        last = evaluate(net, val, rows, events)
        counters["wall"] = time.perf_counter() - t0
        last.update(epoch=counters["epoch"], lr=opt.param_groups[0]["lr"], wall_s=counters["wall"])
        if not math.isfinite(last["val_loss"]):
            fail(PROG, f"step {counters['step']}: the validation loss is {last['val_loss']} (the "
                       f"run diverged; try a smaller --lr): {run_dir} keeps its last good files")  # fmt: skip
        try:
            save_progress(run_dir, net, opt, counters, meta, last, args.ship)
        except ValueError as exc:
            fail(PROG, f"{exc}; {run_dir} keeps its last good files")
        except OSError as exc:
            fail(PROG, f"{write_failure(exc)}; {run_dir} keeps its last good files")
        if log is None:
            log = MetricLog(run_dir / "metrics.jsonl")
        log.write(counters["step"], **last)

    columns = (TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[info]}"))  # fmt: skip
    stop = False
    with progress_bar(*columns, disable=args.quiet) as bar:
        task = bar.add_task("train", total=planned, completed=counters["step"], info="")
        while counters["epoch"] < args.epochs and not stop:
            order = np.random.default_rng([args.seed, counters["epoch"]]).permutation(len(files))
            while counters["shard"] < len(files) and not stop:
                path, folder = files[order[counters["shard"]]]
                d = load(path, folder)
                d = select_rows(d, d["game_id"] % args.val_every != 0)
                rng = np.random.default_rng([args.seed, counters["epoch"], counters["shard"]])
                batches = batch_indices(d, args.batch, rng, sequences=events is not None)
                while counters["batch"] < len(batches):
                    b = take(d, batches[counters["batch"]], rows, heads, events)
                    b = {k: v.to(device) if torch.is_tensor(v) else v for k, v in b.items()}
                    # the step's randomness (dropout) from (seed, step): as if never stopped
                    torch.manual_seed(derived_seed(args.seed, counters["step"], 0xD0))
                    frac = min(1.0, counters["step"] / planned)
                    for g in opt.param_groups:
                        g["lr"] = (
                            g.get("mult", 1.0)
                            * args.lr
                            * (0.1 + 0.45 * (1 + math.cos(math.pi * frac)))
                        )
                    with autocast(device, cast):  # the losses run in float32 (autocast's list)
                        loss = torch.stack(list(losses(forward(net, b), b, heads).values())).sum()
                    if not torch.isfinite(loss):
                        fail(PROG, f"step {counters['step'] + 1}: the loss is {loss.item()} (the run "
                                   "diverged; try a smaller --lr): nothing of it is saved")  # fmt: skip
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    counters["step"] += 1
                    counters["batch"] += 1
                    bar.update(task, advance=1, info=f"loss {loss.item():.4f}")
                    if counters["step"] % args.eval_every == 0:
                        checkpoint()
                        bar.update(task, info=f"val {last['val_loss']:.4f}")
                    if time.perf_counter() > deadline:
                        stop = True
                        break
                if not stop:
                    counters["shard"] += 1
                    counters["batch"] = 0
            if not stop:
                counters["epoch"] += 1
                counters["shard"] = 0
    if counters["step"] == start_step:
        fail(PROG, f"no training step ran: the training rows of every shard are fewer than "
                   f"--batch {args.batch}, or the run had done its --epochs already; nothing written")  # fmt: skip
    checkpoint()
    if log is not None:
        log.close()
    say_written(run_dir)
    if args.ship:
        print(f"wrote {args.ship}")
    return last


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
