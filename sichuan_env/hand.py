"""Typed, validated facade over the hand kernels: win shape, waits, shanten.

Every function takes a concealed part as a count vector (``uint8[27]``, any
integer array or sequence of length 27, or notation such as ``"123m456p99s"``)
and raises ``ValueError`` naming the problem for bad input. Exposed melds are
not passed: their number is inferred from the concealed size (14 tiles minus
3 per meld). ``void`` is ``None`` or a suit: 0/1/2 or ``"m"``/``"p"``/``"s"``.

A ``uint8`` C-contiguous array of shape ``(27,)`` takes the fast path (a few
hundred nanoseconds a call); anything else is converted first.
"""

from __future__ import annotations

import numpy as np

from .kernels import checked as _k
from .kernels.agari import any_over_four as _any_over_four
from .kernels.agari import mask_to_indices as _mask_to_indices
from .kernels.tables import get_tables
from .tiles import NUM_TILE_TYPES, SUITS, as_counts, as_counts_batch, suit_index, to_str

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
_WAIT_ARRAYS: dict[int, np.ndarray] = {}  # wait mask -> read-only index array
_WAIT_CACHE_SIZE = 65_536  # exact types: 1.0 and True hash like 1

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
    return suit_index(void)  # raises ValueError with the accepted values


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
        raise ValueError(f"{func}: counts{where} must be 0..4, got {counts.tolist()}")
    n = int(counts.astype(np.int64).sum())
    raise ValueError(f"{func}: needs {_SIZE_RULES[func]}, got {n}{where}: {to_str(counts)!r}")


def is_win(counts: object) -> bool:
    """True if a ``3k + 2`` concealed part is complete: k melds + a pair, or seven pairs.

    Shape only (a quad counts as two pairs in seven pairs). Whether the hand
    may win under the two-suit and void rules is ``score_win``'s question.

    Raises:
        ValueError: bad counts, or a size other than 2, 5, 8, 11, 14.
    """
    try:  # fast path: a C-contiguous uint8 vector (the kernel checks the rest)
        r = _is_win_code(counts, _FLAGS)
    except TypeError:
        counts = as_counts(counts)
        r = _is_win_code(counts, _FLAGS)
    if r < 0:
        _raise(r, counts, "is_win")
    return r == 1


def waits_mask(counts: object, void: object = None) -> int:
    """The waits of ``waits`` as a 27-bit integer (bit t = tile t)."""
    if void is None:  # the common case: one argument fewer to dispatch
        try:
            r = _waits_plain(counts, _WAITS)
        except TypeError:
            counts = as_counts(counts)
            r = _waits_plain(counts, _WAITS)
    else:
        v = _void_fast(void)
        try:
            r = _waits_code(counts, v, _WAITS)
        except TypeError:
            counts = as_counts(counts)
            r = _waits_code(counts, v, _WAITS)
    if r < 0:
        _raise(r, counts, "waits")
    return r


def waits(counts: object, void: object = None) -> np.ndarray:
    """Sorted tile indices that complete a ``3k + 1`` concealed part.

    Never a tile already held 4 times, never the void suit; with a void suit
    a part still holding tiles of it waits on nothing (it cannot win). The
    array is read-only and shared between equal answers (copy it to modify).

    Raises:
        ValueError: bad counts or void, or a size other than 1, 4, 7, 10, 13.
    """
    m = waits_mask(counts, void)
    out = _WAIT_ARRAYS.get(m)
    if out is None:
        if len(_WAIT_ARRAYS) >= _WAIT_CACHE_SIZE:
            _WAIT_ARRAYS.clear()
        out = _mask_to_indices(m)
        out.flags.writeable = False
        _WAIT_ARRAYS[m] = out
    return out


def shanten(counts: object, void: object = None) -> int:
    """Exact shanten of a ``3k + 1`` or ``3k + 2`` concealed part (RULES.md §5).

    -1 = complete, 0 = tenpai. Standard and seven-pairs shapes, never counting
    on a fifth copy of a tile; with ``void`` the void suit is forbidden (its
    tiles must all be replaced).

    Raises:
        ValueError: bad counts or void, or a size that is 3k or above 14.
    """
    if void is None:
        try:
            r = _shanten_plain(counts, _DIST)
        except TypeError:
            counts = as_counts(counts)
            r = _shanten_plain(counts, _DIST)
    else:
        v = _void_fast(void)
        try:
            r = _shanten_code(counts, v, _DIST)
        except TypeError:
            counts = as_counts(counts)
            r = _shanten_code(counts, v, _DIST)
    if r < -1:
        _raise(r - _k.SHANTEN_STATUS, counts, "shanten")
    return r


def voids_array(void: object, n: int) -> np.ndarray:
    """Per-row void codes ``int8[n]`` from one suit (or None) or one code/letter per row."""
    if void is None or isinstance(void, (str, int, np.integer)):
        return np.full(n, void_code(void), dtype=np.int8)
    arr = np.asarray(void)
    if arr.shape != (n,):
        raise ValueError(f"void must be one suit or one per row (shape ({n},)), got {arr.shape}")
    if arr.dtype.kind in "US":
        codes = {"m": 0, "p": 1, "s": 2, "": -1, "-": -1}
        bad = sorted({str(v) for v in arr.tolist()} - set(codes))
        if bad:
            raise ValueError(f"void suits must be one of {SUITS!r} (or '' for none), got {bad}")
        return np.array([codes[str(v)] for v in arr.tolist()], dtype=np.int8)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"void must hold suit codes -1..2, got dtype {arr.dtype}")
    if n and (arr.min() < -1 or arr.max() > 2):
        raise ValueError(f"void codes must be -1 (none) or 0..2, got {arr.min()}..{arr.max()}")
    return np.ascontiguousarray(arr, dtype=np.int8)


def as_batch(counts: object) -> np.ndarray:
    """A batch of count vectors as ``uint8[N, 27]`` (C-contiguous uint8 passes through)."""
    if (
        type(counts) is np.ndarray
        and counts.dtype is _U8
        and counts.ndim == 2
        and counts.shape[1] == NUM_TILE_TYPES
        and counts.flags.c_contiguous
    ):
        return counts  # counts above 4 are caught inside the kernel
    return as_counts_batch(counts)


def _checked_batch(counts: object, func: str) -> np.ndarray:
    c = as_batch(counts)
    if c.size and _any_over_four(c.reshape(-1)):
        row = int(np.flatnonzero((c > 4).any(axis=1))[0])
        _raise(_k.BAD_COUNT, c[row], func, row)
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
