"""What makes ``--resume`` the undisturbed run: seeds by position, settings, budgets.

- ``seeded_build`` / ``step_rng`` / ``derived_seed``: network initialisation and
  per-epoch (per-step) randomness that depend on ``--seed`` and the position in the
  run only, never on what ran before in the process, so a run resumed at an epoch
  draws what the uninterrupted run draws from there on.
- ``run_settings`` / ``refuse_changed_settings``: the arguments that decide a run's
  result (every one but ``RESUME_FREE`` and the script's start-only options) are
  recorded in its checkpoint; a ``--resume`` with other values is refused, naming
  the flags (``--lr 0.001 (now 0.0005)``), never applied half-way.
- ``add_budget_args`` / ``budget_left`` / ``check_run_budget``: ``--minutes`` (this
  call's wall-clock budget, afresh on each ``--resume``) and ``--run-minutes`` (the
  whole run's, summed over every call from the training time kept in ``state.pt``).

``sichuan_env.train.common`` re-exports every name.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from sichuan_env._cli import fail, float_arg

T = TypeVar("T")


def derived_seed(*parts: int) -> int:
    """A 63-bit seed determined by ``parts`` (non-negative ints: a seed, an epoch, a tag)."""
    words = np.random.SeedSequence([int(x) for x in parts]).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


def seeded_build(seed: int, build: Callable[[], T]) -> T:
    """``build()`` (a new network) with torch's CPU generator seeded by ``seed``, restored after.

    A network's initial weights then depend on ``--seed`` alone, not on what ran before
    in the process (agents made, data played): a resumed run that skips that work
    starts the same network.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def step_rng(seed: int, *position: int) -> np.random.Generator:
    """A numpy generator for one epoch (step) of a run; torch (every device) reseeded to match.

    Both depend on ``--seed`` and ``position`` (the epoch, or epoch and step) only, so an
    uninterrupted run and one resumed at that position draw the same shuffles (and
    dropout masks) from there on.
    """
    torch.manual_seed(derived_seed(seed, *position, 0x7E5))
    return np.random.default_rng([seed, *position])


RESUME_FREE = frozenset({
    "run", "out", "resume", "overwrite", "epochs", "iterations", "rounds", "minutes",
    "run_minutes", "threads", "device", "amp", "quiet", "progress", "tensorboard",
})  # fmt: skip
"""Arguments a ``--resume`` may change: where, how long, on what hardware, how verbose.

``--epochs`` / ``--iterations`` / ``--rounds`` extend a run (a run stopped early and
continued equals one that ran that long), the budgets only decide where it stops,
``--threads`` / ``--device`` / ``--amp`` are the platform's (results then agree to the
platform's rounding only). Everything else changes what the run computes."""


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (paths as text, tuples as lists)."""
    return json.loads(json.dumps(value, default=str))


def run_settings(args: argparse.Namespace, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The arguments that decide a run's result: every one but ``RESUME_FREE`` and ``skip``.

    ``skip``: options that only shape a new run (its network's architecture, ``--init``),
    which a resumed run takes from its checkpoint. Values are JSON (paths as text), for
    the checkpoint's metadata.
    """
    drop = RESUME_FREE | set(skip)
    return {k: _plain(v) for k, v in sorted(vars(args).items()) if k not in drop}


def flag_names(p: argparse.ArgumentParser) -> dict[str, str]:
    """Each argument's ``dest`` and the option that sets it (``--no-claims`` for ``claims``)."""
    out: dict[str, str] = {}
    for action in p._actions:  # argparse has no public list
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs:
            out.setdefault(action.dest, longs[0])
    return out


def changed_settings(
    stored: Mapping[str, Any], current: Mapping[str, Any], p: argparse.ArgumentParser | None = None
) -> list[str]:
    """``--flag WAS (now NOW)`` for each setting in both ``stored`` and ``current`` that differs.

    A key ``stored`` lacks (a run made before the setting existed) is not compared.
    """
    names = flag_names(p) if p is not None else {}
    out = []
    for key in sorted(set(stored) & set(current)):
        was, now = _plain(stored[key]), _plain(current[key])
        if was != now:
            flag = names.get(key, "--" + key.replace("_", "-"))
            out.append(f"{flag} {_shown(was)} (now {_shown(now)})")
    return out


def _shown(value: Any) -> str:
    text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def refuse_changed_settings(
    prog: str,
    p: argparse.ArgumentParser,
    run: Path,
    stored: Mapping[str, Any],
    current: Mapping[str, Any],
) -> None:
    """End a ``--resume`` (``fail``, exit 1) whose settings differ from the run's, naming them.

    A resumed run continues the run it was, so it equals the uninterrupted run; a
    setting that would change the result is refused, never applied half-way.
    """
    diff = changed_settings(stored, current, p)
    if diff:
        fail(prog, f"--resume: {run} was made with other settings: {'; '.join(diff)}. A resumed "
                   "run continues the same run: give its settings, or start another --run")  # fmt: skip


def refuse_changed_file(
    prog: str, p: argparse.ArgumentParser, run: Path, path: Path, current: Mapping[str, Any]
) -> None:
    """``refuse_changed_settings`` against the settings a run wrote to ``path`` (its JSON).

    A file that cannot be read, or holds no settings object, ends the resume too (one line).
    """
    try:
        stored = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        fail(prog, f"cannot resume: {path} cannot be read ({exc})")
    if not isinstance(stored, dict):
        fail(prog, f"cannot resume: {path} holds no run settings")
    refuse_changed_settings(prog, p, run, {k: stored.get(k) for k in current}, current)


def add_budget_args(p: argparse.ArgumentParser, minutes: float, unit: str = "epoch") -> None:
    """``--minutes`` (this call's wall-clock budget) and ``--run-minutes`` (the run's, all calls)."""
    p.add_argument("--minutes", type=float_arg(0, 10**6), default=minutes,
                   help=f"this call's wall-clock budget in minutes ({minutes:g}): a --resume gets "
                        f"it afresh; checked after each {unit}, so at least one {unit} runs")  # fmt: skip
    p.add_argument("--run-minutes", type=float_arg(0, 10**6), default=None, metavar="MINUTES",
                   help="the whole run's wall-clock budget, summed over every --resume (the "
                        "training time kept in state.pt); the run stops when either budget is "
                        "spent (default: none)")  # fmt: skip


def budget_left(args: argparse.Namespace, started: float, used_before_s: float) -> bool:
    """Whether ``--minutes`` (since ``started``, a ``time.time()``) and ``--run-minutes`` allow more.

    ``used_before_s``: the run's training seconds before this call (its counters).
    """
    elapsed = time.time() - started
    if elapsed >= args.minutes * 60:
        return False
    run_minutes = getattr(args, "run_minutes", None)
    return run_minutes is None or used_before_s + elapsed < run_minutes * 60


def check_run_budget(prog: str, args: argparse.Namespace, used_s: float) -> None:
    """End a ``--resume`` whose run has spent its ``--run-minutes`` already (exit 1)."""
    run_minutes = getattr(args, "run_minutes", None)
    if run_minutes is not None and used_s >= run_minutes * 60:
        fail(prog, f"--resume: the run has trained {used_s / 60:.2f} minutes, its --run-minutes "
                   f"{run_minutes:g} are spent: raise --run-minutes to continue it")  # fmt: skip
