"""Rule tables in notation for win shape, waits and shanten (docs/rules.md §5)."""

import numpy as np
import pytest

from sichuan_env import is_win, parse, shanten, tile_index, waits


def tiles(names: str) -> list[int]:
    return [tile_index(n) for n in names.split()] if names else []


@pytest.mark.parametrize(
    ("hand", "expected", "why"),
    [
        ("123m345m222p999p66p", True, "four melds and a pair"),
        ("11223344556677m", True, "seven pairs (also four runs and a pair)"),
        ("1111m99m44p66p88p99p", True, "seven pairs with a quad as two pairs"),
        ("11112222333344m", True, "quads as two pairs each"),
        ("11m", True, "a pair alone: four exposed melds"),
        ("11123m", True, "a meld and a pair: three exposed melds"),
        ("12345m5559m999p66p", False, "no reading"),
        ("11m22m33m44m55m66m7m8m", False, "six pairs and two singles"),
        ("11122233346m678m", False, "the 4m and 6m cannot both be placed"),
        ("123m456m789m123p55s", True, "three suits: still a complete shape"),
        ("11m", True, "two tiles"),
        ("13m", False, "not a pair"),
    ],
)
def test_is_win(hand, expected, why):
    assert is_win(hand) is expected, why


@pytest.mark.parametrize(
    ("hand", "void", "expected"),
    [
        ("123m345m222p999p6p", None, "6p"),
        ("1112345678999m", None, "1m 2m 3m 4m 5m 6m 7m 8m 9m"),  # 九莲宝灯 shape
        ("1111m99m44p66p88p9p", None, "9p"),  # seven pairs wait with a quad held
        ("111m99m44p66p88p99p", None, "1m"),  # triplet + pairs: the triplet's 4th copy
        ("1111m", None, "1m"[0:0]),  # a quad alone waits on nothing
        ("111m2p", None, "2p"),
        ("2344m", None, "1m 4m"),  # 234 + 4 (pair) or 44 + 23 (waits 1m/4m)
        ("5m", None, "5m"),
        ("123m345m222p999p6p", 2, "6p"),  # void s: allowed, no s tiles
        ("123m345m222p999p6p", 1, ""),  # void p but holding p: no waits
        ("123m456m789m1p2s3s5s", None, ""),
        ("1112m", None, "2m 3m"),
    ],
)
def test_waits(hand, void, expected):
    assert list(waits(hand, void)) == tiles(expected)


def test_waits_never_a_fifth_copy():
    # 1111m 456p 789p 123s: the only completion would be a fifth 1m
    assert list(waits("1111m456p789p123s")) == []
    assert shanten("1111m456p789p123s") == 1


@pytest.mark.parametrize(
    ("hand", "void", "expected"),
    [
        ("123m345m222p999p66p", None, -1),
        ("123m345m222p999p6p", None, 0),
        ("123m345m222p999p67p", None, 0),
        ("123m345m222p999p1s", None, 0),
        ("123m345m222p999p1s", 2, 1),  # the void 1s must go: draw two
        ("1111222233334m", None, 0),
        ("1357m1357p1357s9m", None, 4),  # six kanchan-like pairs of singles, no pair
        ("19m19p19s1m9m1p9p1s9s5m", None, 0),  # six pairs and a single: seven-pairs tenpai
        ("11m22m33m44m55m66m7m", None, 0),  # seven pairs tenpai
        ("1111m2222m3333m4m", None, 0),
        ("1111m", None, 1),  # 111m + a pair needs a fifth 1m: two tiles away instead
    ],
)
def test_shanten(hand, void, expected):
    assert shanten(hand, void) == expected


def test_shanten_seven_pairs_counts_quads_as_two_pairs():
    # 1111m2222m3333m 44m: seven pairs complete (quads are two pairs)
    assert shanten("1111m2222m3333m44m") == -1


def test_shanten_never_counts_a_fifth_copy():
    # 1111m: 111m + 1m would wait on a fifth 1m; the real shanten is 1
    hand = parse("1111m")
    assert shanten(hand) == 1
    assert list(waits(hand)) == []
    # 1111m2222m3333m4m: seven pairs would need 4m (fine), standard reading too
    assert shanten("1111m2222m3333m4m") == 0


def test_void_shanten_forbids_the_suit():
    # all void tiles must be replaced
    assert shanten("123m456m789m111s2s", 0) >= 3
    assert shanten("123p456p789p111s2s", 0) == 0
    assert shanten("123p456p789p111s2s", "m") == 0


def test_batch_shapes_and_dtypes():
    from sichuan_env import is_win_batch, shanten_batch, waits_batch

    h = np.stack([parse("123m345m222p999p66p"), parse("12345m5559m999p66p")])
    assert is_win_batch(h).tolist() == [True, False]
    assert is_win_batch(h).dtype == np.bool_
    s = shanten_batch(h)
    assert s.dtype == np.int8 and s[0] == -1
    w = waits_batch(np.stack([parse("123m345m222p999p6p")]))
    assert w.shape == (1, 27) and w.dtype == np.bool_
    assert np.flatnonzero(w[0]).tolist() == [tile_index("6p")]
    assert is_win_batch(np.zeros((0, 27), np.uint8)).shape == (0,)


def test_waits_arrays_are_shared_and_read_only():
    a = waits("123m345m222p999p6p")
    b = waits("123m345m111p999p6p")
    assert a is b
    with pytest.raises(ValueError):
        a[0] = 1
