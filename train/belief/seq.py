"""Train a belief model that also reads the event tokens: ``python -m sichuan_env.train.belief.train --arch seq``.

    python -m sichuan_env.train.belief.train --arch seq --data $DATA/heur-train11 --run runs/belief-seq
        --seq-hidden 128 --init belief --minutes 30

The network is ``BeliefNet`` with a GRU over the acting seat's public event
tokens (``sichuan_env.encoding.events``, stored per hand in the dataset's
``games.parquet``), whose state after the tokens seen so far is projected
onto the trunk's context. The GRU is causal, so the training batches are
whole (hand, seat) sequences: one pass over a seat's tokens serves every
decision of that seat in the hand (about 15), each read at its own offset.
A batch holds about ``--batch`` decision rows (whole sequences). Hold-out,
losses, evaluation, checkpoints, ``--resume`` and ``--ship`` are those of
``sichuan_env.train.belief.train``. ``--init CHECKPOINT`` starts from a belief checkpoint's
weights (its architecture; the new projection starts at zero, so the
network first predicts exactly as that checkpoint). ``--seq-hidden 0``
trains the planes-only network through the same batches: the control.
``--seq-lr-mult`` scales the learning rate of the sequence branch.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents.belief.model import HEADS, BeliefConfig, BeliefModel, BeliefNet
from sichuan_env.agents.belief.model import load_belief_network as load_net
from sichuan_env.train.belief.report import auc
from sichuan_env.train.belief.train import _split, load_shard, losses, save_progress
from sichuan_env.train.common import MetricLog, git_commit
from sichuan_env.train.data.dataset import read_meta, shards

SEQ_PARAMS = ("embed.", "gru.", "seq_proj.", "seq_out.")
"""Name prefixes of the sequence branch's parameters (learning rate x ``--seq-lr-mult``)."""


class EventTable:
    """The event tokens of a dataset folder's hands (``games.parquet``), by game id.

    Args:
        folder: a dataset folder written by ``sichuan_env.train.data.make_dataset``.

    Raises:
        ValueError: the folder has no readable ``games.parquet``.
    """

    def __init__(self, folder: str | Path) -> None:
        cols = ["game_id", "offsets", *(f"tokens_{s}" for s in range(4))]
        try:
            t = pq.read_table(Path(folder) / "games.parquet", columns=cols)
        except (OSError, KeyError) as exc:
            raise ValueError(f"{folder}: cannot read games.parquet ({exc})") from None
        ids = t.column("game_id").to_numpy()
        self.index = np.full(int(ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        self.index[ids] = np.arange(len(ids))

        def flat(name: str) -> tuple[np.ndarray, np.ndarray]:
            arr = t.column(name).combine_chunks()
            return arr.offsets.to_numpy(), arr.values.to_numpy()

        self.off = flat("offsets")
        self.tok = [flat(f"tokens_{s}") for s in range(4)]

    def tokens(self, game_id: int, seat: int) -> np.ndarray:
        """Seat ``seat``'s whole token sequence of hand ``game_id``."""
        i = self.index[game_id]
        starts, values = self.tok[seat]
        return values[starts[i] : starts[i + 1]]

    def ends(self, game_id: np.ndarray, decision: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """Tokens seen by the acting seat at each decision row (``offsets[decision, seat]``)."""
        starts, values = self.off
        return values[starts[self.index[game_id]] + 4 * decision.astype(np.int64) + seat]

    def row_tokens(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """``int64[N, L]`` right-padded prefixes of decision rows (``BeliefModel.predict``'s input)."""
        g, d, s = batch["game_id"], batch["decision"], batch["seat"]
        ends = self.ends(g, d, s)
        out = np.zeros((len(g), int(ends.max(initial=1))), dtype=np.int64)
        for i in range(len(g)):
            out[i, : ends[i]] = self.tokens(int(g[i]), int(s[i]))[: ends[i]]
        return out


def load_rows(path: Path, events: EventTable) -> dict[str, np.ndarray]:
    """``sichuan_env.train.belief.train.load_shard`` plus each row's (hand, seat) key and token end."""
    d = load_shard(path)
    t = pq.read_table(path, columns=["decision", "seat"])
    seat = t.column("seat").to_numpy().astype(np.int64)
    d["key"] = d["game_id"].astype(np.int64) * 4 + seat
    d["end"] = events.ends(d["game_id"], t.column("decision").to_numpy(), seat)
    return d


def groups(d: dict[str, np.ndarray], rows: int, rng: np.random.Generator | None) -> list:
    """Row index arrays of batches of whole (hand, seat) sequences, about ``rows`` rows each."""
    keys, inv = np.unique(d["key"], return_inverse=True)
    order = np.argsort(inv, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(inv, minlength=len(keys)))]
    per = max(1, round(rows * len(keys) / max(1, len(inv))))
    seqs = rng.permutation(len(keys)) if rng is not None else np.arange(len(keys))
    return [
        np.concatenate([order[bounds[k] : bounds[k + 1]] for k in seqs[lo : lo + per]])
        for lo in range(0, len(keys), per)
    ]


def take(d: dict[str, np.ndarray], idx: np.ndarray, rows: int, events: EventTable) -> dict:
    """A batch: ``sichuan_env.train.belief.train.take``'s tensors plus ``tokens [S, L]``, ``ends`` and ``seq``."""
    obs = np.unpackbits(d["obs"][idx], axis=1, count=rows * 27).reshape(len(idx), rows, 27)
    out: dict[str, Any] = {"obs": torch.from_numpy(obs)}
    for k in ("tenpai", "active", "waits", "hand", "deal_in", "legal"):
        out[k] = torch.from_numpy(d[k][idx])
    out["own_turn"] = out["legal"].any(dim=1)
    keys, seq = np.unique(d["key"][idx], return_inverse=True)
    ends = d["end"][idx]
    tok = np.zeros((len(keys), int(ends.max())), dtype=np.int64)
    for j, key in enumerate(keys):
        t = events.tokens(int(key // 4), int(key % 4))[: tok.shape[1]]
        tok[j, : len(t)] = t
    out.update(tokens=torch.from_numpy(tok), ends=torch.from_numpy(ends), seq=torch.from_numpy(seq))
    return out


def forward(net: BeliefNet, b: dict) -> dict[str, torch.Tensor]:
    """The network's logits on a ``take`` batch."""
    if not net.config.seq_hidden:
        return net(b["obs"])
    return net(b["obs"], tokens=b["tokens"], ends=b["ends"], seq=b["seq"])


@torch.no_grad()
def evaluate(net: BeliefNet, val: dict, rows: int, events: EventTable) -> dict[str, float]:
    """Validation loss and AUC per head, as ``sichuan_env.train.belief.train.evaluate``."""
    net.eval()
    ys: dict[str, list] = {h: [] for h in HEADS}
    ps: dict[str, list] = {h: [] for h in HEADS}
    loss = {h: 0.0 for h in HEADS}
    n = len(val["game_id"])
    for idx in groups(val, 2048, None):
        b = take(val, idx, rows, events)
        out = forward(net, b)
        for h, v in losses(out, b).items():
            loss[h] += float(v) * len(idx) / n
        act, ten = b["active"], b["tenpai"]
        sel = {"tenpai": act, "waits": ten[:, :, None].expand(-1, -1, 27),
               "hand": act[:, :, None].expand(-1, -1, 27), "deal_in": b["legal"]}  # fmt: skip
        for h in HEADS:
            ys[h].append(b[h][sel[h]].numpy())
            ps[h].append(out[h][sel[h]].numpy())
    net.train()
    res = {f"val_loss_{h}": loss[h] for h in HEADS}
    res["val_loss"] = sum(loss.values())
    for h in HEADS:
        y, p = np.concatenate(ys[h]), np.concatenate(ps[h])
        res[f"val_auc_{h}"] = auc(y, p) if 0 < y.sum() < y.size else float("nan")
    return res


def _new_net(args: argparse.Namespace) -> BeliefNet:
    if args.init is None:
        return BeliefNet(BeliefConfig(obs_version=2, hidden=args.hidden, layers=args.layers,
                                      tile_channels=args.tile_channels, dropout=args.dropout,
                                      tenpai_pool=args.tenpai_pool, seq_hidden=args.seq_hidden,
                                      seq_embed=args.seq_embed))  # fmt: skip
    src = BeliefModel.load(args.init).net
    arch = {**src.config.to_dict(), "dropout": args.dropout}
    net = BeliefNet(BeliefConfig(**{**arch, "seq_hidden": args.seq_hidden,
                                    "seq_embed": args.seq_embed}))  # fmt: skip
    missing, extra = net.load_state_dict(src.state_dict(), strict=False)
    if extra or any(not k.startswith(SEQ_PARAMS) for k in missing):
        raise ValueError(f"--init {args.init}: tensors missing {missing[:5]}, unexpected {extra}")
    return net


def train(args: argparse.Namespace, p: argparse.ArgumentParser, argv: list[str] | None) -> dict:
    """``sichuan_env.train.belief.train.main`` for ``--arch seq`` (arguments parsed and checked there)."""
    rows = int(read_meta(args.data[0])["obs_shape"][0])
    try:
        events = {d: EventTable(d) for d in args.data}
    except ValueError as exc:
        p.error(str(exc))
    files = [(s, d) for d in args.data for s in shards(d)]
    metas = [read_meta(d) for d in args.data]
    total_rows = sum(int(m["decisions"]) for m in metas) * (1 - 1 / args.val_every)
    planned = max(1, int(args.epochs * total_rows / args.batch))
    run_dir: Path = args.run

    def make_opt(net: BeliefNet) -> torch.optim.Optimizer:
        new = [p for n, p in net.named_parameters() if n.startswith(SEQ_PARAMS)]
        old = [p for n, p in net.named_parameters() if not n.startswith(SEQ_PARAMS)]
        groups = [{"params": old, "mult": 1.0}]
        if new:
            groups.append({"params": new, "mult": args.seq_lr_mult})
        return torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay)

    try:
        if args.resume:
            net, _ = load_net(run_dir / "last.pt")
            state = torch.load(run_dir / "state.pt", map_location="cpu", weights_only=True)
            opt = make_opt(net)
            opt.load_state_dict(state["optimizer"])
            counters = dict(state["counters"])
        else:
            if (run_dir / "last.pt").exists():
                p.error(f"{run_dir} holds a run already: --resume it or choose another --run")
            net = _new_net(args)
            opt = make_opt(net)
            counters = {"step": 0, "epoch": 0, "shard": 0, "batch": 0, "best": math.inf,
                        "wall": 0.0}  # fmt: skip
    except (ValueError, OSError, KeyError, TypeError) as exc:
        p.error(f"cannot start the run in {run_dir}: {exc}")
    net.train()
    val_events = events[args.data[0]]  # held-out hands of the first folder
    val_parts, n_val = [], 0
    for path in shards(args.data[0]):
        if n_val >= args.val_rows:
            break
        d = load_rows(path, val_events)
        val_parts.append(_split(d, d["game_id"] % args.val_every == 0))
        n_val += len(val_parts[-1]["game_id"])
    val = {k: np.concatenate([v[k] for v in val_parts]) for k in val_parts[0]}
    ids, counts = np.unique(val["game_id"], return_counts=True)  # whole hands, <= --val-rows
    val = _split(
        val, np.isin(val["game_id"], ids[: max(1, int((np.cumsum(counts) <= args.val_rows).sum()))])
    )
    log = MetricLog(run_dir / "metrics.jsonl")
    meta = {"rules": metas[0]["rules"], "commit": git_commit(), "seed": args.seed,
            "command": "python -m sichuan_env.train.belief.train " + " ".join(sys.argv[1:] if argv is None else argv),
            "data": [str(d) for d in args.data]}  # fmt: skip
    t0 = time.perf_counter() - counters["wall"]
    deadline = time.perf_counter() + 60 * args.minutes
    last: dict[str, Any] = {}

    def checkpoint() -> None:
        nonlocal last
        last = evaluate(net, val, rows, val_events)
        counters["wall"] = time.perf_counter() - t0
        last.update(epoch=counters["epoch"], lr=opt.param_groups[0]["lr"], wall_s=counters["wall"])
        log.write(counters["step"], **last)
        save_progress(run_dir, net, opt, counters, meta, last, args.ship)

    columns = (TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[info]}"))  # fmt: skip
    stop = False
    with Progress(*columns, disable=args.quiet) as bar:
        task = bar.add_task("train", total=planned, completed=counters["step"], info="")
        while counters["epoch"] < args.epochs and not stop:
            order = np.random.default_rng([args.seed, counters["epoch"]]).permutation(len(files))
            while counters["shard"] < len(files) and not stop:
                path, folder = files[order[counters["shard"]]]
                d = load_rows(path, events[folder])
                d = _split(d, d["game_id"] % args.val_every != 0)
                rng = np.random.default_rng([args.seed, counters["epoch"], counters["shard"]])
                batches = groups(d, args.batch, rng)
                while counters["batch"] < len(batches):
                    b = take(d, batches[counters["batch"]], rows, events[folder])
                    frac = min(1.0, counters["step"] / planned)
                    for g in opt.param_groups:
                        g["lr"] = (
                            g.get("mult", 1.0)
                            * args.lr
                            * (0.1 + 0.45 * (1 + math.cos(math.pi * frac)))
                        )
                    parts = losses(forward(net, b), b)
                    loss = torch.stack(list(parts.values())).sum()
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
    checkpoint()
    log.close()
    return last
