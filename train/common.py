"""What the training scripts share: threads and seeds, metric logs, run checkpoints, evaluation.

- ``setup(threads, seed)``: torch threads (keep 1-2 on a shared CPU) and every RNG.
- ``MetricLog``: one JSON object per line (``metrics.jsonl``), mirrored to
  TensorBoard when asked and installed.
- ``save_run`` / ``load_run``: a run's ``last.pt`` (+ JSON, see
  ``sichuan_env.agents.checkpoint``) and ``state.pt`` (optimizer and counters), for
  ``--resume``; nothing is saved unless weights and optimizer state are finite, and
  nothing loaded is trusted (``read_state``, ``check_counters``, ``load_optimizer``,
  from ``sichuan_env.train.run_state``: any training script's run state, the belief
  model's too).
- ``--resume`` is the undisturbed run: ``run_settings`` / ``refuse_changed_settings``
  refuse a resume whose settings would change the result (naming the flags), and
  ``seeded_build`` / ``step_rng`` give network initialisation and per-epoch (per-step)
  randomness that depend on ``--seed`` and the position in the run only, never on
  what ran before in the process (``sichuan_env.train.resume``, re-exported here).
- ``add_budget_args`` / ``budget_left`` / ``check_run_budget``: ``--minutes`` (this
  call's wall-clock budget) and ``--run-minutes`` (the run's, summed over every call;
  ``sichuan_env.train.resume`` too).
- ``git_commit`` / ``command_line``: what a checkpoint records of where it came from
  (``sichuan_env.train.provenance``, re-exported here).
- ``evaluate_vs_heuristic``: a duplicate match of a network in one seat
  against three ``HeuristicAgent``s (``sichuan_env.agents.eval.evaluate``), points per hand
  with a 95% confidence interval.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from sichuan_env.agents.checkpoint import check_finite_module
from sichuan_env.agents.device import cpu_state
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_duplicate
from sichuan_env.agents.eval.match_stats import summarize
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.nn.torch_agent import (
    TorchAgent,
    check_state_dict,
    load_network,
    save_checkpoint,
)
from sichuan_env.train.provenance import command_line, git_commit
from sichuan_env.train.resume import (
    RESUME_FREE,
    add_budget_args,
    budget_left,
    changed_settings,
    check_run_budget,
    derived_seed,
    flag_names,
    refuse_changed_settings,
    run_settings,
    seeded_build,
    step_rng,
)
from sichuan_env.train.run_state import (
    BEST,
    check_counters,
    check_optimizer,
    load_optimizer,
    read_state,
)

from sichuan_env import RuleConfig
from sichuan_env._cli import fail
from sichuan_env._files import owned_entries, write_atomic
from sichuan_env.threads import set_threads


def setup(threads: int, seed: int) -> None:
    """Set torch's thread count and seed torch, numpy and ``random``.

    Raises:
        ValueError: threads below 1 or a negative seed.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    set_threads(threads)  # numba's and torch's counts, kept equal (sichuan_env.threads)
    torch.manual_seed(seed)
    random.seed(seed)


class MetricLog:
    """Append-only JSONL metrics, optionally mirrored to TensorBoard.

    Args:
        path: the JSONL file (appended to, so a resumed run continues it).
        tensorboard: a directory for TensorBoard event files, or None.
    """

    def __init__(self, path: Path, tensorboard: Path | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (closed in close())
        self._tb = None
        if tensorboard is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                print("tensorboard is not installed: logging JSONL only", file=sys.stderr)
            else:
                self._tb = SummaryWriter(str(tensorboard))

    def write(self, step: int, **values: Any) -> None:
        """One line ``{"step", "time", **values}`` (and TensorBoard scalars of the numbers)."""
        row = {"step": int(step), "time": time.time(), **values}
        self._f.write(json.dumps(row) + "\n")
        self._f.flush()
        if self._tb is not None:
            for key, v in values.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    self._tb.add_scalar(key, v, step)

    def close(self) -> None:
        """Flush and close the files."""
        self._f.close()
        if self._tb is not None:
            self._tb.close()


RUN_FILES = ("last.pt", "last.json", "best.pt", "best.json", "state.pt", "metrics.jsonl", "tb")
"""What a training run writes in its folder: a folder holding any of them holds a run, which
a new run resumes (``--resume``), replaces (``--overwrite``: these are removed first) or is
refused (``sichuan_env._cli.claim_output_or_exit``)."""


def save_run(
    run: Path,
    net: PolicyNet,
    opt: torch.optim.Optimizer,
    counters: dict,
    meta: dict,
    name: str = "last",
) -> Path:
    """Save ``run/<name>.pt`` (+ JSON) and ``run/state.pt`` (optimizer, counters).

    Nothing is written unless the weights, the optimizer state and the counters are all
    finite: a diverged run never replaces the last good checkpoint. ``state.pt`` records
    the ``sha256`` of the ``last.pt`` it goes with (``last_sha256``): a save that wrote
    the checkpoint but not the state is caught by ``load_run``, never resumed from.

    Raises:
        ValueError: non-finite weights, optimizer state or counters (``run`` unchanged).
        OSError: a file could not be written (``sichuan_env._files.WriteError``: torch's
            ``RuntimeError`` too); the files already there are unchanged.
    """
    what = f"not saving {run / name}.pt"
    check_finite_module(net, what)
    check_optimizer(opt, what)
    for key, v in counters.items():
        if isinstance(v, float) and math.isnan(v):
            raise ValueError(f"{what}: counter {key!r} is NaN")
    with all_or_nothing([run / f"{name}.pt", run / f"{name}.json", run / "state.pt"]):
        path = save_checkpoint(run / f"{name}.pt", net, meta)
        # on the CPU whatever the device: a run trained on a GPU resumes on a CPU-only machine
        state = {"optimizer": cpu_state(opt.state_dict()), "counters": counters,
                 "last_sha256": last_sha256(run)}  # fmt: skip
        write_atomic(run / "state.pt", lambda f: torch.save(state, f))
    return path


@contextlib.contextmanager
def all_or_nothing(paths: Iterable[Path]) -> Iterator[None]:
    """Files written together: when the block fails, each of ``paths`` is as it was before.

    Each existing file is kept aside first (a hard link, else a copy, ``.NAME.prev``);
    a failure puts it back, and removes the files the block made, so a checkpoint
    written without its ``state.pt`` never stays (the run stays resumable).
    """
    kept: list[tuple[Path, Path | None]] = []
    try:
        for path in paths:
            if not path.exists():
                kept.append((path, None))
                continue
            aside = path.with_name(f".{path.name}.prev")
            aside.unlink(missing_ok=True)
            try:
                os.link(path, aside)
            except OSError:
                shutil.copy2(path, aside)
            kept.append((path, aside))
        yield
    except BaseException:
        for path, aside in kept:
            with contextlib.suppress(OSError):
                if aside is None:
                    path.unlink(missing_ok=True)
                else:
                    os.replace(aside, path)
        raise
    finally:
        for _, aside in kept:
            if aside is not None:
                with contextlib.suppress(OSError):
                    aside.unlink(missing_ok=True)


def last_sha256(run: Path) -> str:
    """The ``sha256`` that ``run/last.json`` records ("" when there is none to read)."""
    try:
        doc = json.loads((run / "last.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    sha = doc.get("sha256") if isinstance(doc, dict) else None
    return sha if isinstance(sha, str) else ""


def check_state_matches(state: Mapping[str, Any], doc: Mapping[str, Any], run: Path) -> None:
    """Raise ``ValueError`` unless ``state.pt`` was written with the ``last.pt`` (``doc``) beside it.

    A state without ``last_sha256`` (runs saved before it) is not checked.
    """
    sha = state.get("last_sha256")
    if isinstance(sha, str) and sha and sha != doc.get("sha256"):
        raise ValueError(
            f"cannot resume: {run / 'state.pt'} does not belong to {run / 'last.pt'} (a save "
            "was cut short between the two files); start the run again"
        )


def save_run_or_fail(
    prog: str, run_dir: Path, net: PolicyNet, opt: Any, counters: dict, meta: dict,
    name: str = "last",
) -> None:  # fmt: skip
    """``save_run``; non-finite weights or a failed write end the run (exit 1), one line.

    The files already in ``run_dir`` are unchanged either way.
    """
    try:
        save_run(run_dir, net, opt, counters, meta, name)
    except ValueError as exc:
        fail(
            prog,
            f"{exc} (the run diverged; try a smaller --lr); {run_dir} keeps its last good files",
        )
    except OSError as exc:
        fail(prog, f"{write_failure(exc)}; {run_dir} keeps its last good files")


def write_failure(exc: OSError) -> str:
    """A failed write as one phrase: ``cannot write FILE: reason``."""
    reason = " ".join((exc.strerror or str(exc) or type(exc).__name__).split())
    reason = reason.removeprefix("cannot write the file").lstrip(": ")
    where = exc.filename
    return f"cannot write {where}: {reason}" if where else f"a write failed: {reason}"


def load_run(
    run: Path,
    opt_factory: Callable[[PolicyNet], torch.optim.Optimizer],
    *,
    counters: Mapping[str, Any] | None = None,
    method: str | None = None,
    device: torch.device | str = "cpu",
) -> tuple[PolicyNet, torch.optim.Optimizer, dict, dict]:
    """``(net, optimizer, counters, config)`` of a run saved by ``save_run`` (for ``--resume``).

    Args:
        run: the run folder.
        opt_factory: the script's optimizer for a network.
        counters: the counters' types (``check_counters``); None: not checked.
        method: the ``method`` the run's checkpoint must record (the script that made it).
        device: where the network goes before its optimizer is made (the optimizer's
            state follows it there).

    Raises:
        ValueError: no run there, a missing or invalid checkpoint or state file, a run of
            another script, counters of the wrong type, an optimizer state that does not fit
            or holds non-finite values.
    """
    if not run.is_dir():
        raise ValueError(f"cannot resume: there is no run folder {run}")
    if not (run / "last.pt").is_file():
        raise ValueError(f"cannot resume: {run} holds no last.pt (not a run, or none saved yet)")
    net, doc = load_network(run / "last.pt")
    if method is not None and doc.get("method") != method:
        raise ValueError(
            f"cannot resume: {run} is a {str(doc.get('method'))[:40]!r} run, not a {method!r} run"
        )
    net.to(device).train()
    state_file = run / "state.pt"
    state = read_state(state_file)
    check_state_matches(state, doc, run)
    what = f"cannot resume from {state_file}"
    got = check_counters(state["counters"], counters, what) if counters else dict(state["counters"])
    opt = opt_factory(net)
    load_optimizer(opt, state["optimizer"], what)
    return net, opt, got, doc


def load_reference(path: Path) -> PolicyNet:
    """A frozen network (a KL reference or a pool opponent) from a checkpoint."""
    net, _ = load_network(path)
    for p in net.parameters():
        p.requires_grad_(False)
    return net.eval()


def evaluate_vs_heuristic(
    net: PolicyNet, walls: int, rules: RuleConfig, seed: int = 12345, estimator: str = "plain"
) -> dict[str, float]:
    """The greedy policy in one seat against three heuristics, duplicate over ``walls``.

    Args:
        net: the policy network (played greedily; its training mode is restored).
        walls: walls of the match, each dealt four times with the seats rotated.
        rules: the ruleset.
        seed: the walls' seed (and the rollouts', with ``"advantage"``).
        estimator: ``"plain"``, or ``"advantage"`` to add the advantage-sum estimate
            (``sichuan_env.agents.eval.advantage``, the heuristic as reference, its default
            rollouts), blended with the plain one by ``match_stats.per_wall``'s cross-fitted
            coefficient as ``sichuan-eval`` reports it: unbiased, with about a quarter of
            the plain estimate's variance for networks near the heuristic.

    Returns:
        ``points_per_hand``, ``ci95``, ``win_rate``, ``deal_in_rate`` of the policy, each
        prefixed ``eval_``; with ``"advantage"``, also ``eval_adjusted`` and
        ``eval_adjusted_ci95``.

    Raises:
        ValueError: an unknown ``estimator``.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    was_training = net.training
    agent = TorchAgent(net, name="policy", greedy=True, seed=seed)
    lineup = ["policy", "heuristic", "heuristic", "heuristic"]
    agents = {"policy": agent, **make_lineup_agents(["heuristic"] * 4, seed)}
    records = play_duplicate(lineup, walls, rules, seed, progress=False, agents=agents)
    net.train(was_training)
    s = summarize(lineup, records, walls)["policy"]
    keys = ("points_per_hand", "ci95", "win_rate", "deal_in_rate")
    out = {f"eval_{k}": float(s[k]) for k in keys}
    if estimator == "advantage":
        from sichuan_env.agents.eval.advantage import AdvantageSum
        from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

        est = AdvantageSum(lineup, rules, seed=seed, reference="heuristic")
        adjusted = per_wall(lineup, records, walls, est.of(records))["policy"][1]
        assert adjusted is not None
        out["eval_adjusted"], out["eval_adjusted_ci95"] = mean_ci(adjusted)
    return out


ESTIMATORS = ("plain", "advantage")
"""The estimates ``evaluate_vs_heuristic`` can add."""


def say_written(run: Path, owned: Sequence[str] = RUN_FILES) -> None:
    """Print what a training run wrote: ``wrote RUN/ (best.pt, last.pt, ...)`` on stdout.

    Only the run's own files are listed (``owned``: names or glob patterns, the script's
    ``RUN_FILES``) that exist; anything else in the folder (a user's file, which
    ``--overwrite`` leaves in place) is not the run's and is not named.
    """
    try:
        found = owned_entries(Path(run), owned)
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in found)
    except OSError:
        names = []
    shown = ", ".join(n for n in names if not n.startswith(".")) or "nothing"
    print(f"wrote {run}/ ({shown})", flush=True)


__all__ = [
    "BEST",
    "ESTIMATORS",
    "RESUME_FREE",
    "RUN_FILES",
    "MetricLog",
    "add_budget_args",
    "all_or_nothing",
    "budget_left",
    "changed_settings",
    "check_counters",
    "check_optimizer",
    "check_run_budget",
    "check_state_dict",
    "check_state_matches",
    "command_line",
    "derived_seed",
    "evaluate_vs_heuristic",
    "flag_names",
    "git_commit",
    "last_sha256",
    "load_optimizer",
    "load_reference",
    "load_run",
    "read_state",
    "refuse_changed_settings",
    "run_settings",
    "save_run",
    "save_run_or_fail",
    "say_written",
    "seeded_build",
    "setup",
    "step_rng",
    "write_failure",
]
