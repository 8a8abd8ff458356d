"""Behaviour cloning: a ``PolicyNet`` learns to pick the actions of any registered agent.

    python -m sichuan_env.train.policy.bc --teacher heuristic --run runs/bc --minutes 25

The teacher plays all four seats of a ``VectorEnv``; its decisions are
streamed in chunks (``--envs`` x ``--chunk-steps`` steps), each chunk trained
on for ``--passes`` passes and then dropped, so memory stays flat however
long the run. Decisions with a single legal action teach nothing and are
skipped. A validation set of ``--val-decisions`` decisions comes from hands
of another seed (never trained on); after every epoch (``--chunks`` chunks)
the run logs the held-out accuracy and loss to ``run/metrics.jsonl`` (and
TensorBoard with ``--tensorboard``), saves ``run/last.pt`` (+ JSON) and, when
the held-out accuracy improved, ``run/best.pt``. The run stops after ``--epochs``
epochs, ``--minutes`` minutes of this call or ``--run-minutes`` of the whole run.

Each epoch deals its own hands, reseeds the teacher and shuffles from ``--seed``
and the epoch's number, and a new network starts from ``--seed`` alone, so
``--resume`` (from ``run/last.pt`` and ``run/state.pt``) gives the run that was
never stopped. A resume with another setting that changes the result
(``--teacher``, ``--lr``, ``--seed``, ...) is refused, naming it; ``--threads``,
``--device``, ``--amp`` and the budgets may change, and the network options
(``--init``, ``--hidden``, ``--layers``, ``--arch``, ``--aux``, ``--prior``) come
from the run.

Expert iteration: the teacher may be a search agent that reads the engine
state (``--teacher search``, ``sichuan_env.agents.search.agent``); ``--init CHECKPOINT``
starts from a trained policy (its architecture and weights) instead of a
fresh network, so the search's improvements are distilled into it::

    python -m sichuan_env.train.policy.bc --teacher search --init agents/checkpoints/ppo.pt --run runs/expert --lr 1e-4

A teacher that agrees with the ``--init`` network at most decisions (the
after-win hybrid ``strongest`` plays ``distill`` until some seat has won) is
better cloned with ``--margin M``: a hinge loss that is zero wherever the
network already picks the teacher's action by ``M`` logits or more, so the
network moves only where they differ, and keeps its logits' scale. The
cross-entropy instead re-scales every logit of a value-regression network
such as ``distill``: one epoch of it dropped the agreement with that teacher
from 0.92 to 0.86 (``docs/training.md``)::

    python -m sichuan_env.train.policy.bc --teacher strongest --init agents/checkpoints/distill.pt \
        --margin 0.1 --lr 1e-4 --val-decisions 10000 --run runs/distill-hybrid --minutes 50
"""

from __future__ import annotations

# numba's OpenMP threads spin after each parallel region and starve torch's (measured: 10x
# slower training); passive waiting must be set before either library loads OpenMP.
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.base import Agent
from sichuan_env.agents.device import add_device_args, amp_dtype, autocast, resolve_device
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet, masked_logits
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.agents.registry import make_agent
from sichuan_env.train.common import (
    BEST,
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
    say_written,
    seeded_build,
    setup,
    step_rng,
)
from sichuan_env.train.policy.bc_data import collect_validation, teacher_stream

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    PlainHelp,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    run,
)
from sichuan_env._progress import progress_bar
from sichuan_env.envs.vector import VectorEnv

PROG = "sichuan_env.train.policy.bc"
COUNTERS = {"epoch": int, "samples": int, "decisions": int, "wall_clock_s": float, "best_acc": BEST}
"""The run's counters (``state.pt``) and their types."""
START_ONLY = ("init", "hidden", "layers", "arch", "aux", "prior")
"""Options that shape a new run's network only; a resumed run takes it from its checkpoint."""


def bc_loss(
    net: PolicyNet,
    obs: torch.Tensor,
    masks: torch.Tensor,
    actions: torch.Tensor,
    aux: torch.Tensor | None = None,
    prior: torch.Tensor | None = None,
    margin: float | None = None,
):
    """``(loss, accuracy)`` of a batch: the masked policy's cross-entropy, or with ``margin`` a hinge.

    The hinge (``relu(max other legal logit - teacher's logit + margin)``,
    averaged) is zero wherever the network already picks the teacher's action by
    ``margin`` or more, so fine-tuning a network (``--init``) towards a teacher
    that mostly agrees with it moves it only where they differ (or nearly do),
    and keeps the scale of its logits (a value-regression network's included).
    """
    logits = masked_logits(net.logits(obs, aux, masks, prior), masks)
    if margin is None:
        loss = F.cross_entropy(logits, actions)
    else:
        own = logits.gather(1, actions[:, None])[:, 0]
        others = logits.scatter(1, actions[:, None], -float("inf")).max(dim=1).values
        # a decision with no other legal action has others = -inf: nothing to violate
        loss = F.relu(torch.nan_to_num(others - own + margin, neginf=0.0)).mean()
    acc = (logits.argmax(dim=1) == actions).float().mean()
    return loss, acc


def fit_chunk(
    net: PolicyNet,
    opt: torch.optim.Optimizer,
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
    batch: int,
    passes: int,
    rng: np.random.Generator,
    cast: torch.dtype | None = None,
    margin: float | None = None,
) -> tuple[float, float, int]:
    """Train on one chunk; returns ``(mean loss, mean accuracy, samples seen)``.

    The chunk moves to the network's device; ``cast`` is the autocast dtype of the
    forward passes (None: float32); ``margin``: the hinge loss (``bc_loss``).
    """
    dev = next(net.parameters()).device
    obs, masks, actions = (torch.from_numpy(x).to(dev) for x in data)
    aux = net.aux_of(obs)  # computed once per chunk, not once per pass
    prior = net.prior_of(obs, masks)
    n = len(actions)
    losses, accs, seen = [], [], 0
    net.train()
    for _ in range(passes):
        order = torch.from_numpy(rng.permutation(n)).to(dev)
        for lo in range(0, n, batch):
            idx = order[lo : lo + batch]
            with autocast(dev, cast):
                loss, acc = bc_loss(
                    net, obs[idx], masks[idx], actions[idx],
                    None if aux is None else aux[idx], None if prior is None else prior[idx],
                    margin,
                )  # fmt: skip
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
            accs.append(acc.item())
            seen += len(idx)
    return float(np.mean(losses)), float(np.mean(accs)), seen


@torch.no_grad()
def evaluate(
    net: PolicyNet,
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
    cast: torch.dtype | None = None,
    margin: float | None = None,
) -> tuple[float, float]:
    """``(loss, accuracy)`` on held-out decisions (on the network's device); ``margin`` as in ``bc_loss``."""
    net.eval()
    dev = next(net.parameters()).device
    obs, masks, actions = (torch.from_numpy(x).to(dev) for x in data)
    aux = net.aux_of(obs)
    total_loss, correct = 0.0, 0.0
    for lo in range(0, len(actions), 4096):
        s = slice(lo, lo + 4096)
        with autocast(dev, cast):
            a = None if aux is None else aux[s]
            loss, acc = bc_loss(net, obs[s], masks[s], actions[s], a, None, margin)
        total_loss += loss.item() * len(actions[s])
        correct += acc.item() * len(actions[s])
    net.train()
    return total_loss / len(actions), correct / len(actions)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument("--teacher", default="heuristic", help="registered agent name or checkpoint")
    p.add_argument("--run", type=Path, default=Path("runs/bc"), help="run directory")
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS))
    p.add_argument("--envs", type=int_arg(1, 65536), default=256, help="hands stepped together")
    p.add_argument(
        "--chunk-steps", type=int_arg(1, 4096), default=64, help="steps per streamed chunk"
    )
    p.add_argument("--chunks", type=int_arg(1, 10**6), default=8, help="chunks per epoch")
    p.add_argument(
        "--passes", type=int_arg(1, 1000), default=2, help="training passes over each chunk"
    )
    p.add_argument("--epochs", type=int_arg(1, 10**7), default=1000)
    add_budget_args(p, 25.0)
    p.add_argument("--batch", type=int_arg(1, 1 << 20), default=512)
    p.add_argument("--lr", type=float_arg(0, 1), default=1e-3)
    p.add_argument("--hidden", type=int_arg(8, 4096), default=PolicyConfig.hidden)
    p.add_argument("--layers", type=int_arg(1, 16), default=PolicyConfig.layers)
    p.add_argument("--arch", default="mlp", choices=("mlp", "conv"))
    p.add_argument("--aux", action="store_true", help="also read the shanten/ukeire features")
    p.add_argument("--prior", action="store_true", help="add the heuristic's choice to the logits")
    p.add_argument("--val-decisions", type=int_arg(1, 10**7), default=20000)
    p.add_argument("--threads", type=int_arg(1, 1024), default=2, help="torch threads")
    add_device_args(p)
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    p.add_argument("--resume", action="store_true", help="continue run/last.pt")
    add_overwrite(p, "run")
    p.add_argument(
        "--init", type=Path, default=None, help="start from this policy checkpoint (.pt + .json)"
    )
    p.add_argument(
        "--search-samples",
        type=int_arg(1, 4096),
        default=None,
        help="rollouts per candidate of a search teacher",
    )
    p.add_argument(
        "--margin",
        type=float_arg(0, 1000),
        default=None,
        help="a hinge loss with this margin instead of the cross-entropy: fine-tunes an --init "
        "network only where it does not pick the teacher's action by MARGIN",
    )
    p.add_argument("--tensorboard", action="store_true", help="also log to run/tb")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> dict:
    """Run behaviour cloning; returns the last metrics row."""
    p = build_parser()
    args = p.parse_args(argv)
    if args.resume and args.init is not None:
        p.error("--init starts a new run; --resume continues one: give one of them")
    device = resolve_device(args.device)
    cast = amp_dtype(device, args.amp)

    def make_teacher(seed: int) -> Agent:
        made = make_agent(args.teacher, seed=seed, device=device)
        if args.search_samples is not None:
            made.samples = args.search_samples
        return made

    try:
        teacher = make_agent(args.teacher, seed=args.seed, device=device)
    except ValueError as exc:
        p.error(f"--teacher: {exc}")
    if args.search_samples is not None:
        if not getattr(teacher, "reads_state", False) or not hasattr(teacher, "samples"):
            p.error("--search-samples is for a search teacher (--teacher search)")
        teacher.samples = args.search_samples
    problem = dir_problem(args.run)
    if problem:
        p.error(f"--run: {problem}")
    init = None
    if args.init is not None:
        try:
            init, _ = load_network(args.init)
        except (OSError, ValueError) as exc:
            fail(PROG, f"--init: {exc}")
    setup(args.threads, args.seed)
    rules = RuleConfig.preset(args.preset)

    def make_opt(net: PolicyNet) -> torch.optim.Optimizer:
        return torch.optim.Adam(net.parameters(), lr=args.lr)

    # an existing run: --resume continues it, --overwrite replaces it, else refused
    claim_output_or_exit(p, "--run", args.run, RUN_FILES, resume=args.resume,
                         overwrite=args.overwrite, what="run")  # fmt: skip
    settings = run_settings(args, skip=START_ONLY)
    if args.resume:
        try:
            net, opt, counters, doc = load_run(
                args.run, make_opt, counters=COUNTERS, method="bc", device=device
            )
        except ValueError as exc:
            fail(PROG, exc)
        stored = doc.get("settings")
        refuse_changed_settings(PROG, p, args.run, stored if isinstance(stored, dict) else {
            "teacher": doc.get("teacher")}, settings)  # fmt: skip
        if counters["epoch"] >= args.epochs:
            fail(PROG, f"{args.run} has run {counters['epoch']} epochs already: raise --epochs")
        check_run_budget(PROG, args, counters["wall_clock_s"])
    else:
        arch = {"arch": args.arch, "hidden": args.hidden, "layers": args.layers}
        config = PolicyConfig(**arch, aux=args.aux, prior=args.prior)
        # the initial weights from --seed alone, whatever ran before in the process
        net = init or seeded_build(args.seed, lambda: PolicyNet(config))
        net.to(device).train()
        opt = make_opt(net)
        counters = {"epoch": 0, "samples": 0, "decisions": 0, "wall_clock_s": 0.0, "best_acc": 0.0}
    log = MetricLog(args.run / "metrics.jsonl", args.run / "tb" if args.tensorboard else None)
    val = collect_validation(teacher, rules, args.val_decisions, args.seed + 10**9)
    t0, base_clock = time.time(), counters["wall_clock_s"]
    meta = {
        "rules": rules.to_dict(),
        "method": "bc",
        "teacher": args.teacher,
        "init": None if args.init is None else str(args.init),
        "loss": "cross-entropy" if args.margin is None else f"hinge, margin {args.margin}",
        "settings": settings,
        "command": command_line("sichuan_env.train.policy.bc"),
        "commit": git_commit(),
    }
    row: dict = {}
    columns = (TextColumn("bc epoch {task.completed:.0f}"), BarColumn(), TextColumn("{task.fields[info]}"), TimeElapsedColumn())  # fmt: skip
    with progress_bar(*columns, disable=args.quiet, transient=False) as bar:
        task = bar.add_task("bc", total=args.epochs, completed=counters["epoch"], info="")
        # at least one epoch: the budgets are checked after each
        while counters["epoch"] < args.epochs and (not row or budget_left(args, t0, base_clock)):
            # the epoch's hands, teacher and shuffles from (seed, epoch) alone: a resumed
            # run plays and draws what the uninterrupted one does
            epoch_seed = args.seed + 7919 * (counters["epoch"] + 1)
            try:
                epoch_teacher = make_teacher(epoch_seed)
            except ValueError as exc:
                fail(PROG, f"--teacher: {exc}")
            venv = VectorEnv(args.envs, rules=rules, seed=epoch_seed)
            stream = teacher_stream(epoch_teacher, venv, args.chunk_steps)
            rng = step_rng(args.seed, counters["epoch"])
            t_gen = t_fit = 0.0
            losses, accs = [], []
            for _ in range(args.chunks):
                ta = time.time()
                chunk = next(stream)
                tb = time.time()
                loss, acc, seen = fit_chunk(
                    net, opt, chunk, args.batch, args.passes, rng, cast, args.margin
                )
                t_fit += time.time() - tb
                t_gen += tb - ta
                losses.append(loss)
                accs.append(acc)
                counters["samples"] += seen
                counters["decisions"] += len(chunk[2])
            val_loss, val_acc = evaluate(net, val, cast, args.margin)
            if not all(map(math.isfinite, (*losses, val_loss))):
                fail(PROG, f"epoch {counters['epoch'] + 1}: the loss is not finite (the run "
                           "diverged; try a smaller --lr): nothing of this epoch is saved")  # fmt: skip
            counters["epoch"] += 1
            counters["wall_clock_s"] = base_clock + time.time() - t0
            row = {
                "epoch": counters["epoch"],
                "train_loss": float(np.mean(losses)),
                "train_acc": float(np.mean(accs)),
                "val_loss": val_loss,
                "val_acc": val_acc,
                "decisions": counters["decisions"],
                "wall_clock_s": counters["wall_clock_s"],
                "gen_s": t_gen,
                "fit_s": t_fit,
            }
            meta.update(
                wall_clock_s=counters["wall_clock_s"], val_acc=val_acc, epoch=counters["epoch"]
            )
            save_run_or_fail(PROG, args.run, net, opt, counters, meta)
            if val_acc > counters["best_acc"]:
                counters["best_acc"] = val_acc
                save_run_or_fail(PROG, args.run, net, opt, counters, meta, name="best")
            log.write(counters["samples"], **row)  # once the epoch is saved
            info = f"val acc {val_acc:.3f} loss {val_loss:.3f} ({counters['decisions']} decisions)"
            bar.update(task, completed=counters["epoch"], info=info)
    log.close()
    say_written(args.run)
    return row


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
