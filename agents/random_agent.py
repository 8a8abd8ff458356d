"""``RandomAgent``: uniform over the legal actions of the mask."""

from __future__ import annotations

import numpy as np


class RandomAgent:
    """Picks uniformly among the legal actions; ``seed`` makes it reproducible."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """A uniformly random legal action (``observation`` is not used)."""
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask")
        return int(self.rng.choice(legal))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row of ``masks``."""
        noise = self.rng.random(masks.shape, dtype=np.float32) + 1.0
        return (noise * (masks > 0)).argmax(axis=1)
