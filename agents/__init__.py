"""Baseline agents for sichuan_env: they act from (observation, action mask).

``RandomAgent`` plays uniformly among the legal actions; ``HeuristicAgent`` is a
rule-based player (定缺 on its weakest suit, void tiles first, shanten and
ukeire discards, always wins). Both offer ``act`` (one decision) and
``act_batch`` (many, for ``VectorEnv``). ``agents.evaluate`` runs duplicate
matches between them.
"""

from .heuristic import HeuristicAgent
from .random_agent import RandomAgent

__all__ = ["HeuristicAgent", "RandomAgent"]
