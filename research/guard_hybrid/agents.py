"""The candidates: the after-win hybrid of ``strongest`` on other networks.

``strongest`` is ``distill-search64-after-win``: ``distill`` everywhere, a 64-rollout
search at its own turns once a seat has won. These put the same search on the two
networks confirmed above ``distill`` (``research/leaf_rounds``): ``exit-valueleaf`` and
``exit-valueleaf-guard`` (``strongest-net``). Lineup entries:
``research.guard_hybrid.agents:guard_search64_after_win`` and the like.
"""

from __future__ import annotations

from sichuan_env.agents.search.hybrid import HybridAgent


def guard_search64_after_win(seed: int | None = None) -> HybridAgent:
    """``exit-valueleaf-guard`` everywhere, the 64-rollout search once a seat has won."""
    return HybridAgent(seed, net="exit-valueleaf-guard", samples=64)


def valueleaf_search64_after_win(seed: int | None = None) -> HybridAgent:
    """``exit-valueleaf`` everywhere, the 64-rollout search once a seat has won."""
    return HybridAgent(seed, net="exit-valueleaf", samples=64)
