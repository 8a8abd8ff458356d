"""Tiles, tile indices and the text notation of docs/rules.md §1.

A tile index is ``suit * 9 + rank - 1`` with suits in the order ``m`` (万
characters), ``p`` (筒 dots), ``s`` (条 bamboo): 0..8 = 1m..9m, 9..17 = 1p..9p,
18..26 = 1s..9s. A hand is a count vector ``uint8[27]`` with values 0..4.

Notation is riichi style: digits followed by their suit letter, e.g.
``"123m456p99s"``; a suit may appear in several groups and spaces are ignored
(``"11m 22m" == "1122m"``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NUM_TILE_TYPES = 27
"""Distinct tile types: three suits of nine ranks."""
NUM_TILES = 108
"""Tiles in the wall: four copies of each type."""
SUITS = "mps"
"""Suit letters in index order: m = 万 characters, p = 筒 dots, s = 条 bamboo."""
"""The dtype of a hand's count vector."""
MAX_ECHO = 60
"""Most characters of a caller's input that an error message repeats."""


class InputTypeError(TypeError, ValueError):
    """An argument of the wrong type (a float, a bool or a string where an integer goes).

    A ``TypeError`` as the project's error contract says, and a ``ValueError``
    too, because the hand API raised ``ValueError`` for every bad input before
    and callers catch that.
    """


def echo(value: object) -> str:
    """``repr(value)`` cut to about ``MAX_ECHO`` characters, for error messages.

    Huge inputs (a 200 000-character string, a 10 000-digit integer) are
    summarised instead of copied into the message.
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, str) and len(value) > MAX_ECHO:
        return f"{value[:MAX_ECHO]!r}... ({len(value)} characters)"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    if len(text) > MAX_ECHO:
        text = f"{text[:MAX_ECHO]}... ({type(value).__name__})"
    return text


def tile_index(tile: str | int, *, name: str = "tile") -> int:
    """Return the index 0..26 of a tile given as ``"5p"`` or as an index.

    Raises:
        InputTypeError: for a bool, a float or anything but a string or an integer.
        ValueError: for an index outside 0..26 or a string that is not one tile.
    """
    if isinstance(tile, (int, np.integer)) and not isinstance(tile, (bool, np.bool_)):
        if 0 <= tile < NUM_TILE_TYPES:
            return int(tile)
        raise ValueError(f"{name} index must be 0..26, got {echo(int(tile))}")
    if isinstance(tile, str):
        t = tile.strip()
        if len(t) == 2 and t[0] in "123456789" and t[1] in SUITS:
            return SUITS.index(t[1]) * 9 + int(t[0]) - 1
        raise ValueError(f"{name} {echo(tile)} is not one tile (expected e.g. '5p')")
    raise InputTypeError(
        f"{name} must be a string like '5p' or an index 0..26, not {type(tile).__name__}"
    )


def tile_name(index: int) -> str:
    """Return the notation of one tile index, e.g. ``13 -> "5p"``.

    Raises:
        ValueError: for anything but an integer 0..26 or one tile's notation.
    """
    i = tile_index(index, name="index")
    return f"{i % 9 + 1}{SUITS[i // 9]}"


def suit_index(suit: object, *, name: str = "suit") -> int:
    """Return the suit number 0..2 of ``"m"``, ``"p"``, ``"s"`` or of 0, 1, 2.

    Raises:
        InputTypeError: for a bool, a float or anything but a string or an integer.
        ValueError: for any other string or integer.
    """
    if isinstance(suit, (int, np.integer)) and not isinstance(suit, (bool, np.bool_)):
        if 0 <= suit < 3:
            return int(suit)
    elif isinstance(suit, str):
        if len(suit) == 1 and suit in SUITS:
            return SUITS.index(suit)
    else:
        raise InputTypeError(
            f"{name} must be a suit: 'm', 'p', 's' or 0, 1, 2, not {echo(suit)} "
            f"(a {type(suit).__name__})"
        )
    raise ValueError(f"{name} must be a suit: 'm', 'p', 's' or 0, 1, 2, not {echo(suit)}")


def parse(notation: str) -> np.ndarray:
    """Parse notation such as ``"123m 456p 99s"`` into ``uint8[27]`` counts.

    Raises:
        ValueError: on an unknown character, digits without a suit letter, a
            suit letter without digits, the digit 0, or more than 4 copies of
            a tile. The message repeats at most ``MAX_ECHO`` characters of the input.
    """
    if not isinstance(notation, str):
        raise InputTypeError(f"notation must be a string, not {type(notation).__name__}")
    counts = np.zeros(NUM_TILE_TYPES, dtype=np.int64)
    pending: list[int] = []
    for pos, ch in enumerate(notation):
        if ch.isspace():
            continue
        if ch in "123456789":
            pending.append(int(ch))
        elif ch in SUITS:
            if not pending:
                raise ValueError(
                    f"{echo(notation)}: suit letter {ch!r} at position {pos} has no digits"
                )
            base = SUITS.index(ch) * 9
            for rank in pending:
                counts[base + rank - 1] += 1
            pending = []
        elif ch == "0":
            raise ValueError(
                f"{echo(notation)}: rank 0 at position {pos} (ranks are 1..9; no red fives)"
            )
        else:
            raise ValueError(f"{echo(notation)}: unknown character {ch!r} at position {pos}")
    if pending:
        digits = "".join(map(str, pending[:MAX_ECHO]))
        raise ValueError(f"{echo(notation)}: digits {digits} lack a suit letter")
    over = np.flatnonzero(counts > 4)
    if over.size:
        names = ", ".join(f"{tile_name(int(i))} x{counts[i]}" for i in over)
        raise ValueError(f"{echo(notation)}: more than 4 copies of {names}")
    return counts.astype(np.uint8)


def to_str(counts: np.ndarray | Iterable[int]) -> str:
    """Return the canonical notation of a count vector: ``"123m456p99s"``.

    Suits appear in the order m, p, s with ranks ascending; an empty hand is ``""``.

    Raises:
        ValueError: for anything ``as_counts`` rejects.
    """
    c = as_counts(counts)
    parts = []
    for s, letter in enumerate(SUITS):
        digits = "".join(str(r + 1) * int(c[s * 9 + r]) for r in range(9))
        if digits:
            parts.append(digits + letter)
    return "".join(parts)


def as_counts(counts: object, *, name: str = "counts") -> np.ndarray:
    """Validate one count vector and return it as a writable C-contiguous ``uint8[27]``.

    Accepts notation strings, sequences of 27 integers and integer arrays of
    shape ``(27,)`` (any integer dtype, layout or byte order; read-only arrays
    are copied). A writable C-contiguous ``uint8`` array is returned as is.

    Raises:
        InputTypeError: (a TypeError and a ValueError) naming ``name`` for a
            non-integer element or dtype (booleans, floats, NaN, strings, ``None``).
        ValueError: naming ``name`` for a wrong shape or a count outside 0..4.
    """
    if isinstance(counts, str):
        try:
            return parse(counts)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    arr = _as_int_array(counts, name)
    if arr.shape != (NUM_TILE_TYPES,):
        raise ValueError(f"{name} must have shape (27,), got {_shape_of(counts, arr)}")
    return _checked_uint8(arr, name)


def as_counts_batch(counts: object, *, name: str = "counts") -> np.ndarray:
    """Validate a batch of count vectors and return a writable C-contiguous ``uint8[N, 27]``.

    Raises:
        ValueError: as ``as_counts``, naming the first bad row.
    """
    arr = _as_int_array(counts, name)
    if arr.ndim != 2 or arr.shape[1] != NUM_TILE_TYPES:
        raise ValueError(f"{name} must have shape (N, 27), got {_shape_of(counts, arr)}")
    return _checked_uint8(arr, name)


def count_error(counts: np.ndarray, name: str = "counts") -> ValueError:
    """The error for a count array (1-D or 2-D) holding a count outside 0..4."""
    c = np.asarray(counts)
    bad = np.argwhere((c < 0) | (c > 4)) if c.size else np.zeros((0, 1), np.int64)
    if not bad.size:  # not expected: the caller found a bad count
        return ValueError(f"{name} values must be 0..4")
    *row, t = (int(i) for i in bad[0])
    where = f"row {row[0]}, tile {tile_name(t)}" if row else f"tile {tile_name(t)}"
    value = c[tuple(bad[0])]
    value = value.item() if isinstance(value, np.generic) else value
    return ValueError(f"{name} values must be 0..4, got {echo(value)} ({where})")


def _shape_of(obj: object, arr: np.ndarray) -> str:
    if isinstance(obj, np.ndarray) or arr.ndim:
        return str(arr.shape)
    return f"{arr.shape} (a {type(obj).__name__})"


def _as_int_array(obj: object, name: str) -> np.ndarray:
    """``obj`` as an integer ndarray, or ValueError; values are not range-checked yet.

    Python sequences are checked element by element, so a ``True`` or a
    ``2.0`` among integers is an error rather than a silent 1 or 2.
    """
    if isinstance(obj, np.ndarray):
        arr = obj
    else:
        try:
            arr = np.array(obj, dtype=object)
        except (ValueError, TypeError) as exc:  # ragged nesting and the like
            raise ValueError(f"{name} must be a rectangular array of integers: {exc}") from None
    kind = arr.dtype.kind
    if kind in "iu":
        return arr
    if kind != "O":
        raise InputTypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    bad_types = {
        type(x)
        for x in arr.flat
        if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_))
    }
    if bad_types & {list, tuple, np.ndarray}:
        raise ValueError(f"{name} must be a rectangular array of integers (rows of one length)")
    if bad_types:
        names = ", ".join(sorted(t.__name__ for t in bad_types))
        raise InputTypeError(f"{name} must hold integers, got elements of type {names}")
    return arr  # object dtype: Python integers of any size, checked by _checked_uint8


def _checked_uint8(arr: np.ndarray, name: str) -> np.ndarray:
    """Range-check an integer array and return it as writable C-contiguous ``uint8``."""
    if arr.size and (arr.min() < 0 or arr.max() > 4):  # exact for Python ints of any size
        raise count_error(arr, name)
    out = np.ascontiguousarray(arr, dtype=np.uint8)
    if not out.flags.writeable:
        out = out.copy()
    return out
