r"""Refit the whole-table value ``V`` to the luck-adjusted estimate's own variance, resumably.

    python -m sichuan_env.train.table_value.data --out runs/var-data --hands 24576 \
        --block-walls 64 --seed 1234 --records --workers 2
    python -m sichuan_env.train.table_value.variance --data runs/var-data --out runs/var-hand \
        --objective hand --epochs 2
    python -m sichuan_env.train.table_value.variance --data runs/var-data --out runs/var-fit \
        --init runs/var-hand/table_value.pt --objective wall --epochs 2
    python -m sichuan_env.train.table_value.variance ... --resume      # after a stop

A ``V`` fitted to the points to come (``table_value.fit``) predicts well and still
removes little luck: the corrections are differences of ``V`` between neighbouring
states, which a high R² does not make right. This fits ``V``'s weights to the
variance the estimate is left with (``variance_loss``), back-propagated through
every counterfactual draw of the data folder's game records (``--records``):
``hand``, each hand's ``points - V(deal) - corrections`` squared; ``wall``, the
spread of each lineup position's per-wall mean over a wall's four rotations, the
very quantity of which ``sichuan-eval`` makes its interval. Every ``--val-every``-th
block is held out; each epoch's held-out figures go to ``metrics.jsonl`` (the
start as epoch 0), and the best epoch (by the objective's held-out figure, the
start included: a refit never ships weights worse than it began with) is written as
``table_value.pt`` + ``.json``, its ``deal_baseline`` recomputed. Each epoch's
order and dropout come from generators seeded by ``(--seed, epoch)``; a run resumed
after any epoch (``state.pt``) equals the undisturbed run, and a resume with a
setting that changes the result is refused, naming it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents import checkpoint
from sichuan_env.agents.device import add_device_args, cpu_state, from_args
from sichuan_env.agents.eval.table_value import KIND, TableModel
from sichuan_env.train.common import command_line, git_commit, setup
from sichuan_env.train.resume import refuse_changed_file
from sichuan_env.train.table_value.fit import _torch_bytes
from sichuan_env.train.table_value.variance_loss import (
    deal_baseline,
    hand_chunks,
    load_blocks,
    loss_of,
    score,
    wall_chunks,
)

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    add_overwrite,
    claim_output_or_exit,
    fail,
    float_arg,
    int_arg,
    run,
    write_atomic,
)

PROG = "python -m sichuan_env.train.table_value.variance"
OWNED = ("refit.json", "state.pt", "best-weights.pt", "metrics.jsonl", "table_value.pt",
         "table_value.json")  # fmt: skip
KEEP = ("data", "init", "objective", "lr", "chunk", "lineup_dropout", "val_every", "max_blocks",
        "seed")  # fmt: skip
"""Settings that decide the result: a resume with any other value is refused."""
KEY = {"hand": "hand", "wall": "wall_adjusted"}
"""The held-out figure each objective keeps the best epoch by."""


def _load_state(path: Path, model: TableModel, opt: torch.optim.Optimizer) -> dict:
    try:
        st = torch.load(path, map_location="cpu", weights_only=True)
        model.net.load_state_dict(st["net"], strict=True)
        opt.load_state_dict(st["opt"])
        counters = st["counters"]
        int(counters["epoch"]), float(counters["best"])
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        raise ValueError(
            f"cannot resume: {path} is damaged ({' '.join(str(exc).split())[:160]})"
        ) from None
    if not all(torch.isfinite(t).all() for t in model.net.state_dict().values()):
        raise ValueError(f"cannot resume: {path} holds non-finite weights")
    return counters


def refit(args: argparse.Namespace, model: TableModel, train: list, val: list) -> list[dict]:
    """Train (resuming from ``state.pt``); leaves the best weights in ``model``; the history."""
    rules, key = model.rules, KEY[args.objective]
    opt = torch.optim.Adam(model.net.parameters(), lr=args.lr)
    state_path, best_path = args.out / "state.pt", args.out / "best-weights.pt"
    log = args.out / "metrics.jsonl"
    if state_path.exists():
        counters = _load_state(state_path, model, opt)
        model.net.to(model.device)
        opt.load_state_dict(opt.state_dict())  # the moments follow the parameters' device
        history = [json.loads(x) for x in log.read_text().splitlines()][: counters["epoch"] + 1]
    else:
        model.net.eval()
        start = score(model, val, rules)
        history = [{"epoch": 0, **start, "seconds": 0.0}]
        counters = {"epoch": 0, "best": start[key], "best_epoch": 0}
        write_atomic(best_path, _torch_bytes(cpu_state(model.net.state_dict())))
        print(f"start: held-out {key} {start[key]:.4f}, wall ratio {start['wall_ratio']:.3f}")
    columns = (TextColumn(f"variance refit ({args.objective}), epoch {{task.fields[epoch]}}"),
               BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())  # fmt: skip
    for epoch in range(counters["epoch"], args.epochs):
        rng = np.random.default_rng([args.seed, epoch])
        gen = torch.Generator().manual_seed(args.seed * 100003 + epoch)
        chunks = (list(wall_chunks(train, max(args.chunk // 4, 1), rng)) if args.objective == "wall"
                  else list(hand_chunks(train, args.chunk, rng)))  # fmt: skip
        model.net.train()
        t0 = time.time()
        with Progress(*columns, disable=not args.progress) as bar:
            task = bar.add_task("chunks", total=len(chunks), epoch=epoch + 1)
            for chunk in chunks:
                loss = loss_of(model, args.objective, chunk, rules, args.lineup_dropout, gen)
                if not torch.isfinite(loss):
                    raise ValueError(f"epoch {epoch + 1}: the loss is not finite (the refit "
                                     "diverged; try a smaller --lr); nothing of it is saved")  # fmt: skip
                opt.zero_grad()
                loss.backward()
                opt.step()
                bar.advance(task)
        model.net.eval()
        entry = {
            "epoch": epoch + 1,
            **score(model, val, rules),
            "seconds": round(time.time() - t0, 1),
        }
        if not np.isfinite(entry[key]):
            raise ValueError(f"epoch {epoch + 1}: the held-out {key} is not finite (the refit "
                             "diverged; try a smaller --lr); nothing of it is saved")  # fmt: skip
        history.append(entry)
        print(f"epoch {epoch + 1}/{args.epochs}: held-out {key} {entry[key]:.4f}, wall ratio "
              f"{entry['wall_ratio']:.3f} ({entry['seconds']:.0f} s)", flush=True)  # fmt: skip
        if entry[key] < counters["best"]:
            counters.update(best=entry[key], best_epoch=epoch + 1)
            write_atomic(best_path, _torch_bytes(cpu_state(model.net.state_dict())))
        counters["epoch"] = epoch + 1
        write_atomic(log, "".join(json.dumps(h) + "\n" for h in history))
        state = {"net": cpu_state(model.net.state_dict()), "opt": cpu_state(opt.state_dict()),
                 "counters": counters}  # fmt: skip
        write_atomic(state_path, _torch_bytes(state))
    write_atomic(log, "".join(json.dumps(h) + "\n" for h in history))
    best = torch.load(best_path, map_location=model.device, weights_only=True)
    model.net.load_state_dict(best)
    model.net.eval()
    return history


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True,
                   help="a table_value.data folder made with --records")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, help="the run folder")
    p.add_argument("--init", default="table_value",
                   help="the value model to start from (a name or a .pt; default the shipped)")  # fmt: skip
    p.add_argument("--objective", choices=sorted(KEY), default="wall",
                   help="hand: each hand's residual; wall: the spread of per-wall means")  # fmt: skip
    p.add_argument("--epochs", type=int_arg(1, 1000), default=2)
    p.add_argument("--lr", type=float_arg(0, 1), default=2e-4)
    p.add_argument("--chunk", type=int_arg(4, 1 << 16), default=64,
                   help="hands per step (wall: whole walls, chunk / 4 of them)")  # fmt: skip
    p.add_argument("--lineup-dropout", type=float_arg(0, 1), default=0.3,
                   help="chance a seat's policy is replaced by 'unknown' in training")  # fmt: skip
    p.add_argument("--val-every", type=int_arg(2, 1000), default=8,
                   help="hold out every N-th block")  # fmt: skip
    p.add_argument("--max-blocks", type=int_arg(2, 10**6), default=10**6,
                   help="use the first N blocks of records")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=2)
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    add_device_args(p, amp=False)
    add_overwrite(p, "run")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = build_parser()
    args = p.parse_args(argv)
    resumed = claim_output_or_exit(p, "--out", args.out, OWNED, resume=args.resume,
                                   overwrite=args.overwrite, what="variance refit")  # fmt: skip
    conf = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k in KEEP}
    conf_path = args.out / "refit.json"
    if resumed and conf_path.exists():
        refuse_changed_file(PROG, p, args.out, conf_path, conf)
    start = time.time()
    setup(args.threads, args.seed)
    args.device, _ = from_args(args)
    try:
        model = TableModel.load(args.init, str(args.device))
        blocks = load_blocks(args.data)[: args.max_blocks]
        meta = json.loads((args.data / "data.json").read_text("utf-8"))
        if RuleConfig.from_dict(meta["rules"]) != model.rules:
            raise ValueError(f"{args.data} holds hands of other rules than {args.init}'s")
    except (ValueError, OSError, KeyError, TypeError) as exc:
        fail(PROG, exc)
    val = [b for b in blocks if b[2] % args.val_every == 0]
    train = [b for b in blocks if b[2] % args.val_every != 0]
    if not val or not train:
        fail(PROG, f"{len(blocks)} blocks leave no training or no held-out block at "
                   f"--val-every {args.val_every}")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(conf_path, json.dumps(conf, indent=1) + "\n")
    print(f"{sum(len(b[0]) for b in train):,} training hands, "
          f"{sum(len(b[0]) for b in val):,} held out", flush=True)  # fmt: skip
    try:
        history = refit(args, model, train, val)
    except ValueError as exc:
        fail(PROG, exc)
    best = min(history, key=lambda h: h[KEY[args.objective]])
    doc = {k: v for k, v in model.doc.items() if k not in ("sha256", "created")}
    doc.update({
        "command": command_line("sichuan_env.train.table_value.variance", argv),
        "commit": git_commit(), "wall_clock_s": round(time.time() - start, 1),
        "deal_baseline": deal_baseline(model, train, model.rules),
        "refit": {"init": str(args.init), "init_sha256": model.doc.get("sha256"),
                  "objective": args.objective, "best_epoch": best["epoch"], "held_out": best,
                  "history": history, "data_command": meta.get("command", "?")},
    })  # fmt: skip
    path = checkpoint.save(args.out / "table_value.pt", KIND, model.net.cpu(), doc)
    print(f"best epoch {best['epoch']}: held-out wall ratio {best['wall_ratio']:.3f} "
          f"(start {history[0]['wall_ratio']:.3f}); wrote {path}")  # fmt: skip
    return 0


def cli() -> int:
    """Console entry point."""
    return run(main, PROG)


if __name__ == "__main__":
    raise SystemExit(cli())
