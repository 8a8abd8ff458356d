"""Hypothesis fuzz of the hand core's entry points (split from ``test_hostile_hand.py``, same contract).

Bad input raises ``ValueError`` / ``TypeError`` naming the argument; valid but unusual input
gives the same answer as the plain form.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sichuan_env import (
    best_wait_score,
    is_win,
    is_win_batch,
    parse,
    score_win,
    score_win_batch,
    shanten,
    shanten_batch,
    to_str,
    waits,
    waits_batch,
    waits_mask,
)
from sichuan_env.tiles import as_counts, as_counts_batch, echo

TESTS = Path(__file__).parent
HAND13 = "123m345m222p999p6p"
HAND14 = "123m345m222p999p66p"


def _rows(c: object) -> int:
    try:
        return len(c)  # type: ignore[arg-type]
    except TypeError:
        return 1


# (name, call on one count vector, the argument name its errors must carry)
SINGLE = [
    ("is_win", is_win, "counts"),
    ("waits", waits, "counts"),
    ("waits void=s", lambda c: waits(c, "s"), "counts"),
    ("waits_mask", waits_mask, "counts"),
    ("waits_mask void=0", lambda c: waits_mask(c, 0), "counts"),
    ("shanten", shanten, "counts"),
    ("shanten void=p", lambda c: shanten(c, "p"), "counts"),
    ("score_win", score_win, "concealed"),
    ("score_win self_draw void", lambda c: score_win(c, self_draw=True, void=2), "concealed"),
    ("best_wait_score", best_wait_score, "concealed"),
    ("to_str", to_str, "counts"),
    ("as_counts", as_counts, "counts"),
]

# (name, call on a uint8[N, 27] batch, the argument name its errors must carry)
BATCH = [
    ("is_win_batch", is_win_batch, "counts"),
    ("waits_batch", waits_batch, "counts"),
    ("waits_batch void=1", lambda c: waits_batch(c, 1), "counts"),
    ("shanten_batch", shanten_batch, "counts"),
    ("shanten_batch per-row void", lambda c: shanten_batch(c, [-1] * _rows(c)), "counts"),
    ("score_win_batch", score_win_batch, "concealed"),
    ("as_counts_batch", as_counts_batch, "counts"),
]


def _hand_with(t: int, value: int) -> np.ndarray:
    """HAND13 with tile ``t`` holding ``value`` (0..255) copies."""
    c = parse(HAND13)
    c[t] = value
    return c


def _expect_count_error(func, arg, name: str, value: int, where: str) -> None:
    try:
        func(arg)
    except ValueError as exc:
        msg = str(exc)
        assert f"{name} values must be 0..4, got {echo(value)} ({where})" in msg, msg
    else:
        raise AssertionError(f"accepted a count of {value} at {where}")


# ------------------------------------------------------------ Hypothesis fuzz

_DTYPES = st.sampled_from(
    [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64, np.uint64, np.float64, np.bool_]
)


@settings(max_examples=400, deadline=None)
@given(
    hnp.arrays(
        _DTYPES,
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=28),
    )
)
def test_fuzzed_arrays_single(arr):
    """Any array: the uint8 answer when it is a valid hand, else a ValueError."""
    valid = arr.shape == (27,) and arr.dtype.kind in "iu" and bool(((arr >= 0) & (arr <= 4)).all())
    for _, func, _ in SINGLE:
        try:
            got = func(arr)
        except ValueError as exc:
            got = exc
        if not valid:
            assert isinstance(got, ValueError), (func, arr)
            continue
        try:
            want = func(arr.astype(np.uint8))
        except ValueError as exc:
            assert isinstance(got, ValueError) and str(got) == str(exc)
        else:
            assert np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=28)))
def test_fuzzed_arrays_batch(arr):
    valid = (
        arr.ndim == 2
        and arr.shape[1] == 27
        and arr.dtype.kind in "iu"
        and bool(((arr >= 0) & (arr <= 4)).all())
    )
    for _, func, _ in BATCH:
        try:
            got = func(arr)
        except ValueError as exc:
            got = exc
        if not valid:
            assert isinstance(got, ValueError), (func, arr)
            continue
        try:
            want = func(arr.astype(np.uint8))
        except ValueError as exc:
            assert isinstance(got, ValueError) and str(got) == str(exc)
        else:
            if isinstance(want, np.ndarray):
                assert np.array_equal(got, want)
            else:  # WinScores: every field equal
                for field in ("fan", "base", "roots", "extras", "points"):
                    assert np.array_equal(getattr(got, field), getattr(want, field)), field


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.lists(st.integers(-2, 3), max_size=3),
        st.binary(max_size=3),
    )
)
def test_fuzzed_void_and_flags(value):
    """void and the context flags: accepted exactly when they are what the docs say."""
    good_void = (
        value is None
        or (type(value) is int and 0 <= value <= 2)
        or (isinstance(value, str) and value in ("m", "p", "s"))
    )
    for call in (
        lambda: waits(HAND13, value),
        lambda: shanten(HAND13, value),
        lambda: score_win(HAND14, void=value),
        lambda: best_wait_score(HAND13, void=value),
    ):
        try:
            call()
            ok = True
        except ValueError as exc:
            ok = False
            assert "void" in str(exc)
        assert ok == good_void, value
    try:
        score_win(HAND14, last_tile=value)
        ok = True
    except ValueError as exc:
        ok = False
        assert isinstance(exc, TypeError) and "last_tile" in str(exc)
    assert ok == isinstance(value, bool), value


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=27, max_size=27),
    st.none() | st.tuples(st.integers(0, 26), st.integers(-3, 300)),
    _DTYPES.filter(lambda d: d not in (np.float64, np.bool_)),
)
def test_fuzzed_near_valid_counts(counts, bad, dtype):
    """27 counts, one maybe out of range, in any integer dtype (unsigned types wrap)."""
    arr = np.array(counts, dtype=np.int64)
    if bad is not None:
        arr[bad[0]] = bad[1]
    arr = arr.astype(dtype)  # -1 becomes 255 in uint8, 300 becomes 44: still checked
    value = arr.astype(np.int64)
    valid = bool(((value >= 0) & (value <= 4)).all())
    for _, func, name in SINGLE:
        try:
            got = func(arr)
        except ValueError as exc:
            got = exc
        if not valid:
            assert f"{name} values must be 0..4" in str(got), got
            continue
        try:
            want = func(value.astype(np.uint8))
        except ValueError as exc:
            want = exc
        if isinstance(want, ValueError):
            assert str(got) == str(want)
        elif isinstance(want, np.ndarray):
            assert np.array_equal(got, want)
        else:
            assert got == want


def test_unusual_valid_batches_give_the_same_answer():
    fourteen = (HAND14, "11223344556677m", "12345m5559m999p66p", "111m444m222p999p66p")
    hands = np.stack([parse(h) for h in fourteen])
    frozen = hands.copy()
    frozen.flags.writeable = False
    wide = np.zeros((8, 27), np.uint8)
    wide[::2] = hands
    variants = {
        "list of lists": hands.tolist(),
        "int64": hands.astype(np.int64),
        "fortran order": np.asfortranarray(hands),
        "every other row": wide[::2],
        "read-only": frozen,
        "object": hands.astype(object),
    }
    assert not variants["every other row"].flags.c_contiguous
    for entry, func in (("is_win_batch", is_win_batch), ("score_win_batch", score_win_batch)):
        want = func(hands.copy())
        for what, arg in variants.items():
            got = func(arg)
            if entry == "is_win_batch":
                assert np.array_equal(got, want), what
            else:
                assert np.array_equal(got.points, want.points), what
    assert np.array_equal(frozen, hands) and np.array_equal(wide[::2], hands)
