"""Hypothesis strategies for Sichuan hands: random, complete and near-complete."""

from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

MELD_KINDS = ("pong", "kong", "concealed_kong")


def _counts(tiles) -> np.ndarray:
    return np.bincount(np.asarray(tiles, dtype=np.int64), minlength=27).astype(np.uint8)


@st.composite
def random_hand(draw, size: int | None = None, suits: tuple[int, ...] = (0, 1, 2)):
    """`size` tiles drawn without replacement from the 108 tiles of the given suits."""
    n = draw(st.sampled_from([1, 2, 4, 5, 7, 8, 10, 11, 13, 14])) if size is None else size
    wall = [t for t in range(27) if t // 9 in suits for _ in range(4)]
    picks = draw(st.lists(st.integers(0, len(wall) - 1), min_size=n, max_size=n, unique=True))
    return _counts([wall[i] for i in picks])


@st.composite
def complete_hand(draw, melds: int | None = None, suits: tuple[int, ...] | None = None):
    """A complete concealed part of `melds` melds + a pair (counts <= 4)."""
    m = draw(st.integers(0, 4)) if melds is None else melds
    if suits is None:
        k = draw(st.sampled_from([1, 2, 2, 3]))
        suits = tuple(sorted(draw(st.permutations([0, 1, 2]))[:k]))
    c = np.zeros(27, dtype=np.int64)
    for _ in range(m):
        s = draw(st.sampled_from(suits))
        if draw(st.booleans()):
            r = draw(st.integers(0, 8))
            c[9 * s + r] += 3
        else:
            r = draw(st.integers(0, 6))
            c[9 * s + r : 9 * s + r + 3] += 1
    s = draw(st.sampled_from(suits))
    c[9 * s + draw(st.integers(0, 8))] += 2
    assume(c.max() <= 4)
    return c.astype(np.uint8)


@st.composite
def seven_pairs_hand(draw, suits: tuple[int, ...] = (0, 1, 2)):
    """Seven pairs, possibly with quads (two pairs of one tile)."""
    tiles = [t for t in range(27) if t // 9 in suits]
    c = np.zeros(27, dtype=np.int64)
    pairs = 0
    while pairs < 7:
        t = draw(st.sampled_from(tiles))
        if c[t] < 4:
            c[t] += 2
            pairs += 1
    return c.astype(np.uint8)


@st.composite
def near_complete(draw):
    """A complete 3k+2 part with one tile removed (3k+1) or one tile swapped (3k+2)."""
    c = draw(st.one_of(complete_hand(), seven_pairs_hand()))
    c = c.astype(np.int64)
    held = np.flatnonzero(c)
    c[draw(st.sampled_from(list(held)))] -= 1
    if draw(st.booleans()):
        free = np.flatnonzero(c < 4)
        c[draw(st.sampled_from(list(free)))] += 1
    return c.astype(np.uint8)


def any_hand():
    """Random, complete, seven-pairs, near-complete and one-suit hands."""
    return st.one_of(
        random_hand(),
        random_hand(size=14),
        random_hand(size=13),
        random_hand(suits=(0,)),
        complete_hand(),
        complete_hand(suits=(1,)),
        seven_pairs_hand(),
        seven_pairs_hand(suits=(2,)),
        near_complete(),
    )


@st.composite
def hand_with_melds(draw, concealed_size: int = 14):
    """(concealed counts, melds) with exposed melds and quads; total copies <= 4.

    concealed_size 14 gives winning-size parts (14 - 3 per meld), 13 tenpai-size.
    """
    suits = tuple(sorted(draw(st.permutations([0, 1, 2]))[: draw(st.sampled_from([1, 2, 2, 3]))]))
    n_melds = draw(st.integers(0, 4))
    held = np.zeros(27, dtype=np.int64)
    melds = []
    for _ in range(n_melds):
        choices = [t for t in range(27) if t // 9 in suits and held[t] == 0]
        t = draw(st.sampled_from(choices))
        kind = draw(st.sampled_from(MELD_KINDS))
        held[t] += 3 if kind == "pong" else 4
        melds.append((kind, t))
    need = concealed_size - 3 * n_melds
    if draw(st.booleans()) and concealed_size == 14:
        # the concealed part of a win holds the melds not yet exposed, and the pair
        c = draw(complete_hand(melds=4 - n_melds, suits=suits)).astype(np.int64)
        if c.sum() != need or (c + held).max() > 4:
            c = None
    else:
        c = None
    if c is None:
        pool = [t for t in range(27) if t // 9 in suits for _ in range(4 - held[t])]
        picks = draw(
            st.lists(st.integers(0, len(pool) - 1), min_size=need, max_size=need, unique=True)
        )
        c = np.bincount([pool[i] for i in picks], minlength=27)
    return c.astype(np.uint8), melds
