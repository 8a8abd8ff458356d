"""What the training scripts share: threads and seeds, metric logs, run checkpoints, evaluation.

- ``setup(threads, seed)``: torch threads (keep 1-2 on a shared CPU) and every RNG.
- ``MetricLog``: one JSON object per line (``metrics.jsonl``), mirrored to
  TensorBoard when asked and installed.
- ``save_run`` / ``load_run``: a run's ``last.pt`` (+ JSON, see
  ``sichuan_env.agents.nn.torch_agent``) and ``state.pt`` (optimizer and counters), for ``--resume``.
- ``evaluate_vs_heuristic``: a duplicate match of a network in one seat
  against three ``HeuristicAgent``s (``sichuan_env.agents.eval.evaluate``), points per hand
  with a 95% confidence interval.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_duplicate, summarize
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.nn.torch_agent import (
    TorchAgent,
    check_state_dict,
    load_network,
    save_checkpoint,
)

from sichuan_env import RuleConfig
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


def git_commit() -> str:
    """The current commit (``-dirty`` when the tree has changes), or ``unknown``."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    if rev.returncode:
        return "unknown"
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def command_line(module: str | None = None) -> str:
    """The command that started this process (``python -m <module> ...``), for checkpoint configs.

    Without ``module``, the name of the script that ran (``sys.argv[0]``'s stem).
    """
    if module is None:
        module = Path(sys.argv[0]).stem if sys.argv else "?"
    return " ".join(["python -m", module, *sys.argv[1:]])


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


def save_run(
    run: Path, net: PolicyNet, opt: torch.optim.Optimizer, counters: dict, meta: dict, name="last"
) -> Path:
    """Save ``run/<name>.pt`` (+ JSON) and ``run/state.pt`` (optimizer, counters)."""
    path = save_checkpoint(run / f"{name}.pt", net, meta)
    tmp = run / "state.pt.tmp"
    torch.save({"optimizer": opt.state_dict(), "counters": counters}, tmp)
    tmp.replace(run / "state.pt")
    return path


def load_run(run: Path, opt_factory) -> tuple[PolicyNet, torch.optim.Optimizer, dict, dict]:
    """``(net, optimizer, counters, config)`` of a run saved by ``save_run`` (for ``--resume``).

    Raises:
        ValueError: a missing or invalid checkpoint or state file.
    """
    net, doc = load_network(run / "last.pt")
    net.train()
    state_file = run / "state.pt"
    if not state_file.is_file():
        raise ValueError(f"cannot resume: {state_file} is missing")
    try:
        state = torch.load(state_file, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        raise ValueError(f"cannot resume: {state_file} cannot be read: {exc}") from None
    if not isinstance(state, dict) or not {"optimizer", "counters"} <= set(state):
        raise ValueError(f"cannot resume: {state_file} is not a training state")
    opt = opt_factory(net)
    try:
        opt.load_state_dict(state["optimizer"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot resume: optimizer state does not fit: {exc}") from None
    return net, opt, dict(state["counters"]), doc


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


__all__ = [
    "MetricLog",
    "check_state_dict",
    "command_line",
    "evaluate_vs_heuristic",
    "git_commit",
    "load_reference",
    "load_run",
    "save_run",
    "setup",
]
