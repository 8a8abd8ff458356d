"""Agents for sichuan_env: they act from (observation, action mask).

Every agent follows the ``Agent`` protocol (``sichuan_env.agents.base``): a ``name``, the
``obs_version`` it reads, ``act`` (one decision), ``act_batch`` (many, for
``VectorEnv``) and optionally ``reset(seed)``. ``make_agent`` resolves a
registered name or a checkpoint path (``sichuan_env.agents.registry``), which is how the
CLIs pick agents. Built in: ``RandomAgent`` (uniform among the legal actions)
and ``HeuristicAgent`` (a rule-based player: 定缺 on its weakest suit, void
tiles first, shanten and ukeire discards, always wins). ``sichuan_env.agents.eval.evaluate``
runs duplicate matches between any of them.
"""

from sichuan_env.agents.base import Agent, BaseAgent
from sichuan_env.agents.registry import available, make_agent, register, register_loader
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.agents.rule_based.random_agent import RandomAgent

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
