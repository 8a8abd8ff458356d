"""Determinized rollout search over the engine state, and the agent that plays it."""
