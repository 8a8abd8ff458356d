"""``kernels.ukeire.discard_table`` against one ``shanten`` call per (discard, draw)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sichuan_env.kernels.tables import get_tables
from sichuan_env.kernels.ukeire import _table_plain, discard_table

DIST = get_tables()["DIST"]


def _both(hand: np.ndarray, void: int, unseen: np.ndarray) -> tuple:
    fast_sh, fast_uk = np.full(27, -7, np.int64), np.full(27, -7, np.int64)
    ref_sh, ref_uk = np.full(27, -7, np.int64), np.full(27, -7, np.int64)
    before = hand.copy()
    discard_table(hand, void, unseen, DIST, fast_sh, fast_uk)
    assert np.array_equal(hand, before)
    _table_plain(hand.copy(), void, unseen, DIST, hand, ref_sh, ref_uk)
    return (fast_sh, fast_uk), (ref_sh, ref_uk)


def _random_hand(rng: np.random.Generator, size: int, suits: np.ndarray) -> np.ndarray:
    hand = np.zeros(27, np.uint8)
    while hand.sum() < size:
        t = int(rng.choice(suits)) * 9 + int(rng.integers(9))
        if hand[t] < 4:
            hand[t] += 1
    return hand


def test_the_table_equals_the_reference_on_random_hands():
    rng = np.random.default_rng(7)
    seen = {"tenpai": 0, "ukeire_zero": 0, "void_held": 0, "seven_pairs_size": 0}
    for _ in range(4000):
        size = int(rng.choice([2, 5, 8, 11, 14]))
        suits = rng.choice(3, size=int(rng.integers(1, 4)), replace=False)
        hand = _random_hand(rng, size, suits)
        void = int(rng.integers(-1, 3))
        unseen = rng.integers(0, 5, 27)
        fast, ref = _both(hand, void, unseen)
        held = hand > 0
        assert np.array_equal(fast[0][held], ref[0][held]), (hand, void)
        assert np.array_equal(fast[1][held], ref[1][held]), (hand, void)
        assert (fast[0][~held] == -7).all() and (fast[1][~held] == -7).all()
        seen["tenpai"] += int((ref[0][held] == 0).any())
        seen["ukeire_zero"] += int((ref[1][held] == 0).any())
        seen["void_held"] += int(void >= 0 and hand[9 * void : 9 * void + 9].any())
        seen["seven_pairs_size"] += size == 14
    assert min(seen.values()) > 50, seen


def test_pair_heavy_hands_exercise_seven_pairs():
    """Hands of pairs and triplets, where the seven-pairs distance decides the shanten."""
    rng = np.random.default_rng(11)
    decided = 0
    from sichuan_env.kernels.agari import scan
    from sichuan_env.kernels.shanten import seven_pairs_distance, standard_distance

    for _ in range(1500):
        hand = np.zeros(27, np.uint8)
        while hand.sum() < 12:
            t = int(rng.integers(27))
            hand[t] = min(4, hand[t] + int(rng.choice([2, 2, 3])))
        while hand.sum() > 12:
            hand[int(np.flatnonzero(hand)[0])] -= 1
        hand[int(rng.integers(27))] += 1
        hand[int(rng.integers(27))] += 1
        if hand.max() > 4:
            continue
        void = -1
        unseen = rng.integers(0, 5, 27)
        fast, ref = _both(hand, void, unseen)
        held = hand > 0
        assert np.array_equal(fast[0][held], ref[0][held]) and np.array_equal(
            fast[1][held], ref[1][held]
        )
        for t in np.flatnonzero(held):
            less = hand.copy()
            less[t] -= 1
            k0, k1, k2, *_ = scan(less)
            w = DIST[k0], DIST[k1], DIST[k2]
            decided += seven_pairs_distance(*w) < standard_distance(*w, 4)
    assert decided > 1000


@settings(max_examples=300, deadline=None)
@given(
    tiles=st.lists(st.integers(0, 26), min_size=14, max_size=40),
    size=st.sampled_from([2, 5, 8, 11, 14]),
    void=st.integers(-1, 2),
    unseen=st.lists(st.integers(0, 4), min_size=27, max_size=27),
)
def test_the_table_equals_the_reference_hypothesis(tiles, size, void, unseen):
    hand = np.zeros(27, np.uint8)
    for t in tiles:
        if hand.sum() < size and hand[t] < 4:
            hand[t] += 1
    assume(hand.sum() == size)
    fast, ref = _both(hand, void, np.array(unseen, np.int64))
    held = hand > 0
    assert np.array_equal(fast[0][held], ref[0][held])
    assert np.array_equal(fast[1][held], ref[1][held])


@pytest.mark.parametrize("size", [1, 3, 4, 6, 16, 17, 30])
def test_hands_of_other_sizes_give_the_reference_answers(size):
    rng = np.random.default_rng(size)
    for _ in range(50):
        hand = _random_hand(rng, size, np.arange(3))
        fast, ref = _both(hand, int(rng.integers(-1, 3)), rng.integers(0, 5, 27))
        held = hand > 0
        assert np.array_equal(fast[0][held], ref[0][held])
        assert np.array_equal(fast[1][held], ref[1][held])


def test_only_the_wanted_tiles_are_computed():
    from sichuan_env.kernels.ukeire import discard_table_of

    rng = np.random.default_rng(3)
    for _ in range(300):
        hand = _random_hand(rng, 14, np.arange(3))
        want = (rng.random(27) < 0.5).astype(np.int8)
        void, unseen = int(rng.integers(-1, 3)), rng.integers(0, 5, 27)
        sh, uk = np.full(27, -7, np.int64), np.full(27, -7, np.int64)
        discard_table_of(hand, void, unseen, DIST, want, sh, uk)
        (all_sh, all_uk), _ = _both(hand, void, unseen)
        on = (hand > 0) & (want > 0)
        assert np.array_equal(sh[on], all_sh[on]) and np.array_equal(uk[on], all_uk[on])
        assert (sh[~on] == -7).all() and (uk[~on] == -7).all()


def test_a_count_above_four_takes_the_reference_path():
    hand = np.zeros(27, np.uint8)
    hand[0], hand[1] = 5, 3
    fast, ref = _both(hand, -1, np.full(27, 2, np.int64))
    assert fast[0][0] == ref[0][0] and fast[1][0] == ref[1][0]


@pytest.mark.parametrize("size", [2, 5, 8, 11, 14])
def test_agrees_with_the_heuristics_ukeire(size):
    from sichuan_env.agents.rule_based.heuristic import ukeire

    rng = np.random.default_rng(size)
    for _ in range(200):
        hand = _random_hand(rng, size, np.arange(3))
        void = int(rng.integers(-1, 3))
        unseen = rng.integers(0, 5, 27)
        sh, uk = np.zeros(27, np.int64), np.zeros(27, np.int64)
        discard_table(hand, void, unseen, DIST, sh, uk)
        for t in np.flatnonzero(hand):
            hand[t] -= 1
            assert (sh[t], uk[t]) == ukeire(hand, void, unseen, DIST)
            hand[t] += 1


def test_the_facade_names_tiles_and_counts_the_waits():
    from sichuan_env.hand import discard_table as table

    out = table("123456789m1122p5s", void="s")
    assert list(out)[-1] == "5s" and out["5s"] == (0, 4)  # tenpai on 1p/2p, two unseen of each
    assert set(out) == {"1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "2p", "5s"}
    seen = np.zeros(27, np.int64)
    seen[9] = 2  # both other 1p seen
    unseen = np.clip(4 - np.array([2 if t in (9, 10) else 0 for t in range(27)]) - seen, 0, 4)
    assert table("123456789m1122p5s", void="s", unseen=unseen)["5s"] == (0, 2)


@pytest.mark.parametrize(
    ("counts", "void", "unseen", "match"),
    [
        ("123m", None, None, "3k\\+2"),
        ("123456789m123p456s11m", None, None, "3k\\+2"),
        ("11111m", None, None, "more than 4"),
        ("11m", "x", None, "void"),
        ("11m", None, [9] * 27, "unseen"),
        ("11m", None, [1] * 26, "unseen"),
    ],
)
def test_the_facade_refuses_bad_input(counts, void, unseen, match):
    from sichuan_env.hand import discard_table as table

    with pytest.raises(ValueError, match=match):
        table(counts, void=void, unseen=unseen)
