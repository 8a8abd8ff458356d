"""Hostile arguments to score_win / score_win_batch, the rule presets and the tiles helpers.

Split from ``test_hostile_hand.py`` (same contract: bad input raises a
``ValueError`` / ``TypeError`` naming the argument, never a crash or a wrong answer).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sichuan_env import (
    RuleConfig,
    best_wait_score,
    parse,
    score_win,
    score_win_batch,
    tile_index,
    tile_name,
    waits,
)
from sichuan_env.tiles import suit_index

HAND13 = "123m345m222p999p6p"
HAND14 = "123m345m222p999p66p"


def _check_kind(exc: ValueError, error: str) -> None:
    assert isinstance(exc, TypeError) == (error == "type"), f"{type(exc).__name__}: {exc}"


# ------------------------------------------------------------ score_win args

BAD_MELDS = [
    (np.array([[2, 10]]), r"melds must be a list of \(kind, tile\) pairs", "type"),
    ("pong 1m", "melds must be a list", "type"),
    ({"pong": "1m"}, "melds must be a list", "type"),
    (None, "melds must be a list", "type"),
    (iter([("pong", "1m")]), "melds must be a list", "type"),
    ([("pong",)], r"meld 0 must be a \(kind, tile\) pair", "value"),
    ([("pong", "1m", "x")], r"meld 0 must be a \(kind, tile\) pair", "value"),
    (["po"], r"meld 0 must be a \(kind, tile\) pair", "type"),
    ([{"pong": 1, "1m": 2}], r"meld 0 must be a \(kind, tile\) pair", "type"),
    ([("chow", "1m")], "meld 0: kind must be one of", "value"),
    ([(1, "1m")], "meld 0: kind must be one of", "type"),
    ([("pong", True)], "meld 0 tile must be", "type"),
    ([("pong", 1.0)], "meld 0 tile must be", "type"),
    ([("pong", math.nan)], "meld 0 tile must be", "type"),
    ([("pong", 2**70)], "meld 0 tile index must be 0..26, got an integer of 71 bits", "value"),
    ([("pong", -1)], "meld 0 tile index must be 0..26", "value"),
    ([("pong", 27)], "meld 0 tile index must be 0..26", "value"),
    ([("pong", "0m")], "meld 0 tile '0m' is not one tile", "value"),
    ([("pong", "9p" * 1000)], "is not one tile", "value"),
    ([("pong", "1p")] * 5, "at most 4 melds", "value"),
]


@pytest.mark.parametrize(("melds", "message", "error"), BAD_MELDS)
def test_score_win_bad_melds(melds, message, error):
    with pytest.raises(ValueError, match=message) as info:
        score_win("123m345m999p66p", melds)
    assert len(str(info.value)) < 300
    _check_kind(info.value, error)
    with pytest.raises(ValueError, match=message):
        best_wait_score("123m345m999p6p", melds)


FLAGS = [
    "self_draw",
    "after_kong",
    "kong_discard",
    "robbing_kong",
    "heavenly",
    "earthly",
    "last_tile",
]


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("value", ["no", "", 0, 1, 1.0, None, [True], np.array([True]), np.int8(1)])
def test_score_win_flags_must_be_booleans(flag, value):
    with pytest.raises(TypeError, match=f"{flag} must be True or False"):
        score_win(HAND14, **{flag: value})


def test_score_win_accepts_numpy_booleans():
    assert score_win(HAND14, self_draw=np.bool_(True)) == score_win(HAND14, self_draw=True)
    assert score_win(HAND14, self_draw=np.bool_(False)) == score_win(HAND14)


@pytest.mark.parametrize("rules", [None, {}, "default", 1, RuntimeError])
def test_bad_rules(rules):
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        score_win(HAND14, rules=rules)
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        best_wait_score(HAND13, rules=rules)
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        score_win_batch(parse(HAND14)[None], rules=rules)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"melds": np.zeros((1, 4, 2))}, "melds must be an integer array .* got dtype float64"),
        ({"melds": np.zeros((1, 4, 2), bool)}, "got dtype bool"),
        ({"melds": np.zeros((1, 3, 2), np.int8)}, r"shape \(1, 4, 2\), got \(1, 3, 2\)"),
        ({"melds": np.full((1, 4, 2), -1)}, r"kind code 0\.\.3 and a tile 0\.\.26"),
        ({"melds": np.full((1, 4, 2), 2**40)}, r"kind code 0\.\.3 and a tile 0\.\.26"),
        ({"melds": [[["a", "b"]] * 4]}, "got dtype <U1"),
        ({"self_draw": "no"}, "self_draw must be True, False or a bool array"),
        ({"self_draw": 1}, "self_draw must be True, False or a bool array"),
        ({"self_draw": np.array([1])}, "self_draw must be True, False or a bool array"),
        ({"self_draw": np.array([True, False])}, "self_draw must be one flag or one per row"),
        ({"void": 1.0}, "void must be a suit"),
        ({"void": [True]}, r"void\[0\] must be a suit"),
        ({"void": np.array([7])}, r"-1 \(none\) or 0\.\.2"),
    ],
)
def test_score_win_batch_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        score_win_batch(parse("111m444m222p999p66p")[None], **kwargs)


def test_score_win_batch_flags_per_row():
    hands = np.stack([parse(HAND14)] * 2)
    got = score_win_batch(
        hands, self_draw=np.array([True, False]), rules=RuleConfig(self_draw_bonus="fan")
    )
    assert got.extras.tolist() == [32, 0]  # the zimo bit only where self_draw
    assert score_win_batch(hands, self_draw=[True, True]).fan.tolist() == [1, 1]


# -------------------------------------------------------- tiles.py functions


@pytest.mark.parametrize(
    "bad",
    [True, np.bool_(True), 1.0, math.nan, None, 2**70, -1, 27, "10m", "5", "", "5p" * 500, b"5p"],
)
def test_tile_index_and_name(bad):
    with pytest.raises(ValueError) as info:
        tile_index(bad)
    assert "tile" in str(info.value) and len(str(info.value)) < 200
    with pytest.raises(ValueError, match="index"):
        tile_name(bad)


@pytest.mark.parametrize("bad", [True, 1.0, None, 3, -1, 2**70, "x", "mp", "", [0], "m" * 1000])
def test_suit_index(bad):
    with pytest.raises(ValueError, match="suit must be a suit") as info:
        suit_index(bad)
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("notation", "message"),
    [
        ("1m" * 100_000, "more than 4 copies of 1m x100000"),
        ("1" * 100_000, "lack a suit letter"),
        ("m" * 100_000, "has no digits"),
        ("1m" * 50_000 + "x", "unknown character 'x' at position 100000"),
        ("0" * 100_000, "rank 0"),
    ],
)
def test_parse_messages_are_capped(notation, message):
    with pytest.raises(ValueError, match=message) as info:
        parse(notation)
    assert len(str(info.value)) < 300
    assert f"({len(notation)} characters)" in str(info.value)


@pytest.mark.parametrize("bad", [None, 5, b"11m", ["1m"], np.array("11m")])
def test_parse_needs_a_string(bad):
    with pytest.raises(ValueError, match="notation must be a string"):
        parse(bad)


def test_numpy_scalar_tiles_and_suits_are_accepted():
    assert tile_index(np.int64(13)) == 13 and tile_index(np.uint8(26)) == 26
    assert tile_name(np.int16(0)) == "1m"
    assert suit_index(np.int32(2)) == 2
    assert waits(HAND13, np.int8(2)).tolist() == [tile_index("6p")]
