"""Every bad input to the hand API raises a clear ValueError (never a numba error).

Hands are written in notation; raw arrays appear only where the array itself
is the malformed input (a wrong shape, dtype or count). The exhaustive
hostile-input sweeps are in test_hostile_hand.py.
"""

import numpy as np
import pytest

from sichuan_env import (
    is_win,
    is_win_batch,
    parse,
    shanten,
    shanten_batch,
    tile_index,
    waits,
    waits_batch,
)

GOOD14 = "123m345m222p999p66p"
GOOD13 = "123m345m222p999p6p"


def _with(hand: str, tile: str, count: int, dtype=np.uint8) -> np.ndarray:
    """``hand`` as counts with ``tile``'s count replaced (out of range on purpose)."""
    c = parse(hand).astype(np.int64)
    c[tile_index(tile)] = count
    return c.astype(dtype)


@pytest.mark.parametrize(
    ("func", "arg", "message"),
    [
        (is_win, GOOD13, r"is_win: counts must hold 3k\+2 tiles .* got 13"),
        (is_win, "11112222333344445m", r"must hold 3k\+2 tiles .* got 17"),
        (is_win, "", r"must hold 3k\+2 tiles .* got 0"),
        (is_win, "1m" * 5 + "22m", "counts: .*more than 4 copies of 1m x5"),
        (is_win, "12x", "counts: .*unknown character 'x'"),
        (is_win, _with(GOOD14, "6p", 9), r"counts values must be 0\.\.4, got 9 \(tile 6p\)"),
        (is_win, _with(GOOD14, "1m", -1, np.int16), r"0\.\.4, got -1 \(tile 1m\)"),
        (is_win, np.zeros(28, np.uint8), r"shape \(27,\)"),
        (is_win, parse(GOOD14)[None], r"shape \(27,\)"),
        (is_win, parse(GOOD14).astype(np.float32), "must hold integers, got dtype float32"),
        (waits, GOOD14, r"waits: counts must hold 3k\+1 tiles .* got 14"),
        (waits, "1m" * 27, "more than 4 copies"),
        (
            shanten,
            "123m456m789m",
            r"shanten: counts must hold 3k\+1 or 3k\+2 tiles, at most 14, got 9",
        ),
        (shanten, "123456789m123456789p", "at most 14, got 18"),
        (shanten, None, "counts must hold integers, got elements of type NoneType"),
    ],
)
def test_single_calls(func, arg, message):
    with pytest.raises(ValueError, match=message):
        func(arg)


@pytest.mark.parametrize(
    "hand", [GOOD14, "11m", "11123m", "12345m5559m999p66p", "1111m99m44p66p88p99p"]
)
def test_lists_and_other_dtypes_agree_with_notation(hand):
    c = parse(hand)
    want = is_win(hand)
    assert is_win(c.tolist()) is want
    assert is_win(tuple(int(x) for x in c)) is want
    assert is_win(c.astype(np.int64)) is want
    assert is_win(c.astype(">i4")) is want  # big-endian
    col = np.zeros((27, 2), np.uint8)
    col[:, 0] = c
    assert not col[:, 0].flags.c_contiguous
    assert is_win(col[:, 0]) is want
    frozen = c.copy()
    frozen.flags.writeable = False
    assert is_win(frozen) is want


@pytest.mark.parametrize("void", ["x", 3, -1, "mp", 1.0, [0], True, np.bool_(False), 2**70])
def test_bad_void(void):
    with pytest.raises(ValueError, match="void must be a suit"):
        waits(GOOD13, void)
    with pytest.raises(ValueError, match="void must be a suit"):
        shanten(GOOD13, void)


def test_batch_errors_name_the_row():
    hands = np.stack([parse("11m"), parse("11m"), parse("112m")])
    with pytest.raises(
        ValueError, match=r"is_win: counts \(row 2\) must hold 3k\+2 tiles .* got 3"
    ):
        is_win_batch(hands)
    hands[2] = parse("11m")
    hands[1, tile_index("6m")] = 7
    with pytest.raises(ValueError, match=r"0\.\.4, got 7 \(row 1, tile 6m\)"):
        is_win_batch(hands)
    with pytest.raises(ValueError, match=r"\(N, 27\)"):
        is_win_batch(parse("11m"))
    with pytest.raises(ValueError, match=r"counts \(row 0\) must hold 3k\+1 tiles .* got 0"):
        waits_batch(np.stack([parse(""), parse("1m")]))


def test_batch_voids():
    singles = np.stack([parse("1m"), parse("2m")])
    with pytest.raises(ValueError, match="one per row"):
        shanten_batch(singles, [0, 1, 2])
    with pytest.raises(ValueError, match=r"-1 \(none\) or 0\.\.2"):
        shanten_batch(singles, np.array([0, 5]))
    with pytest.raises(ValueError, match=r"void\[1\] must be a suit"):
        shanten_batch(singles, np.array(["m", "x"]))
    with pytest.raises(ValueError, match=r"void\[0\] must be a suit"):
        shanten_batch(singles, [True, "m"])
    with pytest.raises(ValueError, match="got dtype float64"):
        shanten_batch(singles, np.array([0.0, 1.0]))
    # a 1m single with the m suit void must still shed it: one more step
    assert shanten_batch(singles, np.array(["m", "s"])).tolist() == [1, 0]
    assert shanten_batch(singles, ["", None]).tolist() == [0, 0]
    assert shanten_batch(singles, [-1, "p"]).tolist() == [0, 0]


def test_batch_accepts_lists_and_other_dtypes():
    rows = [parse("11m").tolist(), parse("22m").tolist()]
    assert is_win_batch(rows).tolist() == [True, True]
    assert is_win_batch(np.array(rows, np.int64)).tolist() == [True, True]
    with pytest.raises(ValueError, match=r"0\.\.4"):
        is_win_batch(np.array([[-1] + [0] * 26]))
    with pytest.raises(ValueError, match="rectangular"):
        is_win_batch([rows[0], rows[1][:26]])


# ------------------------------------------------------------- action ids


@pytest.mark.parametrize(
    "good", [0, 87, np.int64(5), np.uint8(5), np.array(5), np.array(5, np.uint16), np.int8(87)]
)
def test_as_action_id_takes_integer_scalars(good):
    from sichuan_env.engine.actions import as_action_id

    got = as_action_id(good)
    assert type(got) is int and got == int(good)


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        (True, TypeError),
        (np.bool_(False), TypeError),
        (np.array(True), TypeError),
        (5.0, TypeError),
        (np.float64(5), TypeError),
        (np.array(5.0), TypeError),
        ("5", TypeError),
        (None, TypeError),
        ([5], TypeError),
        (np.array([5]), TypeError),
        (np.zeros((1, 1), np.int64), TypeError),
        (-1, ValueError),
        (88, ValueError),
        (2**70, ValueError),
        (np.uint64(2**63), ValueError),
    ],
)
def test_as_action_id_rejects_the_rest(bad, exc):
    from sichuan_env.engine.actions import as_action_id

    with pytest.raises(exc, match="action id"):
        as_action_id(bad)
