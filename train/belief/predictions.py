"""Another predictor's beliefs on a dataset's rows, read from files and checked (the report's input).

A prediction file is an ``.npz`` (numpy's zip of arrays, no pickles) holding

- ``keys``: integers ``[n, 2]``, the ``(game_id, decision)`` of each row, each once;
- for one or more heads of the table (``sichuan_env.agents.belief.heads``): floats
  ``[n, *shape]``, probabilities in ``[0, 1]`` (e.g. ``tenpai [n, 3]``, ``deal_in [n, 27]``);

any other array is ignored (``research.hand_reading.filter_eval --save`` writes
this format, with its search statistics beside). Nothing read is trusted: each
array's header (dtype, shape) is checked before its data is read, then the
values; several files of one predictor merge, and a row predicted twice is an
error. ``PredictionTable.lookup`` then finds a dataset batch's rows and says
which are missing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from sichuan_env.agents.belief.heads import HEADS, Head

from sichuan_env._npz import Spec, safe_load_npz

MAX_ROWS = 5_000_000
"""Rows one prediction file may hold."""
MAX_BYTES = 1 << 31
"""Bytes the arrays of a prediction file may declare together (checked before they are read)."""
DECISIONS = 1 << 20
"""Decision indices must lie in ``[0, DECISIONS)`` (a row's code is ``game_id * DECISIONS + decision``)."""
SPECS = {
    "keys": Spec(("n", None), required=False),
    **{h.name: Spec(("n", *h.shape), required=False) for h in HEADS},
}
"""What ``load_predictions`` reads of a file (``sichuan_env._npz``: headers and sizes checked
before any data is read; dtypes and values then by ``PredictionTable``)."""


class PredictionTable:
    """One predictor's probabilities by ``(game_id, decision)``, checked.

    Args:
        keys: ``int[n, 2]`` rows ``(game_id, decision)``, each once.
        arrays: ``{head name: float[n, *shape]}``, probabilities, at least one head of the table.
        source: where they came from (for messages).

    Raises:
        ValueError: bad keys (shape, type, range, repeats), an unknown head, or arrays of
            the wrong dtype, shape or range.
    """

    def __init__(
        self, keys: np.ndarray, arrays: Mapping[str, np.ndarray], source: str = ""
    ) -> None:
        self.source = source
        keys = np.asarray(keys)
        if keys.dtype.kind not in "iu" or keys.ndim != 2 or keys.shape[1] != 2:
            raise ValueError(
                f"{source}: keys must be integers [n, 2], got {keys.dtype} {keys.shape}"
            )
        if len(keys) > MAX_ROWS:
            raise ValueError(f"{source}: more than {MAX_ROWS} rows")
        keys = keys.astype(np.int64)
        if len(keys) and (keys.min() < 0 or keys[:, 0].max() >= (1 << 62) // DECISIONS
                          or keys[:, 1].max() >= DECISIONS):  # fmt: skip
            raise ValueError(f"{source}: keys out of range")
        heads = {h.name: h for h in HEADS}
        unknown = sorted(set(arrays) - set(heads))
        if unknown or not arrays:
            raise ValueError(
                f"{source}: arrays must name heads of {list(heads)}, got {sorted(arrays)}"
            )
        self.arrays: dict[str, np.ndarray] = {}
        for name in (h.name for h in HEADS if h.name in arrays):
            self.arrays[name] = _probabilities(arrays[name], heads[name], len(keys), source)
        codes = keys[:, 0] * DECISIONS + keys[:, 1]
        self.order = np.argsort(codes, kind="stable")
        self.codes = codes[self.order]
        if len(codes) and (np.diff(self.codes) == 0).any():
            i = self.order[1:][np.diff(self.codes) == 0][0]
            raise ValueError(f"{source}: predicts (game_id, decision) {tuple(keys[i])} twice")
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def heads(self) -> tuple[str, ...]:
        """The heads it predicts, in table order."""
        return tuple(self.arrays)

    def lookup(self, game_id: np.ndarray, decision: np.ndarray) -> dict[str, np.ndarray]:
        """``{head: float32[N, *shape]}`` of the rows ``(game_id[i], decision[i])``.

        Raises:
            ValueError: a row it does not predict.
        """
        codes = np.asarray(game_id, np.int64) * DECISIONS + np.asarray(decision, np.int64)
        pos = np.minimum(np.searchsorted(self.codes, codes), max(len(self.codes) - 1, 0))
        found = (self.codes[pos] == codes) if len(self.codes) else np.zeros(len(codes), bool)
        if not found.all():
            i = int(np.flatnonzero(~found)[0])
            raise ValueError(f"{self.source}: no prediction for (game_id, decision) "
                             f"({int(game_id[i])}, {int(decision[i])})")  # fmt: skip
        rows = self.order[pos]
        return {k: v[rows] for k, v in self.arrays.items()}

    @classmethod
    def merge(cls, tables: Sequence[PredictionTable]) -> PredictionTable:
        """One table of several (e.g. one folder split over processes); the same heads each.

        Raises:
            ValueError: no tables, different heads, or a row in two tables.
        """
        if not tables:
            raise ValueError("no prediction tables to merge")
        if any(t.heads != tables[0].heads for t in tables):
            raise ValueError("merged prediction files must predict the same heads")
        arrays = {h: np.concatenate([t.arrays[h] for t in tables]) for h in tables[0].heads}
        source = ", ".join(t.source for t in tables)
        return cls(np.concatenate([t.keys for t in tables]), arrays, source)


def _probabilities(a: np.ndarray, head: Head, n: int, source: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind != "f" or a.shape != (n, *head.shape):
        raise ValueError(f"{source}: {head.name} must be floats of shape {(n, *head.shape)}, "
                         f"got {a.dtype} {a.shape}")  # fmt: skip
    if a.size and (not np.isfinite(a).all() or a.min() < 0 or a.max() > 1):
        raise ValueError(f"{source}: {head.name} must hold probabilities in [0, 1]")
    return a if a.dtype.itemsize >= 4 else a.astype(np.float32)


def load_predictions(paths: Sequence[str | os.PathLike]) -> PredictionTable:
    """Read prediction files (the module docstring) and merge them into one table.

    Raises:
        ValueError: a file that is missing, not an ``.npz``, without ``keys`` or any head,
            with bad arrays, or rows predicted twice.
    """
    if not paths:
        raise ValueError("no prediction files")
    tables = []
    for p in paths:
        path = str(p)
        arrays = safe_load_npz(path, SPECS, max_bytes=MAX_BYTES, what="prediction file")
        if "keys" not in arrays or len(arrays) == 1:
            raise ValueError(f"{path}: a prediction file holds keys and some heads")
        keys = arrays.pop("keys")
        tables.append(PredictionTable(keys, arrays, Path(path).name))
    return tables[0] if len(tables) == 1 else PredictionTable.merge(tables)
