"""``RandomAgent``: uniform over the legal actions of the mask."""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.base import BaseAgent, check_seed


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions; ``seed`` makes it reproducible.

    It never reads the observation, but checks it like every agent (any version-1
    shape), so a mistake in the caller's arrays shows up here too.

    Args:
        seed: seed of the agent's generator (None: fresh entropy).

    Raises:
        ValueError: for a seed that is not None or a non-negative integer.
    """

    name = "random"
    obs_version = 1

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator (``None``: keep the current stream)."""
        seed = check_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def _act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(mask)))

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        noise = self.rng.random(masks.shape, dtype=np.float32) + 1.0
        return (noise * (masks > 0)).argmax(axis=1)
