"""``.npz`` files that nothing trusts: headers checked against the caller's schema before any data.

``np.load`` allocates what an array's header declares before it reads a byte
of data, so a 21 KB file whose header says ``(10**11, 83, 27)`` is a
``MemoryError``, not a clear message. ``safe_load_npz`` opens the zip itself
and, for every array the caller expects (``Spec``), reads only the ``.npy``
header first and checks it:

- the dtype (an exact one, or a kind such as floats), never an object array;
- the shape, dimension by dimension (a fixed size, or a named size that every
  array sharing the name must agree on, e.g. the rows ``"n"``);
- the size: the bytes the header declares must be the bytes the zip member
  holds, that member may not claim more than deflate can expand its
  compressed bytes to (``MAX_RATIO``), nor lie outside the file, and all
  arrays together stay under ``max_bytes``.

Only then is the data read (``allow_pickle=False``; the zip's CRC checks it).
Every problem is a ``ValueError`` naming the file and the array. Imports
nothing from the package, so any layer may use it.
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_RATIO = 1100
"""Deflate expands a byte to at most about 1032 bytes: a member claiming more is a lie."""
MAX_BYTES = 1 << 31
"""Default bound on the bytes of all the arrays read from one file."""
MAX_HEADER = 10_000
"""Bytes an ``.npy`` header may take (numpy's own default bound)."""


@dataclass(frozen=True)
class Spec:
    """What one array of an ``.npz`` must look like.

    Attributes:
        shape: per dimension, a size (int), a name (str: arrays sharing the name agree
            on that size) or None (any size).
        dtype: the exact dtype (``"uint8"``), or None to accept the ``kinds``.
        kinds: the accepted ``dtype.kind`` letters when ``dtype`` is None (``"f"``: floats,
            ``"iu"``: integers; ``""``: any plain dtype, left to the caller to check).
        required: a missing array is an error (else it is left out of the result).
    """

    shape: tuple[int | str | None, ...]
    dtype: str | None = None
    kinds: str = ""
    required: bool = True


def _header(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype, int]:
    """``(shape, dtype, header bytes)`` of an ``.npy`` member, its data unread."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                f, max_header_size=MAX_HEADER
            )
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                f, max_header_size=MAX_HEADER
            )
        else:
            raise ValueError(f"unknown .npy version {version}")
        del fortran
        return tuple(int(d) for d in shape), dtype, f.tell()


def _plain(dtype: np.dtype) -> bool:
    """A numeric or boolean dtype without fields, sub-arrays or objects."""
    return not (dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None) and (
        dtype.kind in "biufc"
    )


def _check_dtype(dtype: np.dtype, spec: Spec) -> bool:
    if spec.dtype is not None:
        return dtype == np.dtype(spec.dtype)
    return not spec.kinds or dtype.kind in spec.kinds


def safe_load_npz(
    path: str | os.PathLike,
    expected: Mapping[str, Spec],
    *,
    max_bytes: int = MAX_BYTES,
    what: str = "file",
) -> dict[str, np.ndarray]:
    """The arrays ``expected`` names, read from ``path`` after their headers check out.

    Arrays of the file that ``expected`` does not name are neither checked nor read.

    Args:
        path: the ``.npz`` file.
        expected: ``{array name: Spec}``.
        max_bytes: bound on the bytes of all the arrays read.
        what: what the file is, for messages (``"label shard"``).

    Returns:
        ``{name: array}`` of the expected arrays present (every required one).

    Raises:
        ValueError: a missing or unreadable file, a missing array, a header that does not
            match its ``Spec`` or declares more bytes than the file can hold, or data that
            does not match its header.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: not a {what} (no such file)")
    size = path.stat().st_size
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise ValueError(f"{path}: not a {what} ({exc})") from None
    out: dict[str, np.ndarray] = {}
    with zf:
        members = {i.filename[:-4]: i for i in zf.infolist() if i.filename.endswith(".npy")}
        missing = [k for k, s in expected.items() if s.required and k not in members]
        if missing:
            raise ValueError(f"{path}: {what} lacks the arrays {missing}")
        dims: dict[str, int] = {}
        total = 0
        for name, spec in expected.items():
            info = members.get(name)
            if info is None:
                continue
            where = f"{path}: {what} array {name!r}"
            if info.compress_size > size or (
                info.file_size > MAX_RATIO * max(info.compress_size, 1) + MAX_HEADER
            ):
                raise ValueError(f"{where} claims {info.file_size} bytes, more than the file holds")
            try:
                shape, dtype, head = _header(zf, info)
            except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
                raise ValueError(f"{where}: unreadable header ({exc})") from None
            if not _plain(dtype):
                raise ValueError(f"{where} is not a plain array ({dtype})")
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes + head != info.file_size:
                raise ValueError(
                    f"{where} is not an array of a sane size: its header declares {shape} "
                    f"{dtype} ({nbytes} bytes), the file holds {info.file_size - head}"
                )
            if not _check_dtype(dtype, spec):
                wanted = spec.dtype or f"kind {spec.kinds!r}"
                raise ValueError(f"{where} has dtype {dtype}, expected {wanted}")
            if len(shape) != len(spec.shape):
                raise ValueError(f"{where} has shape {shape}, expected {spec.shape}")
            for got, want in zip(shape, spec.shape, strict=True):
                if isinstance(want, int) and got != want:
                    raise ValueError(f"{where} has shape {shape}, expected {spec.shape}")
                if isinstance(want, str) and dims.setdefault(want, got) != got:
                    raise ValueError(
                        f"{where} has {got} for the size {want!r}, other arrays {dims[want]}"
                    )
            total += nbytes
            if total > max_bytes:
                raise ValueError(f"{path}: {what} arrays exceed {max_bytes} bytes")
        for name in expected:
            if name not in members:
                continue
            try:
                with zf.open(members[name]) as f:
                    out[name] = np.lib.format.read_array(
                        f, allow_pickle=False, max_header_size=MAX_HEADER
                    )
            except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
                raise ValueError(f"{path}: {what} array {name!r} cannot be read ({exc})") from None
    return out


__all__ = ["MAX_BYTES", "MAX_RATIO", "Spec", "safe_load_npz"]
