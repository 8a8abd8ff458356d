"""Agents for sichuan_env: they act from (observation, action mask).

Every agent follows the ``Agent`` protocol (``agents.base``): a ``name``, the
``obs_version`` it reads, ``act`` (one decision), ``act_batch`` (many, for
``VectorEnv``) and optionally ``reset(seed)``. ``make_agent`` resolves a
registered name or a checkpoint path (``agents.registry``), which is how the
CLIs pick agents. Built in: ``RandomAgent`` (uniform among the legal actions)
and ``HeuristicAgent`` (a rule-based player: 定缺 on its weakest suit, void
tiles first, shanten and ukeire discards, always wins). ``agents.evaluate``
runs duplicate matches between any of them.
"""

from .base import Agent, BaseAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .registry import available, make_agent, register, register_loader

__all__ = [
    "Agent",
    "BaseAgent",
    "HeuristicAgent",
    "RandomAgent",
    "available",
    "make_agent",
    "register",
    "register_loader",
]
