"""Fit the whole-table value network ``V`` on self-play shards, resumably.

    python -m sichuan_env.train.table_value.fit --data runs/table --out runs/table-fit
    python -m sichuan_env.train.table_value.fit --data runs/table --out runs/table-fit --resume
    cp runs/table-fit/table_value.{pt,json} agents/checkpoints/    # ship it

Mean squared error on the points each seat still wins, over the states of
``sichuan_env.train.table_value.data``; every ``--val-every``-th shard is held out.
Each seat's policy id is replaced by ``unknown`` with probability
``--lineup-dropout`` (so the network also knows tables whose policies it was not
told). Each epoch's shuffle and dropout come from a generator seeded by
``(--seed, epoch)`` and the network's initial weights from one seeded by ``--seed``,
so a run resumed after any epoch (``state.pt``: weights, optimizer, best so far)
equals the undisturbed run; a resume with a setting that changes the result is
refused, naming it. The best epoch on the held-out shards is written as
``table_value.pt`` + ``.json`` with its held-out R² by phase of the hand and
``deal_baseline`` (the mean value of the deals, with every policy unknown, by seat
relative to the dealer).
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents import checkpoint
from sichuan_env.agents.device import add_device_args, cpu_state, from_args
from sichuan_env.agents.eval.luck_features import F_DEALER, F_WON
from sichuan_env.agents.eval.table_net import TableValueConfig, TableValueNet
from sichuan_env.agents.eval.table_rows import UNKNOWN, VOCAB
from sichuan_env.agents.eval.table_value import KIND
from sichuan_env.train.common import command_line, git_commit, setup
from sichuan_env.train.resume import refuse_changed_file
from sichuan_env.train.table_value.data import load_shard

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

PROG = "python -m sichuan_env.train.table_value.fit"
OWNED = (
    "fit.json",
    "state.pt",
    "best-weights.pt",
    "metrics.jsonl",
    "table_value.pt",
    "table_value.json",
)
KEEP = ("data", "batch", "lr", "seat", "head", "embed", "planes", "lineup_dropout",
        "val_every", "max_shards", "seed")  # fmt: skip
"""Settings that decide the result: a resume with any other value is refused."""
PHASES = ("deal", "wall 55-37", "wall 36-19", "wall 18-0", "after a win")


def load_data(folder: Path, max_shards: int, val_every: int) -> tuple[dict, dict, dict]:
    """``(train rows, held-out rows, data.json)`` of a data folder (every shard checked)."""
    try:
        meta = json.loads((folder / "data.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder} is not a table-value data folder ({exc})") from None
    paths = sorted((folder / "shards").glob("shard-*.npz"))[:max_shards]
    if len(paths) < 2:
        raise ValueError(f"{folder / 'shards'} holds {len(paths)} shards; the fit needs 2 or more")
    parts: dict[bool, list[dict]] = {True: [], False: []}
    for i, p in enumerate(paths):
        parts[i % val_every == 0].append(load_shard(p))

    def join(ds: list[dict]) -> dict:
        return {k: np.concatenate([d[k] for d in ds]) for k in ds[0]}

    return join(parts[False]), join(parts[True]), meta


def phase_of(rows: dict[str, np.ndarray]) -> np.ndarray:
    """The ``PHASES`` index of each row."""
    left = rows["wallc"].sum(axis=1)
    won = (rows["feats"][:, :, F_WON] > 0).any(axis=1)
    out = np.where(left >= 37, 1, np.where(left >= 19, 2, 3))
    out = np.where(won, 4, out)
    return np.where(rows["deal"], 0, out)


def as_tensors(rows: dict, device: torch.device) -> dict[str, torch.Tensor]:
    """The row arrays as tensors on ``device`` (float16 features widened on the way)."""
    return {k: torch.from_numpy(v).to(device) for k, v in rows.items() if k != "hand"}


def batch_of(rows: dict, idx: torch.Tensor, drop: torch.Tensor | None = None) -> dict:
    """Rows ``idx`` of ``as_tensors`` rows; ``drop`` (bool ``[len(idx), 4]``) sets seats unknown."""
    out = {k: v[idx] for k, v in rows.items()}
    if drop is not None:
        out["lineup"] = torch.where(drop, UNKNOWN, out["lineup"].long())
    return out


@torch.no_grad()
def predict(net: TableValueNet, rows: dict, unknown: bool = False) -> np.ndarray:
    """Values ``float64[N, 4]`` of ``rows`` (numpy arrays; every policy unknown when asked)."""
    device = next(net.parameters()).device
    out = []
    for i in range(0, len(rows["y"]), 65536):
        b = as_tensors({k: v[i : i + 65536] for k, v in rows.items()}, device)
        if unknown:
            b["lineup"] = torch.zeros_like(b["lineup"])
        out.append(net(b).double().cpu().numpy())
    return np.concatenate(out)


def r2_by_phase(pred: np.ndarray, rows: dict) -> dict[str, Any]:
    """Held-out R² overall and per ``PHASES`` entry (1 - MSE / mean square of the target)."""
    y = rows["y"].astype(np.float64)
    phase = phase_of(rows)
    out: dict[str, Any] = {}
    for name, sel in [("all", np.ones(len(y), bool))] + [
        (p, phase == i) for i, p in enumerate(PHASES)
    ]:
        if sel.any():
            mse = float(((pred[sel] - y[sel]) ** 2).mean())
            out[name] = {
                "r2": 1 - mse / float((y[sel] ** 2).mean()),
                "mse": mse,
                "rows": int(sel.sum()),
            }
    return out


def deal_baseline(net: TableValueNet, rows: dict) -> list[float]:
    """Mean value of the deals (every policy unknown) by seat relative to the dealer."""
    deals = {k: v[rows["deal"]] for k, v in rows.items()}
    v = predict(net, deals, unknown=True)
    dealer = deals["feats"][:, :, F_DEALER].astype(np.float32).argmax(axis=1)
    rel = (np.arange(4)[None, :] - dealer[:, None]) % 4
    out = np.array([v[rel == r].mean() for r in range(4)])
    return [float(x) for x in out - out.mean()]


def _torch_bytes(obj: object) -> bytes:
    """``obj`` as ``torch.save`` writes it (then written with ``write_atomic``)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _save_state(path: Path, net: TableValueNet, opt: torch.optim.Optimizer, counters: dict) -> None:
    state = {"net": cpu_state(net.state_dict()), "opt": cpu_state(opt.state_dict()),
             "counters": counters}  # fmt: skip
    write_atomic(path, _torch_bytes(state))


def _load_state(path: Path, net: TableValueNet, opt: torch.optim.Optimizer) -> dict:
    try:
        st = torch.load(path, map_location="cpu", weights_only=True)
        net.load_state_dict(st["net"], strict=True)
        opt.load_state_dict(st["opt"])
        counters = st["counters"]
        int(counters["epoch"]), float(counters["best"])
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        raise ValueError(
            f"cannot resume: {path} is damaged ({' '.join(str(exc).split())[:160]})"
        ) from None
    if not all(torch.isfinite(t).all() for t in net.state_dict().values()):
        raise ValueError(f"cannot resume: {path} holds non-finite weights")
    return counters


def fit(args: argparse.Namespace, train: dict, val: dict) -> tuple[TableValueNet, list[dict]]:
    """Train (resuming from ``state.pt`` when there is one); the best network and the history."""
    torch.manual_seed(args.seed)  # the initial weights: the same in every run of this seed
    net = TableValueNet(TableValueConfig(args.seat, args.head, args.embed, planes=int(args.planes)))
    state_path = args.out / "state.pt"
    counters = {"epoch": 0, "best": float("inf"), "best_epoch": 0}
    best_path = args.out / "best-weights.pt"
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    if state_path.exists():
        counters = _load_state(state_path, net, opt)
    net.to(args.device)
    opt.load_state_dict(opt.state_dict())  # moves the moments to the parameters' device
    rows = as_tensors(train, args.device)
    n = len(train["y"])
    log = args.out / "metrics.jsonl"
    history = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    history = history[: counters["epoch"]]
    columns = (TextColumn("table-value fit, epoch {task.fields[epoch]}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())  # fmt: skip
    for epoch in range(counters["epoch"], args.epochs):
        gen = torch.Generator().manual_seed(args.seed * 100003 + epoch)
        perm = torch.randperm(n, generator=gen).numpy()
        net.train()
        t0 = time.time()
        with Progress(*columns, disable=not args.progress) as bar:
            task = bar.add_task("batches", total=-(-n // args.batch), epoch=epoch + 1)
            for i in range(0, n, args.batch):
                idx = torch.from_numpy(np.sort(perm[i : i + args.batch])).to(args.device)
                drop = torch.rand((len(idx), 4), generator=gen) < args.lineup_dropout
                b = batch_of(rows, idx, drop.to(args.device))
                loss = ((net(b) - b["y"]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                bar.advance(task)
        net.eval()
        r2 = r2_by_phase(predict(net, val), val)
        entry = {"epoch": epoch + 1, "val_mse": r2["all"]["mse"], "val_r2": r2["all"]["r2"],
                 "seconds": round(time.time() - t0, 1)}  # fmt: skip
        if not np.isfinite(entry["val_mse"]):
            raise ValueError(f"epoch {epoch + 1}: the held-out error is not finite (the fit "
                             "diverged; try a smaller --lr); nothing of this epoch is saved")  # fmt: skip
        history.append(entry)
        print(f"epoch {epoch + 1}/{args.epochs}: held-out R2 {entry['val_r2']:.4f} "
              f"(MSE {entry['val_mse']:.3f}, {entry['seconds']:.0f} s)", flush=True)  # fmt: skip
        if entry["val_mse"] < counters["best"]:
            counters.update(best=entry["val_mse"], best_epoch=epoch + 1)
            write_atomic(best_path, _torch_bytes(cpu_state(net.state_dict())))
        counters["epoch"] = epoch + 1
        write_atomic(log, "".join(json.dumps(h) + "\n" for h in history))
        _save_state(state_path, net, opt, counters)
    net.load_state_dict(torch.load(best_path, map_location=args.device, weights_only=True))
    return net.eval(), history


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="a table_value.data folder")
    p.add_argument("--out", type=Path, required=True, help="the run folder")
    p.add_argument("--epochs", type=int_arg(1, 1000), default=6)
    p.add_argument("--batch", type=int_arg(16, 1 << 20), default=4096)
    p.add_argument("--lr", type=float_arg(0, 1), default=1e-3)
    p.add_argument("--seat", type=int_arg(4, 1024), default=64, help="seat encoder width")
    p.add_argument("--head", type=int_arg(4, 1024), default=128, help="head width")
    p.add_argument("--embed", type=int_arg(1, 64), default=8, help="policy embedding width")
    p.add_argument("--no-planes", dest="planes", action="store_false",
                   help="the seats read their luck_features summary only, not their tiles")  # fmt: skip
    p.add_argument("--lineup-dropout", type=float_arg(0, 1), default=0.3,
                   help="chance a seat's policy is replaced by 'unknown' in training")  # fmt: skip
    p.add_argument("--val-every", type=int_arg(2, 1000), default=20,
                   help="hold out every N-th shard")  # fmt: skip
    p.add_argument("--max-shards", type=int_arg(2, 10**6), default=10**6,
                   help="use the first N shards of --data")  # fmt: skip
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
                                   overwrite=args.overwrite, what="table-value fit")  # fmt: skip
    conf = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k in KEEP}
    conf_path = args.out / "fit.json"
    if resumed and conf_path.exists():
        refuse_changed_file(PROG, p, args.out, conf_path, conf)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    try:
        train, val, meta = load_data(args.data, args.max_shards, args.val_every)
    except ValueError as exc:
        fail(PROG, exc)
    conf["shards"] = len(list((args.data / "shards").glob("shard-*.npz")))
    write_atomic(conf_path, json.dumps(conf, indent=1) + "\n")
    print(f"{len(train['y']):,} training rows, {len(val['y']):,} held out", flush=True)
    setup(args.threads, args.seed)
    args.device, _ = from_args(args)
    try:
        net, history = fit(args, train, val)
    except ValueError as exc:
        fail(PROG, exc)
    r2 = r2_by_phase(predict(net, val), val)
    r2_unknown = r2_by_phase(predict(net, val, unknown=True), val)
    doc = {
        "rules": RuleConfig.from_dict(meta["rules"]).to_dict(), "vocab": list(VOCAB),
        "command": command_line("sichuan_env.train.table_value.fit", argv),
        "data_command": meta.get("command", "?"), "commit": git_commit(),
        "wall_clock_s": round(time.time() - start, 1),
        "fit_seconds": round(sum(h["seconds"] for h in history), 1),
        "deal_baseline": deal_baseline(net, train),
        "metrics": {"held_out": r2, "held_out_unknown_lineup": r2_unknown, "history": history,
                    "train_rows": len(train["y"]), "val_rows": len(val["y"])},
        "data": {k: meta.get(k) for k in ("hands", "mix", "seed", "block_walls", "preset")},
    }  # fmt: skip
    path = checkpoint.save(args.out / "table_value.pt", KIND, net.cpu(), doc)
    for name, m in r2.items():
        print(f"  held-out R2 {name:>12}: {m['r2']:.4f} ({m['rows']:,} rows)")
    print(f"wrote {path}")
    return 0


def cli() -> int:
    """Console entry point."""
    return run(main, PROG)


if __name__ == "__main__":
    raise SystemExit(cli())
