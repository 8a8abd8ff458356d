"""Shipped checkpoints of the learning agents, and their registration (torch stays unimported).

``bc.pt`` / ``ppo.pt`` / ``distill.pt`` (with their ``.json`` configs) are
registered as the agent names ``bc``, ``ppo`` and ``distill``; any ``.pt`` path loads through
``agents.torch_agent.load_checkpoint``. Everything is registered as
``"module:attribute"`` strings, so ``import agents`` never imports torch.
"""

from ..registry import register, register_loader

register("bc", "agents.torch_agent:load_bc")
register("ppo", "agents.torch_agent:load_ppo")
register("distill", "agents.torch_agent:load_distill")
register_loader(".pt", "agents.torch_agent:load_checkpoint")
