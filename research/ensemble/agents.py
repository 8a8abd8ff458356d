"""The screen's candidates: networks fitted to noisy search labels, their logits averaged.

Lineup entries (``sichuan-eval --lineup research.ensemble.agents:ens6 heuristic ...``):

- ``ens6``: the library's ``ensemble6``, the shipped ``exit-valueleaf`` and the five
  networks of ``research/oracle_labels`` (round 1, round 2 on both rounds' rows,
  rounds 2 and 3 on their own rows, the after-win round);
- ``ens6_guard``: ``ens6`` under ``distill-guard``'s deal-in guard (the library's
  ``ensemble6-guard``, now ``strongest-net``);
- ``ens3``: ``exit-valueleaf``, and rounds 2 and 3 on their own rows;
- ``ens3_guard``: ``ens3`` under the same guard;
- ``ens6guard_search64_after_win``: ``strongest`` (``distill-search64-after-win``) with
  ``ensemble6-guard`` in place of ``distill``;
- ``ens6_guard_t{T}_k{K}[_s1]``: ``ens6`` under the same deal-in guard at another setting
  (``GUARD_GRID``: threshold ``T``/100, keep ``K``/10, slack 1 where named), the guard
  re-tuned for the ensemble (``run.sh guard-screen``);
- ``ens6guard_search128_after_win``: the same with 128 rollouts a candidate;
- ``student_guard``: one network fitted to ``ensemble6``'s mean logits (``distill.py``;
  read from ``runs/ens6-student/best.pt``, or ``$SICHUAN_ENSEMBLE_STUDENT``) under the guard.

The screen read the five oracle-label networks from ``runs/``; the shipped checkpoints
(``agents/checkpoints/oracle_*.pt``) are those files, copied byte for byte.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from sichuan_env.agents.belief.guard import GuardedAgent, _shipped_guard, load_ensemble6_guard
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.nn.ensemble import EnsembleAgent, load_ensemble, load_ensemble6
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.agents.search.hybrid import HybridAgent, ensemble6_guard_search64_after_win

ENS3 = ("exit_valueleaf", "oracle_r2", "oracle_r3")


def ens6(seed: int | None = None) -> EnsembleAgent:
    """``exit-valueleaf`` and the five oracle-label networks, their logits averaged."""
    return load_ensemble6(seed)


def ens3(seed: int | None = None) -> EnsembleAgent:
    """``exit-valueleaf`` and rounds 2 and 3 fitted on their own rows, logits averaged."""
    return load_ensemble(ENS3, seed, name="ens3")


def ens6_guard(seed: int | None = None) -> GuardedAgent:
    """``ens6`` under ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    return load_ensemble6_guard(seed)


def ens3_guard(seed: int | None = None) -> GuardedAgent:
    """``ens3`` under ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    return _shipped_guard(ens3(seed))


def ens6_guard_setting(
    seed: int | None = None, threshold: float = 0.1, keep: float = 0.9, slack: int = 0
) -> GuardedAgent:
    """``ens6`` under the shipped belief model's deal-in guard at ``(threshold, slack, keep)``."""
    model = BeliefModel.load("belief")
    return GuardedAgent(model, threshold=threshold, slack=slack, keep=keep, base=ens6(seed))


GUARD_GRID: dict[str, tuple[float, float, int]] = {
    "t05_k9": (0.05, 0.9, 0), "t15_k9": (0.15, 0.9, 0), "t20_k9": (0.2, 0.9, 0),
    "t10_k8": (0.1, 0.8, 0), "t15_k8": (0.15, 0.8, 0), "t20_k8": (0.2, 0.8, 0),
    "t10_k10": (0.1, 1.0, 0), "t10_k9_s1": (0.1, 0.9, 1),
}  # fmt: skip
"""The guard settings screened against the registered one (t=0.1, k=0.9, s=0): name -> (t, k, s)."""

for _tag, (_t, _k, _s) in GUARD_GRID.items():
    globals()[f"ens6_guard_{_tag}"] = functools.partial(
        ens6_guard_setting, threshold=_t, keep=_k, slack=_s
    )


def ens6guard_search64_after_win(seed: int | None = None) -> HybridAgent:
    """``ensemble6-guard`` everywhere, the 64-rollout search once a seat has won.

    The library's ``ensemble6-guard-search64-after-win`` (now ``strongest``).
    """
    return ensemble6_guard_search64_after_win(seed)


def ens6guard_search128_after_win(seed: int | None = None) -> HybridAgent:
    """``strongest`` (``ensemble6-guard-search64-after-win``) with 128 rollouts a candidate."""
    return HybridAgent(seed, net="ensemble6-guard", samples=128)


def student_guard(seed: int | None = None) -> GuardedAgent:
    """``distill.py``'s student of ``ensemble6`` under ``distill-guard``'s deal-in guard.

    Raises:
        ValueError: the student's checkpoint is not there (``distill.py`` makes it).
    """
    path = Path(os.environ.get("SICHUAN_ENSEMBLE_STUDENT", "runs/ens6-student/best.pt"))
    if not path.is_file():
        raise ValueError(f"{path} is missing: python -m research.ensemble.distill makes it")
    return _shipped_guard(TorchAgent.load(path, seed))
