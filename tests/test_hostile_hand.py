"""Hostile input to every entry point of the hand core (tiles, hand, rules.scoring).

The contract: bad input raises ``ValueError`` naming the argument; never a
crash, a raw numba/numpy error, an ``OverflowError`` or a silently wrong
answer. Counts above 4 once made the kernels read outside their tables, so
the exhaustive count sweeps run in a subprocess and the test asserts its exit
status as well as its findings.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reference as R

from sichuan_env import (
    RuleConfig,
    best_wait_score,
    is_win,
    is_win_batch,
    parse,
    score_win,
    score_win_batch,
    shanten,
    shanten_batch,
    tile_name,
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


# --------------------------------------------- exhaustive sweeps (subprocess)


def sweep_single_counts() -> int:
    """Every count 0..255 at every tile, for every single-call entry point."""
    calls = 0
    for t in range(27):
        for value in range(256):
            c = _hand_with(t, value)
            for _, func, name in SINGLE:
                calls += 1
                if value > 4:
                    _expect_count_error(func, c.copy(), name, value, f"tile {tile_name(t)}")
                    continue
                try:
                    func(c.copy())
                except ValueError as exc:  # a valid count: only a size error is allowed
                    assert f"{name} must hold" in str(exc), str(exc)
            if value <= 4:  # valid counts: the right answer, not just any answer
                n = int(c.sum())
                if n % 3 == 2 and n <= 14:
                    assert is_win(c) == R.is_win(c)
                if n % 3 == 1 and n <= 13:
                    assert list(waits(c)) == R.waits(c, None)
                    assert shanten(c) == R.shanten(c, None)
    return calls


def sweep_batch_counts() -> int:
    """Every count 5..255 at every tile, in a row at each offset mod 8, for every batch entry point.

    Rows are 27 bytes, so the bad byte lands at every position of the 8-byte
    words ``any_over_four`` reads; the error must name the row and the tile.
    """
    calls = 0
    good = np.stack([parse(HAND14)] * 8)
    for t in range(27):
        for value in range(5, 256):
            row = (t + value) % 8
            batch = good.copy()
            batch[row, t] = value
            for _, func, name in BATCH:
                calls += 1
                where = f"row {row}, tile {tile_name(t)}"
                _expect_count_error(func, batch.copy(), name, value, where)
    return calls


def sweep_signed_counts() -> int:
    """Every negative int8 value at every tile, single and batch, and the int64 extremes."""
    calls = 0
    for t in range(27):
        for value in [*range(-128, 0), 5, 127]:
            c = parse(HAND13).astype(np.int8)
            c[t] = value
            for _, func, name in SINGLE:
                calls += 1
                _expect_count_error(func, c.copy(), name, value, f"tile {tile_name(t)}")
            for _, func, name in BATCH:
                calls += 1
                where = f"row 0, tile {tile_name(t)}"
                _expect_count_error(func, c[None].copy(), name, value, where)
        for value in (-(2**63), 2**63 - 1):
            c = parse(HAND13).astype(np.int64)
            c[t] = value
            for _, func, name in SINGLE:
                calls += 1
                _expect_count_error(func, c.copy(), name, value, f"tile {tile_name(t)}")
    return calls


def sweep_trusted_kernels() -> int:
    """The kernels the engine calls without validation stay inside their tables on any uint8."""
    from sichuan_env.kernels import agari, fan
    from sichuan_env.kernels import shanten as sh
    from sichuan_env.kernels.tables import get_tables

    t_ = get_tables()
    rules = RuleConfig().as_array().copy()
    no_melds = np.zeros((4, 2), np.int8)
    calls = 0
    answers = set()
    for t in range(27):
        for value in range(5, 256):
            c = _hand_with(t, value)
            assert agari.waits_mask(c, -1, t_["WAITS"]) == 0
            answers.add(sh.shanten(c, -1, t_["DIST"]))  # meaningless, but one fixed value
            assert fan.score(c, no_melds, 0, -1, 0, rules, t_["FLAGS"])[0] == -1
            assert fan.best_wait(c, no_melds, 0, -1, rules, t_["FLAGS"], t_["WAITS"])[0] == -1
            calls += 4
    assert len(answers) == 1, answers
    return calls


def _run_sweep(name: str) -> str:
    code = f"import {Path(__file__).stem} as t; print('calls', t.{name}())"
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH", "")) if p)
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=TESTS,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        check=False,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"exit status {out.returncode}:\n{out.stderr[-3000:]}"
    return out.stdout


def test_every_count_at_every_tile_single_calls():
    assert _run_sweep("sweep_single_counts").split() == ["calls", str(27 * 256 * len(SINGLE))]


def test_every_count_at_every_tile_and_word_offset_batches():
    assert _run_sweep("sweep_batch_counts").split() == ["calls", str(27 * 251 * len(BATCH))]


def test_negative_and_extreme_counts():
    per_tile = 130 * (len(SINGLE) + len(BATCH)) + 2 * len(SINGLE)
    assert _run_sweep("sweep_signed_counts").split() == ["calls", str(27 * per_tile)]


def test_trusted_kernels_never_read_outside_their_tables():
    assert _run_sweep("sweep_trusted_kernels").split() == ["calls", str(27 * 251 * 4)]


def test_any_over_four_every_byte_at_every_offset():
    from sichuan_env.kernels.agari import any_over_four

    for length in (1, 7, 8, 9, 27, 54):
        for pos in range(length):
            start = pos % 8  # views that start off an 8-byte boundary too
            for value in range(256):
                buf = np.full(length + 8, 4, np.uint8)
                flat = buf[start : start + length]
                flat[pos] = value
                assert any_over_four(flat) == (value > 4), (length, pos, value)


# ----------------------------------------------------- hostile count vectors


def _hostile_vectors():
    """(what, argument, error): "type" raises InputTypeError (TypeError and ValueError)."""
    good = parse(HAND13)
    rest = good.tolist()[1:]
    yield "None", None, "type"
    yield "True", True, "type"
    yield "int", 3, "value"  # a scalar: the wrong shape
    yield "float", 3.0, "type"
    yield "nan", math.nan, "type"
    yield "bytes", b"123m", "type"
    yield "object", object(), "type"
    yield "dict", {"1m": 2}, "type"
    yield "empty list", [], "value"
    yield "nested list", [[int(x)] for x in good], "value"
    yield "ragged", [good.tolist(), [1]], "value"
    yield "bool in list", [True, *rest], "type"
    yield "float in list", [1.0, *rest], "type"
    yield "nan in list", [math.nan, *rest], "type"
    yield "str in list", ["1", *rest], "type"
    yield "None in list", [None, *rest], "type"
    yield "huge int in list", [2**70, *rest], "value"
    yield "huge negative in list", [-(2**70), *rest], "value"
    yield "2**64 in list", [2**64, *rest], "value"
    yield "float array", good.astype(np.float64), "type"
    yield "nan array", np.full(27, np.nan), "type"
    yield "bool array", good.astype(bool), "type"
    yield "complex array", good.astype(complex), "type"
    yield "timedelta array", good.astype("m8[s]"), "type"
    yield "datetime array", np.zeros(27, "M8[s]"), "type"
    yield "str array", np.array(["1"] * 27), "type"
    yield "object array of None", np.array([None] * 27), "type"
    yield "object array of bools", np.array([False] * 27, dtype=object), "type"
    yield "object array huge", np.array([2**70, *rest], dtype=object), "value"
    yield "0-d array", np.array(3, np.uint8), "value"
    yield "2-d array", good[None], "value"
    yield "column", good[:, None], "value"
    yield "26 counts", good[:26], "value"
    yield "28 counts", np.append(good, 0), "value"
    yield "structured", np.zeros(27, dtype=[("a", np.uint8)]), "type"
    yield "notation too long", "1m" * 100_000, "value"
    yield "notation garbage", "123m\x00", "value"


HOSTILE = list(_hostile_vectors())


def _check_kind(exc: ValueError, error: str) -> None:
    assert isinstance(exc, TypeError) == (error == "type"), f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize(("entry", "func", "name"), SINGLE, ids=[s[0] for s in SINGLE])
@pytest.mark.parametrize(("what", "arg", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_count_vectors(entry, func, name, what, arg, error):
    with pytest.raises(ValueError) as info:
        func(arg)
    msg = str(info.value)
    assert name in msg, msg
    assert len(msg) < 400, f"{len(msg)} characters"
    _check_kind(info.value, error)


@pytest.mark.parametrize(("entry", "func", "name"), BATCH, ids=[b[0] for b in BATCH])
@pytest.mark.parametrize(("what", "arg", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_batches(entry, func, name, what, arg, error):
    if what == "2-d array":
        return  # a valid batch of one row
    if isinstance(arg, str):
        error = "type"  # batches take arrays, not notation
    if isinstance(arg, np.ndarray) and arg.shape == (27,):
        arg = arg[None]  # the same malformed content as one row
    elif isinstance(arg, list) and len(arg) == 27:
        arg = [arg]
    with pytest.raises(ValueError) as info:
        func(arg)
    assert name in str(info.value), str(info.value)
    _check_kind(info.value, error)


def _unusual_but_valid(c: np.ndarray):
    yield "list", c.tolist()
    yield "tuple", tuple(int(x) for x in c)
    yield "numpy ints in list", [np.int16(x) for x in c]
    yield "object array", c.astype(object)
    yield "int64", c.astype(np.int64)
    yield "uint64", c.astype(np.uint64)
    yield "big-endian", c.astype(">u2")
    col = np.zeros((27, 3), np.uint8)
    col[:, 1] = c
    yield "non-contiguous", col[:, 1]
    frozen = c.copy()
    frozen.flags.writeable = False
    yield "read-only", frozen
    yield "notation", to_str(c)


@pytest.mark.parametrize("hand", [HAND13, HAND14, "1112345678999m", "1111m99m44p66p88p99p"])
def test_unusual_valid_inputs_give_the_same_answer(hand):
    c = parse(hand)
    for _, func, _ in SINGLE:
        try:
            want = func(c.copy())
        except ValueError as exc:
            want = str(exc)
        for what, arg in _unusual_but_valid(c):
            try:
                got = func(arg)
            except ValueError as exc:
                got = str(exc)
            if isinstance(want, np.ndarray):
                assert np.array_equal(got, want), what
            else:
                assert got == want, what
    assert np.array_equal(c, parse(hand))  # nothing wrote to the caller's array
