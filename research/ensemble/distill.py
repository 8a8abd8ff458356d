"""One network from the ensemble: a student fitted to ``ensemble6``'s mean logits.

    python -m research.ensemble.distill --run runs/ens6-student --rows 1000000   # then --resume

``ensemble6`` averages six networks' logits, six forward passes a decision. A student
of one member's architecture, started from one member (``--init``), regresses the
mean logits at the states the teacher plays: half the hands the teacher in all four
seats, half one teacher seat against three heuristics (the lineup it is measured
in). The loss is the squared error of the logits over the legal actions, each row
centred (a shift of all logits changes no choice). Reported after every epoch, on
rows of hands no training row came from: the loss, and how often the student's
greedy action is the teacher's (``agreement``), beside the ``--init`` network's.

Data come in shards of ``--shard-rows`` rows, each from its own seed, written
atomically to ``RUN/data``. After each epoch, ``RUN/state.pt`` (weights, optimizer,
epoch and its held-out figures, one atomic write) comes first, then ``RUN/last.pt``,
``RUN/best.pt`` at the best held-out agreement, and ``RUN/run.json``. ``--resume``
carries on after a stop at any point: the shards made are kept, an epoch whose
``state.pt`` was written is not redone (the files after it are written again), and
the result is the run never stopped. A run folder that exists is refused without
``--resume``, a resume with other settings is refused naming them, and damaged
files (shards, ``run.json``, ``state.pt``) are refused with their name.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.progress import Progress
from sichuan_env.agents.nn.ensemble import EnsembleAgent
from sichuan_env.agents.nn.policy import aux_features, heuristic_choices
from sichuan_env.agents.nn.torch_agent import load_network, save_checkpoint
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.train.provenance import command_line, git_commit

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import obs_rows
from sichuan_env.envs.vector import VectorEnv

SETTINGS = ("teacher", "init", "rows", "shard_rows", "val_shards", "envs", "seed", "lr", "batch")
KEYS = ("obs", "mask", "target")


def _roles(envs: int) -> np.ndarray:
    """``bool[envs, 4]``: whether the teacher plays seat j of slot i.

    Even slots: every seat; odd slots: one seat, turning with the slot, against three
    heuristics.
    """
    roles = np.zeros((envs, 4), dtype=bool)
    roles[0::2] = True
    odd = np.arange(1, envs, 2)
    roles[odd, (odd // 2) % 4] = True
    return roles


def make_shard(teacher: EnsembleAgent, rows: int, envs: int, seed: int) -> dict[str, np.ndarray]:
    """``rows`` decisions of the teacher (more than one legal action) and its mean logits."""
    env = VectorEnv(envs, RuleConfig.preset("xuezhan"), obs_version=1, seed=seed)
    heuristic = HeuristicAgent()
    roles = _roles(envs)
    obs, mask, seat = env.reset(seed=seed)
    got: dict[str, list[np.ndarray]] = {k: [] for k in KEYS}
    n = 0
    while n < rows:
        mine = roles[np.arange(envs), seat]
        acts = np.empty(envs, dtype=np.int64)
        if (~mine).any():
            acts[~mine] = heuristic.act_batch(obs[~mine], mask[~mine])
        if mine.any():
            o, m = np.ascontiguousarray(obs[mine]), mask[mine]
            logits = teacher.mean_logits(o, m)
            acts[mine] = logits.argmax(dim=1).numpy()
            keep = m.sum(axis=1) > 1
            got["obs"].append(o[keep])
            got["mask"].append(m[keep])
            got["target"].append(torch.nan_to_num(logits[keep], neginf=0.0).numpy())
            n += int(keep.sum())
        obs, mask, seat, *_ = env.step(acts)
    return {k: np.concatenate(v)[:rows] for k, v in got.items()}


def save_shard(path: Path, shard: dict[str, np.ndarray]) -> None:
    """Write ``shard`` to ``path`` (compressed; a temporary name, then renamed)."""
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **shard)
    os.replace(tmp, path)


def load_shard(path: Path) -> dict[str, np.ndarray]:
    """A shard, checked: nothing read from disk is trusted.

    Shapes, dtypes, 0/1 planes and masks, finite targets, every row with a choice.

    Raises:
        ValueError: not a shard of this script, or a damaged one.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            shard = {k: z[k] for k in KEYS}
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not a shard of this script ({exc})") from exc
    o, m, t = shard["obs"], shard["mask"], shard["target"]
    n = len(o)
    ok = (
        o.dtype == np.uint8 and o.shape == (n, obs_rows(1), 27) and m.dtype == np.int8
        and m.shape == (n, 88) and t.dtype == np.float32 and t.shape == (n, 88) and n > 0
    )  # fmt: skip
    ok = ok and o.max() <= 1 and m.min() >= 0 and m.max() <= 1 and np.isfinite(t).all()
    if not ok or not (m.sum(axis=1) > 1).all():
        raise ValueError(f"{path}: damaged shard (shapes, dtypes or values)")
    return shard


def centred_loss(logits: torch.Tensor, target: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Mean over rows of the mean squared error over legal actions, each row's error centred."""
    w = legal.float()
    diff = (logits - target) * w
    diff = diff - (diff.sum(1, keepdim=True) / w.sum(1, keepdim=True)) * w
    return ((diff**2).sum(1) / w.sum(1)).mean()


def _tensors(net: torch.nn.Module, shard: dict[str, np.ndarray], lo: int, hi: int):
    o = shard["obs"][lo:hi]
    m = shard["mask"][lo:hi]
    aux = torch.from_numpy(aux_features(o)) if net.config.aux else None
    prior = torch.from_numpy(heuristic_choices(o, m)) if net.config.prior else None
    return (
        torch.from_numpy(o),
        aux,
        torch.from_numpy(m),
        prior,
        torch.from_numpy(shard["target"][lo:hi]),
    )


@torch.no_grad()
def evaluate(net: torch.nn.Module, shard: dict[str, np.ndarray], batch: int = 8192) -> dict:
    """Held-out loss and agreement with the teacher's greedy action."""
    net.eval()
    loss, agree, n = 0.0, 0, len(shard["obs"])
    for lo in range(0, n, batch):
        o, aux, m, prior, t = _tensors(net, shard, lo, lo + batch)
        lg = net.logits(o, aux=aux, mask=m, prior=prior)
        legal = m != 0
        loss += float(centred_loss(lg, t, legal)) * len(o)
        want = t.masked_fill(~legal, -torch.inf).argmax(1)
        agree += int((lg.masked_fill(~legal, -torch.inf).argmax(1) == want).sum())
    if not math.isfinite(loss):  # a diverged fit is an error, never a figure
        raise ValueError(f"the held-out loss is {loss}: the fit diverged (lower --lr)")
    return {"loss": loss / n, "agreement": agree / n}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m research.ensemble.distill", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--run", type=Path, required=True, help="run folder")
    p.add_argument("--teacher", default="ensemble6", help="an EnsembleAgent spec (ensemble6)")
    p.add_argument("--init", default="agents/checkpoints/oracle_r3.pt", help="student's start")
    p.add_argument("--rows", type=int, default=1_000_000, help="training rows")
    p.add_argument("--shard-rows", type=int, default=200_000)
    p.add_argument("--val-shards", type=int, default=1, help="held-out shards (after training's)")
    p.add_argument("--envs", type=int, default=512, help="hands stepped together")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--seed", type=int, default=57)
    p.add_argument("--resume", action="store_true")
    a = p.parse_args(argv)
    for name in ("rows", "shard_rows", "envs", "epochs", "batch"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if a.val_shards < 1 or not 0 < a.lr < 1:
        p.error("--val-shards must be >= 1 and --lr in (0, 1)")
    return a


def _settings(a: argparse.Namespace) -> dict:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items() if k in SETTINGS}


def _read_state(path: Path) -> dict[str, Any]:
    """``run.json``, checked field by field (it is read from disk)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"{path}: unreadable ({exc})")
    ok = (
        isinstance(state, dict) and isinstance(state.get("settings"), dict)
        and isinstance(state.get("epochs_done"), int) and isinstance(state.get("metrics"), list)
        and isinstance(state.get("seconds"), dict)
        and all(isinstance(r, dict) and isinstance(r.get("epoch"), int) for r in state["metrics"])
    )  # fmt: skip
    if not ok:
        sys.exit(f"{path}: not this script's run.json (fields missing or of the wrong type)")
    return state


def _read_checkpoint(path: Path, epochs_done: int) -> dict[str, Any]:
    """``state.pt``: weights, optimizer, epoch and its figures, one or no epoch past ``run.json``."""
    try:
        ck = torch.load(path, weights_only=True)
        epoch, row = int(ck["epoch"]), dict(ck["row"])
        if not isinstance(ck["net"], dict) or not isinstance(ck["opt"], dict):
            raise TypeError("weights or optimizer state not a dict")
    except Exception as exc:  # noqa: BLE001 (any damage: one line naming the file)
        sys.exit(f"{path}: damaged ({type(exc).__name__}: {exc})")
    if epoch not in (epochs_done, epochs_done + 1) or row.get("epoch") != epoch:
        sys.exit(f"{path}: epoch {epoch} does not follow run.json's {epochs_done} epochs")
    return ck


def main(argv: list[str] | None = None) -> int:
    """Make the teacher's shards, then fit the student (see the module docstring)."""
    a = _parse(argv)
    run, state_path, ck_path = a.run, a.run / "run.json", a.run / "state.pt"
    if run.exists() and not a.resume:
        sys.exit(f"{run} exists: pass --resume to carry on, or choose another --run")
    if a.resume:
        if not state_path.is_file():
            sys.exit(f"{run} has no run.json: nothing to resume")
        state = _read_state(state_path)
        changed = [k for k, v in _settings(a).items() if state["settings"].get(k) != v]
        if changed:
            sys.exit(f"--resume with other settings than the run's: {', '.join(changed)}")
    teacher = make_agent(a.teacher, seed=0)  # both checked before anything is written
    if not isinstance(teacher, EnsembleAgent):
        sys.exit(f"--teacher must name an EnsembleAgent, got {type(teacher).__name__}")
    init_net, doc = load_network(a.init)
    if not a.resume:
        (run / "data").mkdir(parents=True)
        state = {"settings": _settings(a), "epochs_done": 0, "metrics": [], "seconds": {}}
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    def write_state() -> None:
        tmp = state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, state_path)

    write_state()
    n_train = math.ceil(a.rows / a.shard_rows)
    names = [run / "data" / f"shard-{i:03d}.npz" for i in range(n_train + a.val_shards)]
    t0 = time.time()
    with Progress() as bar:
        task = bar.add_task("teacher's decisions", total=len(names))
        for i, path in enumerate(names):
            if not path.exists():
                save_shard(path, make_shard(teacher, a.shard_rows, a.envs, a.seed * 1000 + i))
            bar.advance(task)
    state["seconds"]["data"] = state["seconds"].get("data", 0) + time.time() - t0
    write_state()

    net, _ = load_network(a.init)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    parts = [load_shard(p) for p in names[n_train:]]
    val = {k: np.concatenate([p[k] for p in parts]) for k in KEYS}
    if not state["metrics"]:
        state["metrics"].append({"epoch": 0, **evaluate(init_net, val)})
        write_state()
    print(json.dumps(state["metrics"][0]))

    def finish(epoch: int, row: dict[str, Any]) -> None:
        """What follows ``state.pt``: ``last.pt``, ``best.pt`` when best, ``run.json``."""
        best = max([r["agreement"] for r in state["metrics"][1:] if r["epoch"] < epoch],
                   default=-1.0)  # fmt: skip
        train_s = sum(r["seconds"] for r in state["metrics"][1:] if r["epoch"] < epoch)
        meta = {
            "method": "ensemble_distill", "teacher": a.teacher, "init": a.init,
            "rows": n_train * a.shard_rows, "epoch": epoch, "heldout": row, "rules": doc["rules"],
            "wall_clock_s": state["seconds"]["data"] + train_s + row["seconds"],
            "command": command_line("research.ensemble.distill", argv), "commit": git_commit(),
        }  # fmt: skip
        save_checkpoint(run / "last.pt", net, meta)
        if row["agreement"] > best:
            save_checkpoint(run / "best.pt", net, meta)
        state["metrics"] = [r for r in state["metrics"] if r["epoch"] < epoch] + [row]
        state["epochs_done"] = epoch
        state["seconds"]["train"] = train_s + row["seconds"]
        write_state()

    if a.resume and ck_path.exists():
        ck = _read_checkpoint(ck_path, state["epochs_done"])
        net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        if ck["epoch"] == state["epochs_done"] + 1:  # stopped after state.pt: finish that epoch
            finish(ck["epoch"], dict(ck["row"]))
    elif state["epochs_done"] > 0:
        sys.exit(f"{ck_path} is missing: {state['epochs_done']} epochs cannot be resumed")
    for epoch in range(state["epochs_done"] + 1, a.epochs + 1):
        t0 = time.time()
        net.train()
        order = np.random.default_rng([a.seed, epoch]).permutation(n_train)
        for k in order:
            shard = load_shard(names[k])
            idx = np.random.default_rng([a.seed, epoch, int(k)]).permutation(len(shard["obs"]))
            shard = {key: v[idx] for key, v in shard.items()}
            for lo in range(0, len(idx), a.batch):
                o, aux, m, prior, t = _tensors(net, shard, lo, lo + a.batch)
                loss = centred_loss(net.logits(o, aux=aux, mask=m, prior=prior), t, m != 0)
                opt.zero_grad()
                loss.backward()
                opt.step()
        row = {"epoch": epoch, **evaluate(net, val), "seconds": time.time() - t0}
        print(json.dumps(row))
        tmp = run / "state.pt.tmp"
        torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "epoch": epoch, "row": row},
                   tmp)  # fmt: skip
        os.replace(tmp, ck_path)
        finish(epoch, row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
