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
- ``evaluate_vs_heuristic``: a duplicate match of a network in one seat
  against three ``HeuristicAgent``s (``sichuan_env.agents.eval.evaluate``), points per hand
  with a 95% confidence interval.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
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
from sichuan_env.train.run_state import (
    BEST,
    check_counters,
    check_optimizer,
    load_optimizer,
    read_state,
)

from sichuan_env import RuleConfig
from sichuan_env._cli import fail
from sichuan_env._files import write_atomic
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


def git_commit(package_dir: Path | None = None) -> str:
    """The project's own commit (``-dirty`` when its tree has changes), for checkpoints.

    git runs in the package's own folder (``package_dir``, default this file's), not in
    the current directory, and its answer counts only when that folder is this
    project's checkout (the repository's top level holds ``pyproject.toml`` naming
    ``sichuan-env`` and the folder is its ``train/``): a run started elsewhere
    still records the commit, and a wheel installed inside a user's own repository
    does not record theirs. Otherwise it is ``sichuan-env==<version>`` (a wheel
    install), or ``unknown``.
    """
    here = Path(__file__).resolve().parent if package_dir is None else Path(package_dir).resolve()
    commit = _checkout_commit(here)
    if commit is not None:
        return commit
    try:
        from importlib.metadata import version

        return f"sichuan-env=={version('sichuan-env')}"
    except Exception:  # noqa: BLE001 - no metadata (a bare source tree)
        return "unknown"


def _checkout_commit(here: Path) -> str | None:
    """The commit of the checkout whose ``train/`` is ``here``, else None."""

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["git", "-C", str(here), *args], capture_output=True,
                                  text=True, check=False, timeout=30)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None

    top = git("rev-parse", "--show-toplevel")
    if top is None or top.returncode or not top.stdout.strip():
        return None
    root = Path(top.stdout.strip()).resolve()
    try:
        named = 'name = "sichuan-env"' in (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        named = False
    if not named or here != root / "train":
        return None
    rev, dirty = git("rev-parse", "HEAD"), git("status", "--porcelain")
    if rev is None or rev.returncode or dirty is None:
        return None
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def command_line(module: str | None = None, argv: list[str] | None = None) -> str:
    """The command that started this process (``python -m <module> ...``), for checkpoint configs.

    Without ``module``, the name of the script that ran (``sys.argv[0]``'s stem).
    ``argv``: the arguments ``main(argv)`` was called with, when a driver called
    it (``sichuan_env.train.policy.exit``); the process's own otherwise.
    """
    if module is None:
        module = Path(sys.argv[0]).stem if sys.argv else "?"
    return " ".join(["python -m", module, *(sys.argv[1:] if argv is None else argv)])


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
    finite: a diverged run never replaces the last good checkpoint.

    Raises:
        ValueError: non-finite weights, optimizer state or counters (``run`` unchanged).
    """
    what = f"not saving {run / name}.pt"
    check_finite_module(net, what)
    check_optimizer(opt, what)
    for key, v in counters.items():
        if isinstance(v, float) and math.isnan(v):
            raise ValueError(f"{what}: counter {key!r} is NaN")
    path = save_checkpoint(run / f"{name}.pt", net, meta)
    # on the CPU whatever the device: a run trained on a GPU resumes on a CPU-only machine
    state = {"optimizer": cpu_state(opt.state_dict()), "counters": counters}
    write_atomic(run / "state.pt", lambda f: torch.save(state, f))
    return path


def save_run_or_fail(
    prog: str, run_dir: Path, net: PolicyNet, opt: Any, counters: dict, meta: dict,
    name: str = "last",
) -> None:  # fmt: skip
    """``save_run``; non-finite weights or optimizer state end the run (exit 1), files untouched."""
    try:
        save_run(run_dir, net, opt, counters, meta, name)
    except ValueError as exc:
        fail(
            prog,
            f"{exc} (the run diverged; try a smaller --lr); {run_dir} keeps its last good files",
        )


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
    net: PolicyNet, walls: int, rules: RuleConfig, seed: int = 12345
) -> dict[str, float]:
    """The greedy policy in one seat against three heuristics, duplicate over ``walls``.

    Returns:
        ``points_per_hand``, ``ci95``, ``win_rate``, ``deal_in_rate`` of the policy.
    """
    was_training = net.training
    agent = TorchAgent(net, name="policy", greedy=True, seed=seed)
    lineup = ["policy", "heuristic", "heuristic", "heuristic"]
    agents = {"policy": agent, **make_lineup_agents(["heuristic"] * 4, seed)}
    records = play_duplicate(lineup, walls, rules, seed, progress=False, agents=agents)
    net.train(was_training)
    s = summarize(lineup, records, walls)["policy"]
    keys = ("points_per_hand", "ci95", "win_rate", "deal_in_rate")
    return {f"eval_{k}": float(s[k]) for k in keys}


def say_written(run: Path) -> None:
    """Print where a training run wrote: ``wrote RUN/ (best.pt, last.pt, ...)`` on stdout."""
    try:
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in Path(run).iterdir())
    except OSError:
        names = []
    shown = ", ".join(n for n in names if not n.startswith(".")) or "nothing"
    print(f"wrote {run}/ ({shown})", flush=True)


__all__ = [
    "BEST",
    "RUN_FILES",
    "MetricLog",
    "check_counters",
    "check_optimizer",
    "check_state_dict",
    "command_line",
    "evaluate_vs_heuristic",
    "git_commit",
    "load_optimizer",
    "load_reference",
    "load_run",
    "read_state",
    "save_run",
    "say_written",
    "setup",
]
