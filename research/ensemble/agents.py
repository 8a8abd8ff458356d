"""The screen's candidates: networks fitted to noisy search labels, their logits averaged.

Lineup entries (``sichuan-eval --lineup research.ensemble.agents:ens6 heuristic ...``):

- ``ens6``: the library's ``ensemble6``, the shipped ``exit-valueleaf`` and the five
  networks of ``research/oracle_labels`` (round 1, round 2 on both rounds' rows,
  rounds 2 and 3 on their own rows, the after-win round);
- ``ens6_guard``: ``ens6`` under ``distill-guard``'s deal-in guard (the library's
  ``ensemble6-guard``, now ``strongest-net``);
- ``ens3``: ``exit-valueleaf``, and rounds 2 and 3 on their own rows;
- ``ens3_guard``: ``ens3`` under the same guard.

The screen read the five oracle-label networks from ``runs/``; the shipped checkpoints
(``agents/checkpoints/oracle_*.pt``) are those files, copied byte for byte.
"""

from __future__ import annotations

from sichuan_env.agents.belief.guard import GuardedAgent, _shipped_guard
from sichuan_env.agents.nn.ensemble import EnsembleAgent, load_ensemble, load_ensemble6

ENS3 = ("exit_valueleaf", "oracle_r2", "oracle_r3")


def ens6(seed: int | None = None) -> EnsembleAgent:
    """``exit-valueleaf`` and the five oracle-label networks, their logits averaged."""
    return load_ensemble6(seed)


def ens3(seed: int | None = None) -> EnsembleAgent:
    """``exit-valueleaf`` and rounds 2 and 3 fitted on their own rows, logits averaged."""
    return load_ensemble(ENS3, seed, name="ens3")


def ens6_guard(seed: int | None = None) -> GuardedAgent:
    """``ens6`` under ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    return _shipped_guard(ens6(seed))


def ens3_guard(seed: int | None = None) -> GuardedAgent:
    """``ens3`` under ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    return _shipped_guard(ens3(seed))
