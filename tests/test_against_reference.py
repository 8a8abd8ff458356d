"""Kernels == the slow reference on random and constructed hands (docs/rules.md §5)."""

import numpy as np
import pytest
import reference as R
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import any_hand, complete_hand, near_complete, random_hand, seven_pairs_hand

from sichuan_env import is_win, is_win_batch, shanten, shanten_batch, waits, waits_batch

VOIDS = st.sampled_from([None, 0, 1, 2])


def _check(h: np.ndarray, void) -> None:
    n = int(h.sum())
    if n % 3 == 2:
        assert is_win(h) == R.is_win(h), h
    if n % 3 == 1:
        assert list(waits(h, void)) == R.waits(h, void), (h, void)
    if n % 3:
        assert shanten(h, void) == R.shanten(h, void), (h, void)


@settings(max_examples=6000)
@given(any_hand(), VOIDS)
def test_constructed_and_random_hands(h, void):
    _check(h, void)


@settings(max_examples=1500)
@given(near_complete(), VOIDS)
def test_near_complete_hands(h, void):
    _check(h, void)


@settings(max_examples=1000)
@given(st.one_of(complete_hand(), seven_pairs_hand()))
def test_complete_hands_are_wins_with_shanten_minus_one(h):
    assert is_win(h)
    assert shanten(h) == -1


@settings(max_examples=500)
@given(random_hand(size=13, suits=(0,)))
def test_one_suit_hands(h):
    _check(h, None)


def _corpus(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        size = int(rng.choice([13, 14, 13, 14, 10, 11, 7, 8, 4, 5]))
        suits = rng.choice([1, 2, 2, 3])
        pool = np.repeat(np.sort(rng.permutation(3)[:suits]) * 9, 9) + np.tile(np.arange(9), suits)
        pool = np.repeat(pool, 4)
        tiles = rng.permutation(pool)[:size]
        out.append(np.bincount(tiles, minlength=27).astype(np.uint8))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_seeded_random_corpus(seed):
    # 4 x 3,500 hands of 1-3 suits and every size, each with a random void
    rng = np.random.default_rng(100 + seed)
    for h in _corpus(3500, seed):
        _check(h, [None, 0, 1, 2][int(rng.integers(4))])


def test_batch_equals_single():
    hands = _corpus(3000, 99)
    voids = np.random.default_rng(5).integers(-1, 3, size=len(hands)).astype(np.int8)
    h14 = np.stack([h for h in hands if h.sum() % 3 == 2])
    assert is_win_batch(h14).tolist() == [is_win(h) for h in h14]
    h13 = np.stack([h for h in hands if h.sum() % 3 == 1])
    v13 = voids[: len(h13)]
    got = waits_batch(h13, v13)
    for row, h, v in zip(got, h13, v13, strict=True):
        assert np.flatnonzero(row).tolist() == list(waits(h, None if v < 0 else int(v)))
    allh = np.stack(hands)
    assert shanten_batch(allh, voids).tolist() == [
        shanten(h, None if v < 0 else int(v)) for h, v in zip(allh, voids, strict=True)
    ]
    assert shanten_batch(allh, "p").tolist() == [shanten(h, "p") for h in allh]


MIRROR = np.concatenate([np.arange(8, -1, -1) + 9 * s for s in range(3)])


@settings(max_examples=1500)
@given(any_hand(), st.permutations([0, 1, 2]), st.booleans(), VOIDS)
def test_suit_permutation_and_rank_mirror_change_nothing(h, perm, mirror, void):
    g = h.reshape(3, 9)[list(perm)].reshape(27)
    if mirror:
        g = g[MIRROR]
    g = np.ascontiguousarray(g)
    # perm[new] = old: the void suit moves to where its suit went
    gvoid = None if void is None else perm.index(void)
    n = int(h.sum())
    if n % 3 == 2:
        assert is_win(g) == is_win(h)
    if n % 3:
        assert shanten(g, gvoid) == shanten(h, void)
    if n % 3 == 1:
        mapped = []
        for t in waits(h, void):
            s, r = divmod(int(t), 9)
            mapped.append(9 * perm.index(s) + (8 - r if mirror else r))
        assert sorted(mapped) == list(waits(g, gvoid))
