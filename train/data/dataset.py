"""The opponent-modelling dataset: its schema, a reader, and a torch ``IterableDataset``.

A dataset folder (written by ``python -m sichuan_env.train.data.make_dataset``) holds:

- ``dataset.json``: format, observation version and shape, lineup, rules, seed,
  hands, the command that made it, and the column table below;
- ``decisions/part-NNNNN.parquet``: one row per decision of every hand, any seat;
- ``games.parquet``: one row per hand: its seed, lineup by seat, final scores,
  and each seat's public event tokens (``sichuan_env.encoding.events``);
- ``records.jsonl``: each hand's game record (docs/rules.md §10), with its ``game_id``,
  so every row can be replayed with ``Game.from_record``.

Decision rows (``DECISION_COLUMNS``):

| column | type | meaning |
| --- | --- | --- |
| game_id | int64 | the hand (``games.parquet``, ``records.jsonl``) |
| decision | int16 | index of the decision in the hand's decision log |
| seat | int8 | the acting seat (absolute) |
| agent | string | the lineup entry playing that seat |
| obs | binary | ``np.packbits`` of the ``uint8[rows, 27]`` observation (row-major) |
| mask | binary | ``np.packbits`` of the ``int8[88]`` legal mask |
| action | int16 | the action taken |
| tenpai | list<bool>[3] | opponents (next, opposite, previous) tenpai (``engine/labels.py``) |
| waits | list<uint8>[81] | their wait tiles, ``[3, 27]`` row-major |
| shanten | list<int8>[3] | their shanten |
| hand | list<uint8>[81] | their concealed counts, ``[3, 27]`` |
| deal_in | list<int64>[81] | points each would be paid on my discard of each tile, ``[3, 27]`` |
| active | list<bool>[3] | the opponent has not won |
| final_points | int64 | the acting seat's net points for the whole hand |

Event tokens of a decision row: ``games.parquet``'s ``tokens_<seat>`` up to
``offsets[decision, seat]`` (``offsets`` is stored flat, ``[n_decisions + 1, 4]``;
``EventTable`` reads them). Read with pandas or polars (``pd.read_parquet(folder / "decisions")`` reads every
shard), or with ``iter_batches`` / ``DecisionDataset`` (torch), which decode the
packed columns.

The schema and the checks live in ``sichuan_env.train.data.schema`` (re-exported
here). Nothing read is trusted: ``read_meta`` checks ``dataset.json`` (a registered
observation version and exactly its shape, valid rules), and every shard is
checked against it before use (``read_shard``, ``iter_batches``: each column
present with its exact Arrow type, so a shard of another observation version
is refused rather than padded or cut, and no nulls). ``check_compatible``
refuses to read folders of different observation versions together, and of
different rules unless asked.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from sichuan_env.train.data.schema import (
    DECISION_COLUMNS,
    FORMAT,
    LABEL_SHAPES,
    MAX_META_BYTES,
    check_compatible,
    check_nulls,
    check_schema,
    decision_schema,
    read_meta,
)

MAX_BATCH = 1 << 20
"""Rows one decoded batch may hold."""
MAX_SHUFFLE = 1 << 24
"""Rows a ``DecisionDataset`` shuffle buffer may hold."""


def shards(folder: str | Path) -> list[Path]:
    """The decision shards of a dataset folder, in order."""
    return sorted((Path(folder) / "decisions").glob("part-*.parquet"))


def read_shard(
    path: str | Path, columns: list[str] | None = None, meta: dict[str, Any] | None = None
) -> pa.Table:
    """A decisions shard's ``columns`` (default: all), checked against its folder's metadata.

    Args:
        path: ``<folder>/decisions/part-NNNNN.parquet``.
        columns: decision columns to read.
        meta: the folder's ``read_meta`` (read from ``path``'s folder when None).

    Raises:
        ValueError: an unreadable or truncated shard, unknown, missing or mistyped columns
            (``check_schema``) or null values.
    """
    path = Path(path)
    if meta is None:
        meta = read_meta(path.parent.parent)
    rows = int(meta["obs_shape"][0])
    try:
        schema = pq.read_schema(path)
        names = check_schema(path, schema, rows, columns)
        table = pq.read_table(path, columns=names)
    except (OSError, pa.ArrowException) as exc:
        raise ValueError(f"{path}: cannot read the decisions shard ({exc})") from None
    check_nulls(path, table)
    return table


class EventTable:
    """The event tokens of a dataset folder's hands (``games.parquet``), by game id.

    Args:
        folder: a dataset folder written by ``sichuan_env.train.data.make_dataset``.

    Raises:
        ValueError: the folder has no readable ``games.parquet``.
    """

    def __init__(self, folder: str | Path) -> None:
        cols = ["game_id", "offsets", *(f"tokens_{s}" for s in range(4))]
        path = Path(folder) / "games.parquet"
        try:
            t = pq.read_table(path, columns=cols)
        except (OSError, KeyError, pa.ArrowException) as exc:
            raise ValueError(f"{folder}: cannot read games.parquet ({exc})") from None
        for name in cols:
            want = pa.int64() if name == "game_id" else pa.list_(pa.int64())
            if t.schema.field(name).type != want:
                raise ValueError(
                    f"{path}: column {name!r} is {t.schema.field(name).type}, expected {want}"
                )
        check_nulls(path, t)
        for name in cols[1:]:
            if t.column(name).combine_chunks().flatten().null_count:
                raise ValueError(f"{path}: column {name!r} holds null values")
        ids = t.column("game_id").to_numpy()
        if ids.size and ids.min() < 0:
            raise ValueError(f"{folder}: games.parquet holds a negative game_id")
        self.index = np.full(int(ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        self.index[ids] = np.arange(len(ids))

        def flat(name: str) -> tuple[np.ndarray, np.ndarray]:
            arr = t.column(name).combine_chunks()
            return arr.offsets.to_numpy(), arr.values.to_numpy()

        self.off = flat("offsets")
        self.tok = [flat(f"tokens_{s}") for s in range(4)]

    def tokens(self, game_id: int, seat: int) -> np.ndarray:
        """Seat ``seat``'s whole token sequence of hand ``game_id``."""
        i = self.index[game_id]
        starts, values = self.tok[seat]
        return values[starts[i] : starts[i + 1]]

    def ends(self, game_id: np.ndarray, decision: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """Tokens seen by the acting seat at each decision row (``offsets[decision, seat]``)."""
        starts, values = self.off
        return values[starts[self.index[game_id]] + 4 * decision.astype(np.int64) + seat]

    def row_tokens(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """``int64[N, L]`` right-padded prefixes of decision rows (``BeliefModel.predict``'s input).

        Args:
            batch: ``game_id``, ``decision`` and ``seat`` of each row.
        """
        g, d, s = batch["game_id"], batch["decision"], batch["seat"]
        ends = self.ends(g, d, s)
        out = np.zeros((len(g), int(ends.max(initial=1))), dtype=np.int64)
        for i in range(len(g)):
            out[i, : ends[i]] = self.tokens(int(g[i]), int(s[i]))[: ends[i]]
        return out


def decode_obs(packed: bytes | np.ndarray, rows: int) -> np.ndarray:
    """``uint8[rows, 27]`` from a packed ``obs`` cell."""
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=rows * 27)
    return bits.reshape(rows, 27)


def decode_batch(table: pa.Table, rows: int) -> dict[str, np.ndarray]:
    """The columns of a decisions table as numpy arrays, observations and masks unpacked.

    Returns, for each column the table holds, ``obs`` uint8[N, rows, 27], ``mask``
    int8[N, 88], the labels in their shapes (``LABEL_SHAPES``, leading N), the scalar
    columns (``action`` int16[N], ...) and ``agent`` (objects).

    Raises:
        ValueError: an ``obs`` column whose width is not that of ``rows`` rows.
    """
    n = table.num_rows
    names = set(table.column_names)
    out: dict[str, np.ndarray] = {}
    if "obs" in names:
        obs_bytes = table.column("obs").combine_chunks()
        width = obs_bytes.type.byte_width
        if width != (rows * 27 + 7) // 8:
            raise ValueError(f"obs cells of {width} bytes do not hold {rows} x 27 observations")
        flat = np.frombuffer(obs_bytes.buffers()[1], dtype=np.uint8)[: n * width].reshape(n, width)
        out["obs"] = np.unpackbits(flat, axis=1, count=rows * 27).reshape(n, rows, 27)
    if "mask" in names:
        mask_bytes = table.column("mask").combine_chunks()
        mflat = np.frombuffer(mask_bytes.buffers()[1], dtype=np.uint8)[: n * 11].reshape(n, 11)
        out["mask"] = np.unpackbits(mflat, axis=1, count=88).astype(np.int8)
    for name, shape in LABEL_SHAPES.items():
        if name in names:
            values = table.column(name).combine_chunks().flatten().to_numpy(zero_copy_only=False)
            out[name] = values.reshape(n, *shape)
    for name in ("game_id", "decision", "seat", "action", "final_points"):
        if name in names:
            out[name] = table.column(name).to_numpy()
    if "agent" in names:
        out["agent"] = np.array(table.column("agent").to_pylist(), dtype=object)
    for name, arr in out.items():  # Arrow's zero-copy views are read-only; torch warns on them
        if not arr.flags.writeable:
            out[name] = arr.copy()
    return out


def _check_batch_size(batch_size: object, name: str = "batch_size") -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 1, got {batch_size!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"{name} must be in 1..{MAX_BATCH}, got {batch_size}")
    return int(batch_size)


def _check_columns(columns: object) -> list[str] | None:
    if columns is None:
        return None
    if isinstance(columns, str) or not isinstance(columns, (list, tuple)):
        raise ValueError(f"columns must be a list of column names, got {columns!r}")
    bad = [c for c in columns if c not in DECISION_COLUMNS]
    if bad or not columns:
        raise ValueError(f"columns {bad or columns!r} are not decision columns {DECISION_COLUMNS}")
    return list(dict.fromkeys(columns))


def _shard_batches(
    path: Path, meta: dict[str, Any], batch_size: int, columns: list[str] | None
) -> Iterator[pa.Table]:
    """Checked batches of one shard (schema before reading, nulls per batch)."""
    rows = int(meta["obs_shape"][0])
    try:
        pf = pq.ParquetFile(path)
        names = check_schema(path, pf.schema_arrow, rows, columns)
        for batch in pf.iter_batches(batch_size=batch_size, columns=names):
            table = pa.Table.from_batches([batch])
            check_nulls(path, table)
            yield table
    except (OSError, pa.ArrowException) as exc:
        raise ValueError(f"{path}: cannot read the decisions shard ({exc})") from None


def iter_batches(
    folder: str | Path, batch_size: int = 4096, columns: list[str] | None = None
) -> Iterator[dict[str, np.ndarray]]:
    """Decoded batches of a dataset folder, shard by shard (never all in memory).

    Every shard's schema is checked against ``dataset.json`` before it is read, and every
    batch for nulls (``read_shard``'s checks).

    Args:
        folder: a dataset folder.
        batch_size: rows per batch (``1..MAX_BATCH``).
        columns: decision columns to decode (default: all).

    Raises:
        ValueError: a bad folder, batch size or column list, or a shard that does not
            match the metadata.
    """
    batch_size = _check_batch_size(batch_size)
    columns = _check_columns(columns)
    meta = read_meta(folder)
    rows = int(meta["obs_shape"][0])
    for path in shards(folder):
        for table in _shard_batches(path, meta, batch_size, columns):
            yield decode_batch(table, rows)


@functools.lru_cache(maxsize=1)
def _torch_dataset_class() -> type:
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    class DecisionDataset(IterableDataset):
        """Decision rows as dicts of torch tensors, streamed shard by shard.

        Args:
            folder: a dataset folder.
            batch_size: rows decoded at a time (then yielded one by one).
            shuffle_buffer: rows kept for a streaming shuffle (0: in order).
            seed: the shuffle's seed.

        With several DataLoader workers each reads its own share of the shards.
        """

        def __init__(
            self, folder: str | Path, batch_size: int = 4096, shuffle_buffer: int = 0, seed: int = 0
        ):
            super().__init__()
            self.batch_size = _check_batch_size(batch_size)
            if (
                isinstance(shuffle_buffer, bool)
                or not isinstance(shuffle_buffer, (int, np.integer))
                or not 0 <= shuffle_buffer <= MAX_SHUFFLE
            ):
                raise ValueError(
                    f"shuffle_buffer must be in 0..{MAX_SHUFFLE}, got {shuffle_buffer!r}"
                )
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
            self.meta = read_meta(folder)
            self.folder = Path(folder)
            self.shuffle_buffer = int(shuffle_buffer)
            self.seed = seed

        def __iter__(self):
            info = get_worker_info()
            paths = shards(self.folder)
            if info is not None:
                paths = paths[info.id :: info.num_workers]
            rows = int(self.meta["obs_shape"][0])
            rng = np.random.default_rng(self.seed + (info.id if info else 0))
            buffer: list[dict[str, Any]] = []
            for path in paths:
                for table in _shard_batches(path, self.meta, self.batch_size, None):
                    cols = decode_batch(table, rows)
                    for i in range(len(cols["action"])):
                        row = {k: torch.as_tensor(v[i]) for k, v in cols.items() if k != "agent"}
                        if not self.shuffle_buffer:
                            yield row
                            continue
                        buffer.append(row)
                        if len(buffer) >= self.shuffle_buffer:
                            yield buffer.pop(int(rng.integers(len(buffer))))
            rng.shuffle(buffer)
            yield from buffer

    return DecisionDataset


def __getattr__(name: str) -> Any:
    """``DecisionDataset`` is built on first use, so reading a dataset never imports torch."""
    if name == "DecisionDataset":
        return _torch_dataset_class()
    raise AttributeError(name)


# DecisionDataset is here too (``__getattr__``), kept out of ``*`` so that it never imports torch
__all__ = [
    "DECISION_COLUMNS", "FORMAT", "LABEL_SHAPES", "MAX_BATCH", "MAX_META_BYTES", "MAX_SHUFFLE",
    "EventTable", "check_compatible", "check_nulls", "check_schema", "decision_schema",
    "decode_batch", "decode_obs", "iter_batches", "read_meta", "read_shard", "shards",
]  # fmt: skip
