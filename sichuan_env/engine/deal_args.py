"""The checked arguments of a deal: a seed, or a wall with its dealer and 换三张 offset.

``Game`` (and every host that takes a seed) checks what it is given here
before anything is dealt: ``validate_seed`` a seed, ``validate_wall`` a wall
in draw order (docs/rules.md §10), and ``deal_args`` the combination, which a
seed turns into a wall, a dealer and an offset (``deal.make_deal``).
"""

from __future__ import annotations

import numpy as np

from ..rules.config import RuleConfig
from ..tiles import tile_name
from . import deal as _deal


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def validate_wall(wall: object) -> np.ndarray:
    """``uint8[108]``: a wall of 108 tile indices 0..26 holding every tile exactly 4 times.

    Raises:
        ValueError: another shape or dtype, an index out of range, or wrong counts.
    """
    arr = np.asarray(wall)
    if arr.shape != (108,) or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"wall must be 108 tile indices, got shape {arr.shape} dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() > 26:
        raise ValueError("wall tile indices must be 0..26")
    counts = np.bincount(arr, minlength=27)
    if not np.all(counts == 4):
        bad = {tile_name(int(t)): int(c) for t, c in enumerate(counts) if c != 4}
        raise ValueError(f"wall must hold every tile exactly 4 times; off: {bad}")
    return arr.astype(np.uint8)


def validate_seed(seed: object, name: str = "seed") -> int:
    """A seed as a Python int in ``[0, 2**64)``.

    Raises:
        TypeError: not an integer (booleans and floats included).
        ValueError: out of range.
    """
    if not _is_int(seed):
        raise TypeError(f"{name} must be an integer in [0, 2**64), got {seed!r}")
    if not 0 <= int(seed) < 2**64:  # type: ignore[call-overload]
        raise ValueError(f"{name} must be in [0, 2**64), got {seed}")
    return int(seed)  # type: ignore[call-overload]


def deal_args(
    rules: RuleConfig,
    seed: object,
    wall: object,
    dealer: object,
    exchange_offset: object,
) -> tuple[np.ndarray, int, int, int | None]:
    """``(wall, dealer, exchange offset, seed)`` of a new hand, from ``Game``'s arguments.

    Without a wall, the seed (None: a random one) draws the wall, the dealer and
    the offset, and is returned; with a wall, the dealer (default 0) and, when
    ``rules`` has 换三张, the offset (1, 2 or 3) are checked, and the seed is None.

    Raises:
        TypeError: a seed that is not an integer.
        ValueError: a bad seed, wall, dealer or offset, or ``dealer`` /
            ``exchange_offset`` given with a seed (the seed draws them).
    """
    if wall is None:
        if dealer is not None or exchange_offset is not None:
            raise ValueError("dealer and exchange_offset go with a wall; a seed draws them itself")
        if seed is None:
            seed = int(np.random.default_rng().integers(0, 2**63))
        checked = validate_seed(seed)
        w = np.empty(108, dtype=np.uint8)
        dealt, offset = _deal.make_deal(np.uint64(checked), w)
        return w, int(dealt), int(offset), checked
    if seed is not None:
        raise ValueError("give either a seed or a wall, not both")
    w = validate_wall(wall)
    dealer = 0 if dealer is None else dealer
    if not _is_int(dealer) or not 0 <= dealer < 4:  # type: ignore[operator]
        raise ValueError(f"dealer must be an integer 0..3, got {dealer!r}")
    if rules.exchange_three:
        if not _is_int(exchange_offset) or exchange_offset not in (1, 2, 3):
            raise ValueError(
                f"换三张 is on: exchange_offset must be 1, 2 or 3, got {exchange_offset!r}"
            )
        offset = exchange_offset
    else:
        if exchange_offset is not None:
            raise ValueError("exchange_offset is only for rules with exchange_three")
        offset = 0
    return w, int(dealer), int(offset), None  # type: ignore[call-overload]
