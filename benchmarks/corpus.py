"""The fixed, seeded corpus of Sichuan hands that every hand benchmark uses.

``make_corpus(n, seed)`` returns ``uint8[n, 27]`` 14-tile hands: half dealt
from a shuffled 108-tile wall, a quarter complete (four melds and a pair, or
seven pairs), a quarter complete with one tile swapped for another (the
built half cycles through ``POOL`` distinct hands); and the
13-tile hands obtained by removing one held tile from each. Only the three
suits of Sichuan mahjong (no honours). The same ``(n, seed)`` always gives
the same bytes; ``digest`` names them in benchmark JSON.
"""

from __future__ import annotations

import hashlib

import numpy as np

POOL = 50_000
"""Built (complete and near-complete) hands are drawn from this many distinct ones."""


def _complete(rng: np.random.Generator) -> np.ndarray:
    while True:
        c = np.zeros(27, dtype=np.int64)
        suits = rng.permutation(3)[: rng.integers(1, 4)]
        if rng.random() < 0.15:  # seven pairs, quads allowed
            pairs = 0
            while pairs < 7:
                t = 9 * rng.choice(suits) + rng.integers(9)
                if c[t] <= 2:
                    c[t] += 2
                    pairs += 1
            return c
        for _ in range(4):
            s = 9 * rng.choice(suits)
            if rng.random() < 0.4:
                c[s + rng.integers(9)] += 3
            else:
                r = s + rng.integers(7)
                c[r : r + 3] += 1
        c[9 * rng.choice(suits) + rng.integers(9)] += 2
        if c.max() <= 4:
            return c


def make_corpus(n: int, seed: int = 2026) -> tuple[np.ndarray, np.ndarray]:
    """``(hands14, hands13)``, both ``uint8[n, 27]``, deterministic in ``(n, seed)``."""
    rng = np.random.default_rng(seed)
    hands = np.zeros((n, 27), dtype=np.uint8)
    n_dealt = n // 2
    walls = np.argsort(rng.random((n_dealt, 108)), axis=1)[:, :14] // 4
    np.add.at(hands, (np.repeat(np.arange(n_dealt), 14), walls.ravel()), 1)
    n_built = n - n_dealt
    unique = min(n_built, POOL)
    pool = np.zeros((unique, 27), dtype=np.uint8)
    for i in range(unique):
        c = _complete(rng)
        if i % 2:  # near-complete: swap one tile
            held = np.flatnonzero(c)
            c[rng.choice(held)] -= 1
            free = np.flatnonzero(c < 4)
            c[rng.choice(free)] += 1
        pool[i] = c
    hands[n_dealt:] = pool[np.arange(n_built) % unique]
    hands = np.ascontiguousarray(hands[rng.permutation(n)])
    # 13-tile hands: remove the r-th held tile, r uniform over the 14
    r = rng.integers(0, 14, size=n)
    drop = (np.cumsum(hands, axis=1) > r[:, None]).argmax(axis=1)
    hands13 = hands.copy()
    hands13[np.arange(n), drop] -= 1
    return hands, hands13


def digest(*arrays: np.ndarray) -> str:
    """A short SHA-256 of the corpus bytes."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]
