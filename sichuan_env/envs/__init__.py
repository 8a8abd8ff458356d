"""RL adapters over the engine: the PettingZoo AEC env and the batched vector env."""
