"""Typed, validated facade over the hand kernels: win shape, waits, shanten.

Every function takes a concealed part as a count vector (``uint8[27]``, any
integer array or sequence of length 27, or notation such as ``"123m456p99s"``)
and raises ``ValueError`` naming the argument and the problem for bad input
(``tiles.InputTypeError``, also a ``TypeError``, for a value of the wrong
type: a bool, a float, a string where an integer goes). Exposed melds are
not passed: their number is inferred from the concealed size (14 tiles minus
3 per meld). ``void`` is ``None`` or a suit: 0/1/2 or ``"m"``/``"p"``/``"s"``.

A ``uint8`` C-contiguous array of shape ``(27,)`` takes the fast path (a few
hundred nanoseconds a call); anything else is converted first.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .kernels import checked as _k
from .kernels.agari import any_over_four as _any_over_four
from .kernels.agari import mask_to_indices as _mask_to_indices
from .kernels.tables import get_tables
from .kernels.ukeire import discard_table as _discard_table
from .tiles import (
    NUM_TILE_TYPES,
    InputTypeError,
    as_counts,
    as_counts_batch,
    count_error,
    suit_index,
    tile_name,
    to_str,
)

_T = get_tables()
_FLAGS = _T["FLAGS"]
_WAITS = _T["WAITS"]
_DIST = _T["DIST"]
_U8 = np.dtype(np.uint8)
_is_win_code = _k.is_win_code
_waits_code = _k.waits_code
_shanten_code = _k.shanten_code
_waits_plain = _k.waits_code_plain
_shanten_plain = _k.shanten_code_plain
_SHAPE = (NUM_TILE_TYPES,)
_VOID_CODE = {None: -1, 0: 0, 1: 1, 2: 2, "m": 0, "p": 1, "s": 2}
_VOID_TYPES = (type(None), int, str)
_WAIT_CACHE_SIZE = 65_536  # wait masks seen (each a few dozen bytes)

_SIZE_RULES = {
    "is_win": "3k+2 tiles (2, 5, 8, 11 or 14)",
    "waits": "3k+1 tiles (1, 4, 7, 10 or 13)",
    "shanten": "3k+1 or 3k+2 tiles, at most 14",
}


def void_code(void: object) -> int:
    """Kernel code of a void argument: -1 for ``None``, else 0..2.

    Raises:
        ValueError: for anything but ``None``, 0, 1, 2, ``"m"``, ``"p"``, ``"s"``
            (numpy integers included; floats and booleans rejected).
    """
    if void is None:
        return -1
    return suit_index(void, name="void")  # raises ValueError with the accepted values


def _void_fast(void: object) -> int:
    if type(void) in _VOID_TYPES:
        v = _VOID_CODE.get(void)  # type: ignore[call-overload]
        if v is not None:
            return v
    return void_code(void)


def _raise(status: int, counts: np.ndarray, func: str, row: int | None = None) -> None:
    where = f" (row {row})" if row is not None else ""
    if counts.shape != _SHAPE:
        raise ValueError(f"{func}: counts must have shape (27,), got {counts.shape}")
    if status == _k.BAD_COUNT:
        raise count_error(counts if row is None else counts[None], f"{func}: counts{where}")
    n = int(counts.astype(np.int64).sum())
    raise ValueError(
        f"{func}: counts{where} must hold {_SIZE_RULES[func]}, got {n}: {to_str(counts)!r}"
    )


# The single-call facades try the kernel first: its explicit signature accepts
# only a writable C-contiguous uint8[:], and numba's dispatch raises for
# anything else (TypeError; ValueError for an empty list), which is then
# converted (and validated) by ``as_counts``. The kernel itself rejects a
# wrong length, any count above 4 and a wrong size.


def is_win(counts: object) -> bool:
    """True if a ``3k + 2`` concealed part is complete: k melds + a pair, or seven pairs.

    Shape only (a quad counts as two pairs in seven pairs). Whether the hand
    may win under the two-suit and void rules is ``score_win``'s question.

    Raises:
        ValueError: bad counts, or a size other than 2, 5, 8, 11, 14.
    """
    try:
        r = _is_win_code(counts, _FLAGS)
    except Exception:  # noqa: BLE001, S110 - dispatch refused the argument: convert below
        pass  # (outside the handler: no chained numba error in the traceback)
    else:
        if r >= 0:
            return r == 1
        _raise(r, counts, "is_win")  # type: ignore[arg-type]
    counts = as_counts(counts)
    r = _is_win_code(counts, _FLAGS)
    if r < 0:
        _raise(r, counts, "is_win")
    return r == 1


def waits_mask(counts: object, void: object = None) -> int:
    """The waits of ``waits`` as a 27-bit integer (bit t = tile t).

    Raises:
        ValueError: as ``waits``.
    """
    if void is None:  # the common case: one argument fewer to dispatch
        try:
            r = _waits_plain(counts, _WAITS)
        except Exception:  # noqa: BLE001, S110 - dispatch refused the argument: convert below
            pass
        else:
            if r >= 0:
                return r
            _raise(r, counts, "waits")  # type: ignore[arg-type]
        counts = as_counts(counts)
        r = _waits_plain(counts, _WAITS)
    else:
        v = _void_fast(void)
        try:
            r = _waits_code(counts, v, _WAITS)
        except Exception:  # noqa: BLE001, S110 - dispatch refused the argument: convert below
            pass
        else:
            if r >= 0:
                return r
            _raise(r, counts, "waits")  # type: ignore[arg-type]
        counts = as_counts(counts)
        r = _waits_code(counts, v, _WAITS)
    if r < 0:
        _raise(r, counts, "waits")
    return r


@lru_cache(maxsize=_WAIT_CACHE_SIZE)
def _wait_array(mask: int) -> np.ndarray:
    out = _mask_to_indices(mask)
    out.flags.writeable = False
    return out


def waits(counts: object, void: object = None) -> np.ndarray:
    """Sorted tile indices that complete a ``3k + 1`` concealed part.

    Never a tile already held 4 times, never the void suit; with a void suit
    a part still holding tiles of it waits on nothing (it cannot win). The
    array is read-only and shared between equal answers (copy it to modify).

    Raises:
        ValueError: bad counts or void, or a size other than 1, 4, 7, 10, 13.
    """
    return _wait_array(waits_mask(counts, void))


def shanten(counts: object, void: object = None) -> int:
    """Exact shanten of a ``3k + 1`` or ``3k + 2`` concealed part (docs/rules.md §5).

    -1 = complete, 0 = tenpai. Standard and seven-pairs shapes, never counting
    on a fifth copy of a tile; with ``void`` the void suit is forbidden (its
    tiles must all be replaced).

    Raises:
        ValueError: bad counts or void, or a size that is 3k or above 14.
    """
    if void is None:
        try:
            r = _shanten_plain(counts, _DIST)
        except Exception:  # noqa: BLE001, S110 - dispatch refused the argument: convert below
            pass
        else:
            if r >= -1:
                return r
            _raise(r - _k.SHANTEN_STATUS, counts, "shanten")  # type: ignore[arg-type]
        counts = as_counts(counts)
        r = _shanten_plain(counts, _DIST)
    else:
        v = _void_fast(void)
        try:
            r = _shanten_code(counts, v, _DIST)
        except Exception:  # noqa: BLE001, S110 - dispatch refused the argument: convert below
            pass
        else:
            if r >= -1:
                return r
            _raise(r - _k.SHANTEN_STATUS, counts, "shanten")  # type: ignore[arg-type]
        counts = as_counts(counts)
        r = _shanten_code(counts, v, _DIST)
    if r < -1:
        _raise(r - _k.SHANTEN_STATUS, counts, "shanten")
    return r


_ROW_VOID = {"m": 0, "p": 1, "s": 2, "": -1, "-": -1, None: -1}


def _row_void(v: object, i: int) -> int:
    if type(v) is str or v is None:
        code = _ROW_VOID.get(v)
        if code is not None:
            return code
    elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v == -1:
        return -1
    return suit_index(v, name=f"void[{i}]")


def voids_array(void: object, n: int) -> np.ndarray:
    """Per-row void codes ``int8[n]`` from one suit (or None) or one code/letter per row.

    A row's void is None / -1 / ``""`` / ``"-"`` (none) or a suit 0..2 / ``"m"``, ``"p"``, ``"s"``.

    Raises:
        ValueError: for a wrong length or any other value (booleans and floats included).
    """
    if not isinstance(void, (list, tuple, np.ndarray)):  # one void for every row
        return np.full(n, void_code(void), dtype=np.int8)
    if isinstance(void, np.ndarray) and void.dtype.kind in "iu":
        if void.shape != (n,):
            raise ValueError(
                f"void must be one suit or one per row (shape ({n},)), got {void.shape}"
            )
        if n and (void.min() < -1 or void.max() > 2):
            raise ValueError(
                f"void codes must be -1 (none) or 0..2, got {void.min()}..{void.max()}"
            )
        return np.array(void, dtype=np.int8)  # a writable C-contiguous copy
    if isinstance(void, np.ndarray) and void.dtype.kind not in "USO":
        raise InputTypeError(f"void must hold suit codes -1..2 or letters, got dtype {void.dtype}")
    try:
        rows = np.array(void, dtype=object)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"void must be one suit or one per row: {exc}") from None
    if rows.shape != (n,):
        raise ValueError(f"void must be one suit or one per row (shape ({n},)), got {rows.shape}")
    return np.array([_row_void(v, i) for i, v in enumerate(rows.tolist())], dtype=np.int8)


def as_batch(counts: object, *, name: str = "counts") -> np.ndarray:
    """A batch of count vectors as ``uint8[N, 27]`` (writable C-contiguous uint8 passes through).

    Raises:
        ValueError: as ``tiles.as_counts_batch``.
    """
    if (
        type(counts) is np.ndarray
        and counts.dtype is _U8
        and counts.ndim == 2
        and counts.shape[1] == NUM_TILE_TYPES
        and counts.flags.c_contiguous
        and counts.flags.writeable
    ):
        return counts  # counts above 4 are caught by any_over_four or the kernel
    return as_counts_batch(counts, name=name)


def _checked_batch(counts: object, func: str) -> np.ndarray:
    c = as_batch(counts)
    if c.size and _any_over_four(c.reshape(-1)):
        raise count_error(c, f"{func}: counts")
    return c


def _raise_size(c: np.ndarray, func: str, residues: set[int]) -> None:
    sizes = c.astype(np.int64).sum(axis=1)
    ok = np.isin(sizes % 3, list(residues)) & (sizes <= _k.MAX_CONCEALED)
    row = int(np.flatnonzero(~ok)[0])
    _raise(_k.BAD_SIZE, c[row], func, row)


def is_win_batch(counts: object) -> np.ndarray:
    """``is_win`` over ``uint8[N, 27]`` → ``bool[N]``, parallel over the cores.

    Raises:
        ValueError: naming the first bad row.
    """
    c = _checked_batch(counts, "is_win")
    out, bad = _k.is_win_batch(c, _FLAGS)
    if bad:
        _raise_size(c, "is_win", {2})
    return out


def waits_batch(counts: object, void: object = None) -> np.ndarray:
    """``waits`` over ``uint8[N, 27]`` → ``bool[N, 27]`` (True = waits on that tile).

    ``void`` is one suit for all rows or one code per row (-1 none, 0..2).

    Raises:
        ValueError: naming the first bad row.
    """
    c = _checked_batch(counts, "waits")
    v = voids_array(void, c.shape[0])
    out, bad = _k.waits_batch(c, v, _WAITS)
    if bad:
        _raise_size(c, "waits", {1})
    return out


def shanten_batch(counts: object, void: object = None) -> np.ndarray:
    """``shanten`` over ``uint8[N, 27]`` → ``int8[N]``.

    ``void`` is one suit for all rows or one code per row (-1 none, 0..2).

    Raises:
        ValueError: naming the first bad row.
    """
    c = _checked_batch(counts, "shanten")
    v = voids_array(void, c.shape[0])
    out, bad = _k.shanten_batch(c, v, _DIST)
    if bad:
        _raise_size(c, "shanten", {1, 2})
    return out


def discard_table(
    counts: object, void: object = None, unseen: object = None
) -> dict[str, tuple[int, int]]:
    """Shanten and ukeire after each discard of a ``3k + 2`` hand, by tile name.

    ``{"5m": (shanten, ukeire), ...}`` for every tile type the hand holds, in
    tile order: the shanten of the hand less that tile (0 = tenpai) and the
    number of unseen tiles whose draw lowers it, the table a player ranks
    discards by. ``unseen`` (a count vector) says how many of each tile the
    player has not seen; by default every copy outside the hand. With
    ``void``, tiles of the void suit are never useful draws.

    >>> discard_table("123456789m1122p5s", void="s")["5s"]
    (0, 4)

    Raises:
        ValueError: bad counts, unseen counts or void, or a size other than
            2, 5, 8, 11 or 14 tiles.
    """
    c = as_counts(counts)
    n = int(c.sum())
    if n % 3 != 2 or n > 14:
        raise ValueError(
            f"discard_table needs 3k+2 tiles (2, 5, 8, 11 or 14), got {n}: {to_str(c)}"
        )
    u = (
        (4 - c).astype(np.int64)
        if unseen is None
        else as_counts(unseen, name="unseen").astype(np.int64)
    )
    sh = np.zeros(NUM_TILE_TYPES, dtype=np.int64)
    uk = np.zeros(NUM_TILE_TYPES, dtype=np.int64)
    _discard_table(c, _void_fast(void), u, _DIST, sh, uk)
    return {tile_name(int(t)): (int(sh[t]), int(uk[t])) for t in np.flatnonzero(c)}
