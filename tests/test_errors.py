"""Every bad input to the hand API raises a clear ValueError (never a numba error)."""

import numpy as np
import pytest

from sichuan_env import is_win, is_win_batch, shanten, shanten_batch, waits, waits_batch

GOOD14 = "123m345m222p999p66p"
GOOD13 = "123m345m222p999p6p"


@pytest.mark.parametrize(
    ("func", "arg", "message"),
    [
        (is_win, GOOD13, "3k\\+2"),
        (is_win, "111122223333444m"[:0] + "1111222233334444m"[:15] + "m", "copies|3k\\+2"),
        (is_win, np.zeros(27, np.uint8), "3k\\+2"),
        (is_win, np.full(27, 9, np.uint8), "0..4"),
        (is_win, np.zeros(28, np.uint8), "shape"),
        (is_win, np.zeros((1, 27), np.uint8), "shape"),
        (is_win, np.zeros(27, np.float32), "integers"),
        (is_win, [2] + [3] * 4 + [0] * 22, "3k\\+2"),  # 14 tiles? no: 2+12 = 14 fine below
        (is_win, "1m" * 17, "copies"),
        (waits, GOOD14, "3k\\+1"),
        (waits, np.ones(27, np.uint8), "3k\\+1"),
        (shanten, "123m456m789m", "3k\\+1 or 3k\\+2"),
        (shanten, np.full(27, 1, np.int16), "at most 14"),
        (shanten, None, "shape|integers"),
    ],
)
def test_single_calls(func, arg, message):
    if func is is_win and isinstance(arg, list):
        assert is_win(arg) in (True, False)
        return
    with pytest.raises(ValueError, match=message):
        func(arg)


def test_non_contiguous_and_other_dtypes_work():
    h = np.zeros((27, 2), np.uint8)
    h[:, 0] = np.array([1, 1, 1] + [0] * 6 + [3, 0, 0, 0, 0, 0, 0, 0, 3] + [2] * 1 + [0] * 8)[:27]
    col = h[:, 0]
    assert not col.flags.c_contiguous
    assert is_win(col) == is_win(np.ascontiguousarray(col))
    assert is_win(col.astype(np.int64)) == is_win(col)
    assert is_win(col.tolist()) == is_win(col)


@pytest.mark.parametrize("void", ["x", 3, -1, "mp", 1.0, [0]])
def test_bad_void(void):
    with pytest.raises(ValueError, match="suit"):
        waits(GOOD13, void)
    with pytest.raises(ValueError, match="suit"):
        shanten(GOOD13, void)


def test_batch_errors_name_the_row():
    h = np.zeros((3, 27), np.uint8)
    h[:, 0] = 2  # a pair: valid 3k+2
    h[2, 1] = 1
    with pytest.raises(ValueError, match="row 2"):
        is_win_batch(h)
    h[2, 1] = 0
    h[1, 5] = 7
    with pytest.raises(ValueError, match="row 1"):
        is_win_batch(h)
    with pytest.raises(ValueError, match=r"\(N, 27\)"):
        is_win_batch(np.zeros(27, np.uint8))
    with pytest.raises(ValueError, match="row 0"):
        waits_batch(np.zeros((2, 27), np.uint8))
    with pytest.raises(ValueError, match="one per row"):
        shanten_batch(
            np.ones((2, 27), np.uint8)[:, :27] * 0 + np.eye(27, dtype=np.uint8)[:2], [0, 1, 2]
        )
    with pytest.raises(ValueError, match=r"-1 \(none\) or 0\.\.2"):
        shanten_batch(np.eye(27, dtype=np.uint8)[:2], np.array([0, 5]))
    with pytest.raises(ValueError, match="suits must be one of"):
        shanten_batch(np.eye(27, dtype=np.uint8)[:2], np.array(["m", "x"]))
    assert shanten_batch(np.eye(27, dtype=np.uint8)[:2], np.array(["m", "s"])).tolist() == [1, 0]


def test_batch_accepts_lists_and_other_dtypes():
    rows = [[2] + [0] * 26, [0, 2] + [0] * 25]
    assert is_win_batch(rows).tolist() == [True, True]
    assert is_win_batch(np.array(rows, np.int64)).tolist() == [True, True]
    with pytest.raises(ValueError, match=r"0\.\.4"):
        is_win_batch(np.array([[-1] + [0] * 26]))
