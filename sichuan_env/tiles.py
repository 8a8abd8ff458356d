"""Tiles, tile indices and the text notation of RULES.md §1.

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
COUNTS_DTYPE = np.dtype(np.uint8)
"""The dtype of a hand's count vector."""


def tile_index(tile: str | int) -> int:
    """Return the index 0..26 of a tile given as ``"5p"`` or as an index.

    Raises:
        ValueError: for anything that is not one tile.
    """
    if isinstance(tile, (int, np.integer)) and not isinstance(tile, bool):
        if 0 <= int(tile) < NUM_TILE_TYPES:
            return int(tile)
        raise ValueError(f"tile index {tile} is out of range 0..26")
    if isinstance(tile, str):
        t = tile.strip()
        if len(t) == 2 and t[0] in "123456789" and t[1] in SUITS:
            return SUITS.index(t[1]) * 9 + int(t[0]) - 1
        raise ValueError(f"{tile!r} is not one tile (expected e.g. '5p')")
    raise ValueError(
        f"a tile must be a string like '5p' or an index 0..26, not {type(tile).__name__}"
    )


def tile_name(index: int) -> str:
    """Return the notation of one tile index, e.g. ``13 -> "5p"``."""
    i = tile_index(index)
    return f"{i % 9 + 1}{SUITS[i // 9]}"


def suit_index(suit: str | int) -> int:
    """Return the suit number 0..2 of ``"m"``, ``"p"``, ``"s"`` or of 0, 1, 2.

    Raises:
        ValueError: for anything else.
    """
    if isinstance(suit, (int, np.integer)) and not isinstance(suit, bool):
        if 0 <= int(suit) < 3:
            return int(suit)
    elif isinstance(suit, str) and len(suit) == 1 and suit in SUITS:
        return SUITS.index(suit)
    raise ValueError(f"a suit must be 'm', 'p', 's' or 0, 1, 2, not {suit!r}")


def parse(notation: str) -> np.ndarray:
    """Parse notation such as ``"123m 456p 99s"`` into ``uint8[27]`` counts.

    Raises:
        ValueError: on an unknown character, digits without a suit letter, a
            suit letter without digits, the digit 0, or more than 4 copies of
            a tile.
    """
    if not isinstance(notation, str):
        raise ValueError(f"notation must be a string, not {type(notation).__name__}")
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
                    f"{notation!r}: suit letter {ch!r} at position {pos} has no digits"
                )
            base = SUITS.index(ch) * 9
            for rank in pending:
                counts[base + rank - 1] += 1
            pending = []
        elif ch == "0":
            raise ValueError(
                f"{notation!r}: rank 0 at position {pos} (ranks are 1..9; no red fives)"
            )
        else:
            raise ValueError(f"{notation!r}: unknown character {ch!r} at position {pos}")
    if pending:
        raise ValueError(f"{notation!r}: digits {''.join(map(str, pending))} lack a suit letter")
    over = np.flatnonzero(counts > 4)
    if over.size:
        names = ", ".join(f"{tile_name(int(i))} x{counts[i]}" for i in over)
        raise ValueError(f"{notation!r}: more than 4 copies of {names}")
    return counts.astype(np.uint8)


def to_str(counts: np.ndarray | Iterable[int]) -> str:
    """Return the canonical notation of a count vector: ``"123m456p99s"``.

    Suits appear in the order m, p, s with ranks ascending; an empty hand is ``""``.
    """
    c = as_counts(counts)
    parts = []
    for s, letter in enumerate(SUITS):
        digits = "".join(str(r + 1) * int(c[s * 9 + r]) for r in range(9))
        if digits:
            parts.append(digits + letter)
    return "".join(parts)


def as_counts(counts: object, *, name: str = "counts") -> np.ndarray:
    """Validate one count vector and return it as a C-contiguous ``uint8[27]``.

    Accepts notation strings, sequences and integer arrays of length 27.

    Raises:
        ValueError: for a wrong shape or dtype, negative counts or more than 4 copies.
    """
    if isinstance(counts, str):
        return parse(counts)
    arr = np.asarray(counts)
    if arr.shape != (NUM_TILE_TYPES,):
        raise ValueError(f"{name} must have shape (27,), got {arr.shape}")
    return _checked_uint8(arr, name)


def as_counts_batch(counts: object, *, name: str = "counts") -> np.ndarray:
    """Validate a batch of count vectors and return a C-contiguous ``uint8[N, 27]``.

    Raises:
        ValueError: for a wrong shape or dtype, negative counts or more than 4 copies.
    """
    arr = np.asarray(counts)
    if arr.ndim != 2 or arr.shape[1] != NUM_TILE_TYPES:
        raise ValueError(f"{name} must have shape (N, 27), got {arr.shape}")
    return _checked_uint8(arr, name)


def _checked_uint8(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.object_
    ):
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.dtype == np.object_:
        try:
            arr = arr.astype(np.int64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"{name} must hold integers: {exc}") from None
    if arr.dtype != np.uint8:
        if arr.size and (arr.min() < 0 or arr.max() > 4):
            raise ValueError(f"{name} values must be 0..4, got {int(arr.min())}..{int(arr.max())}")
        arr = arr.astype(np.uint8)
    elif arr.size and arr.max() > 4:
        raise ValueError(f"{name} values must be 0..4, got a {int(arr.max())}")
    return np.ascontiguousarray(arr)
