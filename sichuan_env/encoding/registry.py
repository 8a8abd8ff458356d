"""The registry of observation versions: ``{version: ObsVersion(spec, writers)}``.

An observation version is a contract: a table of row blocks (``blocks``, and
``oracle_blocks`` appended for the oracle view) and the numba writers that
fill it. Envs and agents look a version up here and never name a writer
directly, so a new feature is a new version module that calls ``register``::

    register(ObsVersion(2, blocks=..., oracle_blocks=..., encode_at=..., encode_batch=...))

Writers (numba, from ``sichuan_env._jit``):

- ``encode_at(states, i, me, oracle, rules, out)``: seat ``me``'s observation
  of hand ``states[i]`` into ``out`` (``uint8[rows, 27]``, every entry written);
- ``encode_batch(states, seats, oracle, rules, obs)``: for every hand ``i``,
  the observation of the seat to act into ``obs[i]`` and that seat into
  ``seats[i]`` (parallel over hands).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Blocks = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ObsVersion:
    """One observation version: its row blocks and its writers."""

    version: int
    blocks: Blocks
    oracle_blocks: Blocks
    encode_at: Callable[..., Any]
    encode_batch: Callable[..., Any]
    doc: str = ""
    encode_rows: Callable[..., Any] | None = None

    def encode_many(
        self,
        states: np.ndarray,
        idx: np.ndarray,
        seats: np.ndarray,
        oracle: bool,
        rules: Any,
        out: np.ndarray,
    ) -> None:
        """Seat ``seats[j]``'s observation of ``states[idx[j]]`` into ``out[j]``, every ``j``.

        One parallel kernel call where the version registers ``encode_rows``, else one
        ``encode_at`` call per row (the same values).

        Raises:
            ValueError: ``idx`` and ``seats`` are not 1-D and of one length, an index is
                outside ``states`` or a seat outside 0..3, or ``out`` is not a C-contiguous
                ``uint8[len(idx), rows, 27]`` of this version (with ``oracle``'s rows).
        """
        idx, seats = np.asarray(idx), np.asarray(seats)
        shape = (len(idx), *self.shape(bool(oracle)))
        if idx.ndim != 1 or seats.shape != idx.shape:
            raise ValueError(f"idx {idx.shape} and seats {seats.shape} must be 1-D, one length")
        if idx.size and (idx.min() < 0 or idx.max() >= len(states)):
            raise ValueError(f"idx must index the {len(states)} hands of states")
        if seats.size and (seats.min() < 0 or seats.max() > 3):
            raise ValueError("seats must be 0..3")
        if out.shape != shape or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous uint8 array of shape {shape}")
        if self.encode_rows is not None:
            self.encode_rows(states, idx, seats, oracle, rules, out)
            return
        for j in range(len(idx)):
            self.encode_at(states, int(idx[j]), int(seats[j]), oracle, rules, out[j])

    def rows(self, oracle: bool = False) -> int:
        """Rows of an observation (with the oracle rows when ``oracle``)."""
        return sum(n for _, n in self.blocks + (self.oracle_blocks if oracle else ()))

    def shape(self, oracle: bool = False) -> tuple[int, int]:
        """``(rows, 27)``."""
        return (self.rows(oracle), 27)

    def offsets(self, oracle: bool = False) -> dict[str, tuple[int, int]]:
        """``{block: (first row, rows)}`` in order."""
        out, row = {}, 0
        for name, n in self.blocks + (self.oracle_blocks if oracle else ()):
            out[name] = (row, n)
            row += n
        return out


_VERSIONS: dict[int, ObsVersion] = {}


def register(spec: ObsVersion, *, replace: bool = False) -> None:
    """Add an observation version.

    Raises:
        TypeError: ``spec`` is not an ``ObsVersion``.
        ValueError: the version exists (and ``replace`` is off), or its blocks are malformed.
    """
    if not isinstance(spec, ObsVersion):
        raise TypeError(f"register takes an ObsVersion, got {type(spec).__name__}")
    if not isinstance(spec.version, int) or isinstance(spec.version, bool) or spec.version < 1:
        raise ValueError(f"an observation version is an integer >= 1, got {spec.version!r}")
    if spec.version in _VERSIONS and not replace:
        raise ValueError(f"observation version {spec.version} is registered already")
    names = [name for name, _ in spec.blocks + spec.oracle_blocks]
    if len(set(names)) != len(names) or any(
        not isinstance(n, int) or n < 1 for _, n in spec.blocks + spec.oracle_blocks
    ):
        raise ValueError(f"version {spec.version}: block names must be unique, rows >= 1")
    _VERSIONS[spec.version] = spec


def get(version: object) -> ObsVersion:
    """The registered version.

    Raises:
        ValueError: an unknown version (naming the known ones).
    """
    spec = (
        _VERSIONS.get(version)
        if isinstance(version, int) and not isinstance(version, bool)
        else None
    )
    if spec is None:
        raise ValueError(f"unknown observation version {version!r}; known: {versions()}")
    return spec


def versions() -> list[int]:
    """The registered versions, ascending."""
    return sorted(_VERSIONS)


def obs_rows(version: int = 1, oracle: bool = False) -> int:
    """Rows of an observation of this version.

    Raises:
        ValueError: for an unknown version.
    """
    return get(version).rows(oracle)


def obs_shape(version: int = 1, oracle: bool = False) -> tuple[int, int]:
    """``(rows, 27)`` of an observation of this version."""
    return get(version).shape(oracle)


def block_offsets(version: int = 1, oracle: bool = False) -> dict[str, tuple[int, int]]:
    """``{block: (first row, rows)}`` of a version, for readers of observations."""
    return get(version).offsets(oracle)
