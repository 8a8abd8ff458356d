import numpy as np
import pytest

from sichuan_env import parse, tile_index, tile_name, to_str
from sichuan_env.tiles import as_counts, as_counts_batch, suit_index


def test_indices_follow_rules_section_1():
    assert tile_index("1m") == 0
    assert tile_index("9m") == 8
    assert tile_index("1p") == 9
    assert tile_index("5p") == 13
    assert tile_index("9s") == 26
    assert [tile_name(i) for i in (0, 13, 26)] == ["1m", "5p", "9s"]


def test_parse_and_canonical_notation():
    c = parse("123m 456p 99s")
    assert c.dtype == np.uint8 and c.shape == (27,)
    assert to_str(c) == "123m456p99s"
    assert to_str(parse("11m22m")) == to_str(parse("1122m")) == "1122m"
    assert to_str(parse("9s1m1m")) == "11m9s"
    assert to_str(parse("")) == ""


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("123", "lack a suit letter"),
        ("m", "has no digits"),
        ("12x", "unknown character"),
        ("11111m", "more than 4 copies of 1m"),
        ("05m", "rank 0"),
        ("123z", "unknown character 'z'"),
    ],
)
def test_bad_notation_names_the_problem(bad, message):
    with pytest.raises(ValueError, match=message):
        parse(bad)


def test_parse_rejects_non_strings():
    with pytest.raises(ValueError, match="must be a string"):
        parse(123)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.zeros(26, np.uint8), r"shape \(27,\)"),
        (np.zeros((2, 27), np.uint8), r"shape \(27,\)"),
        (np.full(27, 5, np.int64), "0..4"),
        (np.full(27, -1, np.int64), "0..4"),
        (np.zeros(27, np.float64), "integers"),
        (np.zeros(27, np.bool_), "integers"),
        (np.full(27, 7, np.uint8), "0..4"),
    ],
)
def test_bad_count_vectors(bad, message):
    with pytest.raises(ValueError, match=message):
        as_counts(bad)


def test_count_conversions():
    assert as_counts([1] * 27).dtype == np.uint8
    assert as_counts_batch(np.ones((3, 27), np.int32)).dtype == np.uint8
    with pytest.raises(ValueError, match=r"\(N, 27\)"):
        as_counts_batch(parse("123m"))


@pytest.mark.parametrize("bad", ["x", "5", "9q", "10m", "5p5p", -1, 27, True, 1.5, None])
def test_bad_tiles(bad):
    with pytest.raises(ValueError, match="tile"):
        tile_index(bad)


@pytest.mark.parametrize("bad", ["x", "5", "mp", "", 3, -1, True, 1.0, None])
def test_bad_suits(bad):
    with pytest.raises(ValueError, match="suit"):
        suit_index(bad)


def test_suits_by_letter_and_number():
    assert [suit_index(s) for s in "mps"] == [0, 1, 2] == [suit_index(i) for i in range(3)]


def test_round_trip_every_tile():
    for i in range(27):
        assert tile_index(tile_name(i)) == i
        c = np.zeros(27, np.uint8)
        c[i] = 4
        assert np.array_equal(parse(to_str(c)), c)
