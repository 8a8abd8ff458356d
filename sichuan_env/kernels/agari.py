"""Complete-hand shapes and waits over ``uint8[27]`` count vectors.

Shape only: a concealed part of ``3k + 2`` tiles is complete when it splits
into ``k`` melds and a pair, or (14 tiles) into seven pairs where four of a
kind counts as two pairs. Suit and void legality belong to the rules layer.
Every kernel takes the tables of ``tables.py`` as arguments and trusts its
input; ``checked.py`` validates for the Python facades and holds the
batched versions.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

OVER_FOUR = -1000
"""``scan``'s ``n0`` when some count exceeds 4 (any negative size fails every size check)."""


@njit
def _suit_key(c: np.ndarray, b: int) -> tuple:
    """Base-5 key, tile count and flags of ``c[b:b+9]`` (independent terms pipeline well).

    Flags: bit 3 = some count exceeds 4, bit 0 = some count is odd. Counts are
    ``uint8`` (0..255): ``x + 3 >= 8`` exactly when ``x > 4``, and the OR of
    non-negative terms is at least 8 exactly when one of them is, so every
    count 5..255 is caught (testing bit 3 alone would miss 13, 14, 21, ...).
    """
    x0 = np.int64(c[b])
    x1 = np.int64(c[b + 1])
    x2 = np.int64(c[b + 2])
    x3 = np.int64(c[b + 3])
    x4 = np.int64(c[b + 4])
    x5 = np.int64(c[b + 5])
    x6 = np.int64(c[b + 6])
    x7 = np.int64(c[b + 7])
    x8 = np.int64(c[b + 8])
    key = (
        x0
        + 5 * x1
        + 25 * x2
        + 125 * x3
        + 625 * x4
        + 3125 * x5
        + 15625 * x6
        + 78125 * x7
        + 390625 * x8
    )
    n = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8
    over = (x0 + 3) | (x1 + 3) | (x2 + 3) | (x3 + 3) | (x4 + 3) | (x5 + 3) | (x6 + 3)
    over |= (x7 + 3) | (x8 + 3)
    odd = (x0 | x1 | x2 | x3 | x4 | x5 | x6 | x7 | x8) & 1
    return key, n, (np.int64(over > 7) << 3) | odd


@njit
def scan(counts: np.ndarray) -> tuple:
    """One pass over a hand: ``(k0, k1, k2, n0, n1, n2, odd)``.

    ``k*`` are the suits' base-5 keys and ``n*`` their tile counts; ``odd`` is
    1 when some count is odd. When some count exceeds 4 the result is
    ``(0, 0, 0, OVER_FOUR, 0, 0, 0)``: ``n0`` is negative, so every size check
    a caller makes fails, and the keys stay valid table indices, so even a
    caller that skips the check never reads outside a table.
    """
    k0, n0, f0 = _suit_key(counts, 0)
    k1, n1, f1 = _suit_key(counts, 9)
    k2, n2, f2 = _suit_key(counts, 18)
    f = f0 | f1 | f2
    if f & 8:
        return 0, 0, 0, OVER_FOUR, 0, 0, 0
    return k0, k1, k2, n0, n1, n2, f & 1


@njit
def row_key(c: np.ndarray, i: int, b: int) -> np.int64:
    """Base-5 key of ``c[i, b:b+9]``: nothing else, so batched loops stay vectorisable."""
    return (
        np.int64(c[i, b])
        + 5 * np.int64(c[i, b + 1])
        + 25 * np.int64(c[i, b + 2])
        + 125 * np.int64(c[i, b + 3])
        + 625 * np.int64(c[i, b + 4])
        + 3125 * np.int64(c[i, b + 5])
        + 15625 * np.int64(c[i, b + 6])
        + 78125 * np.int64(c[i, b + 7])
        + 390625 * np.int64(c[i, b + 8])
    )


@njit
def any_over_four(flat: np.ndarray) -> bool:
    """True if some byte of a C-contiguous ``uint8`` buffer exceeds 4 (8 bytes per step)."""
    n = flat.shape[0]
    words = n // 8
    w = flat[: words * 8].view(np.uint64)
    three = np.uint64(0x0303030303030303)
    high = np.uint64(0xF8F8F8F8F8F8F8F8)
    acc = np.uint64(0)
    for j in range(words):
        # a byte b <= 4 keeps b + 3 <= 7; b >= 5 sets a bit of 0xF8 in b + 3 or b
        acc |= (w[j] + three) | w[j]
    bad = (acc & high) != 0
    for j in range(words * 8, n):
        bad |= flat[j] > 4
    return bad


@njit
def win_from_flags(f0: int, f1: int, f2: int) -> bool:
    """``is_win`` from the three suits' ``FLAGS`` bytes (size, completeness, evenness)."""
    n = (f0 >> 2) + (f1 >> 2) + (f2 >> 2)
    both = f0 & f1 & f2
    return (n % 3 == 2) & (((both & 1) == 1) | ((n == 14) & ((both & 2) == 2)))


@njit
def win_from_keys(k0: int, k1: int, k2: int, n: int, odd: int, flags: np.ndarray) -> bool:
    """``is_win`` once the suits are scanned (``n`` total tiles, ``odd`` some count odd)."""
    if n < 0 or n % 3 != 2:
        return False
    if n == 14 and odd == 0:
        return True  # seven pairs
    return (flags[k0] & flags[k1] & flags[k2] & 1) == 1


@njit
def _suit_waits(w: int, residue: int, others_complete: int) -> int:
    """Ranks of one suit that complete the hand, given the other two suits' state."""
    if not others_complete:
        return 0
    if residue == 1:
        return (w >> 9) & 0x1FF  # this suit takes the pair
    if residue == 2:
        return w & 0x1FF  # this suit becomes melds; another suit holds the pair
    return 0


@njit
def waits_from_keys(
    k0: int,
    k1: int,
    k2: int,
    n0: int,
    n1: int,
    n2: int,
    void: int,
    waits: np.ndarray,
) -> int:
    """``waits_mask`` once the suits are scanned."""
    n = n0 + n1 + n2
    if n < 0 or n % 3 != 1:
        return 0
    w0 = np.int64(waits[k0])
    w1 = np.int64(waits[k1])
    w2 = np.int64(waits[k2])
    c0 = (w0 >> 26) & 1
    c1 = (w1 >> 26) & 1
    c2 = (w2 >> 26) & 1
    out = _suit_waits(w0, n0 % 3, c1 & c2)
    out |= _suit_waits(w1, n1 % 3, c0 & c2) << 9
    out |= _suit_waits(w2, n2 % 3, c0 & c1) << 18
    if n == 13:
        n_odd = ((w0 >> 18) & 15) + ((w1 >> 18) & 15) + ((w2 >> 18) & 15)
        if n_odd == 1:  # six pairs and a single (or a triplet): wait on the odd tile
            if (w0 >> 18) & 15:
                out |= 1 << ((w0 >> 22) & 15)
            elif (w1 >> 18) & 15:
                out |= 1 << (9 + ((w1 >> 22) & 15))
            else:
                out |= 1 << (18 + ((w2 >> 22) & 15))
    if void >= 0:
        held = n0 if void == 0 else (n1 if void == 1 else n2)
        if held > 0:
            return 0
        out &= ~(0x1FF << (9 * void))
    return out


@njit
def waits_mask(counts: np.ndarray, void: int, waits: np.ndarray) -> int:
    """Bit ``t`` set for each tile ``t`` completing a ``3k + 1`` concealed part.

    Never a tile already held 4 times; never the void suit (``void`` 0..2, or
    -1 for none); nothing at all when the part holds a tile of the void suit.
    """
    k0, k1, k2, n0, n1, n2, _ = scan(counts)
    return waits_from_keys(k0, k1, k2, n0, n1, n2, void, waits)


@njit
def mask_to_row(mask: int, row: np.ndarray) -> None:
    """Write a 27-bit tile mask into a ``bool[27]`` row."""
    for t in range(27):
        row[t] = (mask >> t) & 1


@njit(nogil=False)
def mask_to_indices(mask: int) -> np.ndarray:
    """Sorted tile indices of the bits set in a 27-bit mask."""
    n = 0
    for t in range(27):
        n += (mask >> t) & 1
    out = np.empty(n, dtype=np.int64)
    j = 0
    for t in range(27):
        if (mask >> t) & 1:
            out[j] = t
            j += 1
    return out
