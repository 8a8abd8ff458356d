"""PPO from a random network, no BC and no heuristic prior: the curve every RL user tries first."""
