"""Per-suit lookup tables, built once by numba and cached on disk.

One suit of a hand is nine counts 0..4, keyed in base 5:
``key = c[0] + 5*c[1] + ... + 5**8 * c[8]`` (``NUM_KEYS = 5**9`` keys). The
tables answer, per key, everything the hand kernels need:

``FLAGS`` (``uint8[NUM_KEYS]``)
    Bit 0: the suit splits into melds (triplets, same-suit runs), plus
    exactly one pair when its tile count is ``3k + 2`` (counts of ``3k + 1``
    are never complete); bit 1: every count is even (seven pairs); bits
    2..7: the suit's tile count. One byte per key, so batched kernels need
    no per-tile work beyond the key itself.
``WAITS`` (``uint32[NUM_KEYS]``)
    Bits 0..8: ranks ``r`` (with ``c[r] < 4``) whose addition makes the suit
    melds only; bits 9..17: ranks whose addition makes it melds + one pair;
    bits 18..21: how many ranks have an odd count; bits 22..25: the highest
    such rank (for seven-pairs waits); bit 26: the suit is complete as it is
    (``FLAGS`` bit 0, repeated so that waits read one table).
``DIST`` (``uint64[NUM_KEYS]``)
    4-bit field ``2*m + p`` (bits ``8m + 4p``; ``m`` = 0..4 melds, ``p`` = 0/1
    pair) is the least number of tiles that must be added to the suit (each
    count stays <= 4) to contain ``m`` melds and ``p`` pairs: the exact
    per-suit distance that shanten adds up over suits. Bits 40..44 count the
    suit's free seven-pairs slots (a pair held; a quad gives two), bits
    48..51 the slots one tile away (a single, or a triplet's second pair),
    bits 56..61 the suit's tile count.

Building takes about a second. The result is stored as ``tables-v{VERSION}.npz``
in ``$SICHUAN_ENV_CACHE_DIR`` (default ``~/.cache/sichuan_env``). Nothing read
back is trusted: every array's header is checked before its data is read and
the content must hash to ``TABLES_SHA256``; a truncated, corrupt or altered
cache is reported in one logging line (logger ``sichuan_env``) and rebuilt, a
missing one is rebuilt silently, and an unwritable cache directory only costs
the rebuild.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import cast

import numpy as np

from .._jit import njit

VERSION = 6
"""Bump when the layout or content of a table changes (invalidates the cache)."""
TABLES_SHA256 = "c41b989d41a0353935782181f3b0f80594b0a473d2368c07918e851aee535507"
"""SHA-256 of the tables' bytes in ``_EXPECTED`` order; update it with ``VERSION``."""
NUM_KEYS = 5**9
"""Number of per-suit keys."""
MAX_MELDS = 4
"""Most melds a suit target may hold (a hand has 4 melds and a pair)."""
POW5 = np.array([5**i for i in range(9)], dtype=np.int64)
"""Place values of the base-5 suit key."""

_lock = threading.Lock()
_tables: dict[str, np.ndarray] | None = None


@njit
def _mark_complete_configs(pow5: np.ndarray) -> np.ndarray:
    """Mark, per target ``2*m + p``, every suit key that is exactly m melds + p pairs.

    Returns ``bool[NUM_KEYS, 10]``. Meld patterns: 9 triplets and 7 runs.
    """
    out = np.zeros((NUM_KEYS, 2 * (MAX_MELDS + 1)), dtype=np.bool_)
    c = np.zeros(9, dtype=np.int64)
    n_patterns = 16
    # Enumerate multisets of up to 4 meld patterns as non-decreasing index tuples.
    idx = np.zeros(MAX_MELDS, dtype=np.int64)
    for m in range(MAX_MELDS + 1):
        total = 1
        for _ in range(m):
            total *= n_patterns
        for code in range(total):
            x = code
            ok = True
            prev = 0
            for j in range(m):
                idx[j] = x % n_patterns
                x //= n_patterns
                if idx[j] < prev:
                    ok = False
                prev = idx[j]
            if not ok:
                continue
            c[:] = 0
            for j in range(m):
                p = idx[j]
                if p < 9:
                    c[p] += 3
                else:
                    r = p - 9
                    c[r] += 1
                    c[r + 1] += 1
                    c[r + 2] += 1
            for pair in range(-1, 9):
                if pair >= 0:
                    c[pair] += 2
                valid = True
                key = 0
                for r in range(9):
                    if c[r] > 4:
                        valid = False
                    key += c[r] * pow5[r]
                if valid:
                    out[key, 2 * m + (1 if pair >= 0 else 0)] = True
                if pair >= 0:
                    c[pair] -= 2
    return out


@njit
def _distances(complete: np.ndarray, pow5: np.ndarray) -> np.ndarray:
    """Per key and target, the least tiles to add to reach a complete target.

    ``dist(H) = |T| - max |H'|`` over sub-multisets ``H' <= H`` that lie below
    some complete target ``T``; the reachable set is closed downwards first.
    """
    n_targets = complete.shape[1]
    below = complete.copy()
    digits = np.zeros(9, dtype=np.int64)
    # Downward closure: H is below a target if H + e_r is (keys grow with e_r).
    for key in range(NUM_KEYS - 1, -1, -1):
        x = key
        for r in range(9):
            digits[r] = x % 5
            x //= 5
        for r in range(9):
            if digits[r] < 4:
                up = key + pow5[r]
                for t in range(n_targets):
                    if below[up, t]:
                        below[key, t] = True
    best = np.zeros((NUM_KEYS, n_targets), dtype=np.int8)  # max |H'| per target
    for key in range(NUM_KEYS):
        x = key
        size = 0
        for r in range(9):
            digits[r] = x % 5
            size += digits[r]
            x //= 5
        for t in range(n_targets):
            if below[key, t]:
                best[key, t] = size
            else:
                b = 0
                for r in range(9):
                    if digits[r] > 0:
                        v = best[key - pow5[r], t]
                        b = max(b, v)
                best[key, t] = b
    out = np.zeros(NUM_KEYS, dtype=np.uint64)
    for key in range(NUM_KEYS):
        packed = np.uint64(0)
        x = key
        free = 0
        one = 0
        size_of = 0
        for _ in range(9):
            c = x % 5
            size_of += c
            x //= 5
            if c >= 2:
                free += 1
            if c == 4:
                free += 1
            if c == 1 or c == 3:
                one += 1
        packed |= np.uint64(free) << np.uint64(40)
        packed |= np.uint64(one) << np.uint64(48)
        packed |= np.uint64(size_of) << np.uint64(56)
        for t in range(n_targets):
            size = 3 * (t // 2) + 2 * (t % 2)
            d = size - best[key, t]
            packed |= np.uint64(d) << np.uint64(4 * t)
        out[key] = packed
    return out


@njit
def _complete_and_waits(complete: np.ndarray, pow5: np.ndarray) -> tuple:
    """Per-key flags (complete, all even, size) and wait masks."""
    flags = np.zeros(NUM_KEYS, dtype=np.uint8)
    natural = np.zeros(NUM_KEYS, dtype=np.bool_)
    for key in range(NUM_KEYS):
        x = key
        size = 0
        even = 1
        for _ in range(9):
            d = x % 5
            size += d
            if d % 2:
                even = 0
            x //= 5
        m = size // 3
        if (m <= MAX_MELDS and size % 3 == 0 and complete[key, 2 * m]) or (
            m <= MAX_MELDS and size % 3 == 2 and complete[key, 2 * m + 1]
        ):
            natural[key] = True
        flags[key] = np.uint8(np.int64(natural[key]) | (even << 1) | (size << 2))
    waits = np.zeros(NUM_KEYS, dtype=np.uint32)
    for key in range(NUM_KEYS):
        x = key
        size = 0
        w = 0
        for _ in range(9):
            d = x % 5
            x //= 5
            size += d
        x = key
        n_odd = 0
        odd_rank = 0
        for r in range(9):
            d = x % 5
            x //= 5
            if d % 2 == 1:
                n_odd += 1
                odd_rank = r
            if d < 4 and natural[key + pow5[r]]:
                if (size + 1) % 3 == 0:
                    w |= 1 << r
                else:
                    w |= 1 << (r + 9)
        waits[key] = w | (n_odd << 18) | (odd_rank << 22) | (np.int64(natural[key]) << 26)
    return flags, waits


def build_tables() -> dict[str, np.ndarray]:
    """Build every table from scratch (about a second once the builders are compiled)."""
    complete = _mark_complete_configs(POW5)
    flags, waits = _complete_and_waits(complete, POW5)
    dist = _distances(complete, POW5)
    return {"FLAGS": flags, "WAITS": waits, "DIST": dist}


_EXPECTED = {
    "FLAGS": (np.uint8, (NUM_KEYS,)),
    "WAITS": (np.uint32, (NUM_KEYS,)),
    "DIST": (np.uint64, (NUM_KEYS,)),
}
_log = logging.getLogger("sichuan_env")


def cache_dir() -> Path:
    """The directory that holds the cached tables."""
    env = os.environ.get("SICHUAN_ENV_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "sichuan_env"


def digest(tables: dict[str, np.ndarray]) -> str:
    """SHA-256 (hex) of the tables' bytes, in the fixed order of ``_EXPECTED``."""
    h = hashlib.sha256()
    for name in _EXPECTED:
        h.update(np.ascontiguousarray(tables[name]).data)
    return h.hexdigest()


class CorruptCacheError(Exception):
    """A cache file that exists but cannot be trusted."""


def _read_member(zf: zipfile.ZipFile, name: str) -> np.ndarray:
    """One ``.npy`` member, its header checked before any data is read."""
    dtype, shape = _EXPECTED[name]
    with zf.open(f"{name}.npy") as fp:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            got_shape, fortran, got_dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            got_shape, fortran, got_dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise CorruptCacheError(f"{name}: .npy format version {version}")
        if got_dtype != np.dtype(dtype) or got_shape != shape or fortran:
            raise CorruptCacheError(
                f"{name}: {got_dtype}{got_shape}, expected {np.dtype(dtype)}{shape}"
            )
        reader = cast("zipfile.ZipExtFile", fp)  # what ZipFile.open returns (typeshed: IO[bytes])
        out = np.empty(shape, dtype=dtype)  # writable: kernels with signatures need that
        buf = out.data.cast("B")  # the array's own buffer, as bytes
        got = 0
        while got < len(buf):
            n = reader.readinto(buf[got:])
            if not n:
                raise CorruptCacheError(f"{name}: truncated after {got} of {len(buf)} bytes")
            got += n
    return out


def _load(path: Path) -> dict[str, np.ndarray] | None:
    """The cached tables, None if there is no cache file; CorruptCacheError if untrustworthy."""
    if not path.exists():
        return None
    try:
        with zipfile.ZipFile(path) as zf:
            out = {name: _read_member(zf, name) for name in _EXPECTED}
    except CorruptCacheError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file may raise anything (BadZipFile, ...)
        raise CorruptCacheError(f"{type(exc).__name__}: {exc}") from None
    if digest(out) != TABLES_SHA256:
        raise CorruptCacheError("content does not match TABLES_SHA256")
    return out


def _save(path: Path, tables: dict[str, np.ndarray]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            # allow_pickle: numpy's default, named so that no table is taken for it
            np.savez(fh, allow_pickle=True, **tables)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a rebuild next time


def get_tables() -> dict[str, np.ndarray]:
    """Return the tables, loading them from the disk cache or building them once.

    A cache that cannot be trusted is reported in one ``WARNING`` line of the
    ``sichuan_env`` logger and replaced by freshly built tables.
    """
    global _tables
    if _tables is None:
        with _lock:
            if _tables is None:
                path = cache_dir() / f"tables-v{VERSION}.npz"
                try:
                    tables = _load(path)
                except CorruptCacheError as exc:
                    reason = " ".join(str(exc).split())[:200]
                    _log.warning(
                        "sichuan_env: table cache %s is corrupt (%s); rebuilding it", path, reason
                    )
                    tables = None
                if tables is None:
                    tables = build_tables()
                    if digest(tables) == TABLES_SHA256:
                        _save(path, tables)
                    else:  # the builder changed without TABLES_SHA256: never cache such tables
                        _log.warning(
                            "sichuan_env: built tables do not match tables.TABLES_SHA256 "
                            "(update it and VERSION after changing a table)"
                        )
                _tables = tables
    return _tables
