"""The opponent-modelling dataset: its schema, a reader, and a torch ``IterableDataset``.

A dataset folder (written by ``python -m sichuan_env.train.data.make_dataset``) holds:

- ``dataset.json``: format, observation version and shape, lineup, rules, seed,
  hands, the command that made it, and the column table below;
- ``decisions/part-NNNNN.parquet``: one row per decision of every hand, any seat;
- ``games.parquet``: one row per hand: its seed, lineup by seat, final scores,
  and each seat's public event tokens (``sichuan_env.encoding.events``);
- ``records.jsonl``: each hand's game record (RULES.md §10), with its ``game_id``,
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
``offsets[decision, seat]`` (``offsets`` is stored flat, ``[n_decisions + 1, 4]``).
Read with pandas or polars (``pd.read_parquet(folder / "decisions")`` reads every
shard), or with ``iter_batches`` / ``DecisionDataset`` (torch), which decode the
packed columns.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

FORMAT = "sichuan-dataset/1"
LABEL_SHAPES = {
    "tenpai": (3,),
    "waits": (3, 27),
    "shanten": (3,),
    "hand": (3, 27),
    "deal_in": (3, 27),
    "active": (3,),
}


def decision_schema(obs_rows: int) -> pa.Schema:
    """The Arrow schema of a decisions shard for observations of ``obs_rows`` rows."""
    return pa.schema(
        [
            ("game_id", pa.int64()),
            ("decision", pa.int16()),
            ("seat", pa.int8()),
            ("agent", pa.string()),
            ("obs", pa.binary((obs_rows * 27 + 7) // 8)),
            ("mask", pa.binary(11)),
            ("action", pa.int16()),
            ("tenpai", pa.list_(pa.bool_(), 3)),
            ("waits", pa.list_(pa.uint8(), 81)),
            ("shanten", pa.list_(pa.int8(), 3)),
            ("hand", pa.list_(pa.uint8(), 81)),
            ("deal_in", pa.list_(pa.int64(), 81)),
            ("active", pa.list_(pa.bool_(), 3)),
            ("final_points", pa.int64()),
        ]
    )


DECISION_COLUMNS = [f.name for f in decision_schema(1)]


def read_meta(folder: str | Path) -> dict[str, Any]:
    """``dataset.json`` of a dataset folder, checked.

    Raises:
        ValueError: not a dataset folder, or a metadata file that is not this format.
    """
    path = Path(folder) / "dataset.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{folder}: not a dataset folder ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} metadata file")
    shape = meta.get("obs_shape")
    if not (isinstance(shape, list) and len(shape) == 2 and shape[1] == 27 and shape[0] > 0):
        raise ValueError(f"{path}: bad obs_shape {shape!r}")
    return meta


def shards(folder: str | Path) -> list[Path]:
    """The decision shards of a dataset folder, in order."""
    return sorted((Path(folder) / "decisions").glob("part-*.parquet"))


def decode_obs(packed: bytes | np.ndarray, rows: int) -> np.ndarray:
    """``uint8[rows, 27]`` from a packed ``obs`` cell."""
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=rows * 27)
    return bits.reshape(rows, 27)


def decode_batch(table: pa.Table, rows: int) -> dict[str, np.ndarray]:
    """Every column of a decisions table as numpy arrays, observations and masks unpacked.

    Returns ``obs`` uint8[N, rows, 27], ``mask`` int8[N, 88], ``action`` int64[N],
    the labels in their shapes (``LABEL_SHAPES``, leading N), and the scalar columns.
    """
    n = table.num_rows
    obs_bytes = table.column("obs").combine_chunks()
    width = obs_bytes.type.byte_width
    flat = np.frombuffer(obs_bytes.buffers()[1], dtype=np.uint8)[: n * width].reshape(n, width)
    obs = np.unpackbits(flat, axis=1, count=rows * 27).reshape(n, rows, 27)
    mask_bytes = table.column("mask").combine_chunks()
    mflat = np.frombuffer(mask_bytes.buffers()[1], dtype=np.uint8)[: n * 11].reshape(n, 11)
    out: dict[str, np.ndarray] = {
        "obs": obs,
        "mask": np.unpackbits(mflat, axis=1, count=88).astype(np.int8),
    }
    for name, shape in LABEL_SHAPES.items():
        values = table.column(name).combine_chunks().flatten().to_numpy(zero_copy_only=False)
        out[name] = values.reshape(n, *shape)
    for name in ("game_id", "decision", "seat", "action", "final_points"):
        out[name] = table.column(name).to_numpy()
    out["agent"] = np.array(table.column("agent").to_pylist(), dtype=object)
    return out


def iter_batches(
    folder: str | Path, batch_size: int = 4096, columns: list[str] | None = None
) -> Iterator[dict[str, np.ndarray]]:
    """Decoded batches of a dataset folder, shard by shard (never all in memory)."""
    meta = read_meta(folder)
    rows = int(meta["obs_shape"][0])
    for path in shards(folder):
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=batch_size, columns=columns):
            yield decode_batch(pa.Table.from_batches([batch]), rows)


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
            self.meta = read_meta(folder)
            self.folder = Path(folder)
            self.batch_size = batch_size
            self.shuffle_buffer = shuffle_buffer
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
                for batch in pq.ParquetFile(path).iter_batches(batch_size=self.batch_size):
                    cols = decode_batch(pa.Table.from_batches([batch]), rows)
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
