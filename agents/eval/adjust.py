"""The luck adjustment in the evaluation tools (``sichuan-eval``, ``sichuan-ladder``).

The tools share: the options (``--value-model``, ``--no-adjust``), the model for a
preset with a one-line reason when there is none (``model_for``), the
corrections of a match's records (``corrections_of``), the per-wall samples in
the JSON (``per_wall_doc``) and the stopping rule of ``--target-ci``
(``target_stop``). The corrections come from the records alone, so they are the
same for matches played in one process, on Ray, or by agents that read the
engine state (the searches).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from sichuan_env import RuleConfig

SHIPPED = "luck"
"""The value model used by default: the shipped ``agents/checkpoints/luck.pt``."""


def add_luck_args(p: argparse.ArgumentParser) -> None:
    """``--value-model SPEC`` and ``--no-adjust``."""
    p.add_argument(
        "--value-model", default=SHIPPED, metavar="SPEC",
        help="the luck adjustment's value model: 'luck' (shipped) or a .pt path "
             "(python -m sichuan_env.train.value); the estimates stay plain where it "
             "does not cover the preset",
    )  # fmt: skip
    p.add_argument(
        "--no-adjust", action="store_true",
        help="plain estimates only (no luck-adjusted points per hand)",
    )  # fmt: skip


def model_for(args: argparse.Namespace, rules: RuleConfig, quiet: bool = False) -> Any:
    """The value model for ``rules`` (``LuckModel``) or None, saying why on stderr when None.

    A missing torch, a damaged file or a model of other rules gives None and one line;
    an explicit ``--value-model`` that cannot be used is an error (exit 2) instead.
    """
    if args.no_adjust:
        return None
    try:
        from sichuan_env.agents.eval.luck import load_for
    except ImportError as exc:  # torch missing: the adjustment needs the [train] extra
        print(f"no luck adjustment: {exc} (pip install -e '.[train]')", file=sys.stderr)
        return None
    model, why = load_for(rules, args.value_model)
    if model is None and args.value_model != SHIPPED:
        raise SystemExit(f"error: --value-model: {why}")
    if model is None or not quiet:
        print(why, file=sys.stderr)
    return model


class Corrections:
    """The corrections of a growing list of match records, each record's computed once."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.seconds = 0.0
        self._done: list[np.ndarray] = []
        self._n = 0

    def of(self, records: list[tuple[int, int, dict]]) -> np.ndarray:
        """``float[len(records), 4]``: each hand's and seat's luck (``records`` only grows)."""
        if self._n < len(records):
            t0 = time.perf_counter()
            self._done.append(self.model.corrections([r for _, _, r in records[self._n :]]).total)
            self._n = len(records)
            self.seconds += time.perf_counter() - t0
        return np.concatenate(self._done) if self._done else np.zeros((0, 4))


def per_wall_doc(samples: dict[str, tuple[np.ndarray, np.ndarray | None]]) -> dict[str, Any]:
    """The JSON of ``match_stats.per_wall``: per agent, ``plain`` and ``adjusted`` lists."""
    return {
        name: {"plain": [round(float(x), 6) for x in plain],
               "adjusted": None if adj is None else [round(float(x), 6) for x in adj]}
        for name, (plain, adj) in samples.items()
    }  # fmt: skip


def target_stop(
    lineup: list[str], corrections: Corrections | None, target: float,
    log: Callable[[str], None] | None = None,
) -> Callable[[list[tuple[int, int, dict]]], bool]:  # fmt: skip
    """The ``stop`` of ``play_duplicate`` for ``--target-ci``: every agent's CI at most ``target``.

    The CI is the adjusted one with ``corrections``, else the plain one.
    """

    def stop(records: list[tuple[int, int, dict]]) -> bool:
        walls = max(w for w, _, _ in records) + 1
        corr = corrections.of(records) if corrections is not None else None
        samples = per_wall(lineup, records, walls, corr)
        worst = max(
            mean_ci(adj if adj is not None else plain)[1] for plain, adj in samples.values()
        )
        if log is not None:
            log(f"--target-ci: {walls} walls, widest 95% CI {worst:.4f} (target {target})")
        return walls >= 2 and worst <= target

    return stop
