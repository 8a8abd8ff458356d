"""The dataset's schema and the checks of what is read: ``dataset.json`` and decision shards.

``decision_schema`` is the Arrow schema of a decisions shard (its columns are
described in ``sichuan_env.train.data.dataset``); ``read_meta`` checks a
folder's ``dataset.json``, ``check_compatible`` whether folders can be read
together, ``check_schema`` a shard's columns against the schema (exact Arrow
types, so a shard of another observation version is refused), and
``check_nulls`` a table's values. The writer
(``sichuan_env.train.data.make_dataset``) takes the schema from here; the
reader (``sichuan_env.train.data.dataset``, which re-exports these names) the
schema and the checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.encoding.registry import versions

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


MAX_META_BYTES = 1 << 20
"""Bytes ``dataset.json`` may take."""


def read_meta(folder: str | Path) -> dict[str, Any]:
    """``dataset.json`` of a dataset folder, checked.

    The observation version must be a registered one and ``obs_shape`` exactly its
    shape (so no shard is read with another layout, and no batch is sized by a
    doctored shape); ``rules`` must be a valid rule set, ``decisions`` a count.

    Raises:
        ValueError: not a dataset folder, or a metadata file that is not this format
            or holds a missing or bad field.
    """
    path = Path(folder) / "dataset.json"
    try:
        if path.stat().st_size > MAX_META_BYTES:
            raise ValueError(f"{path}: larger than {MAX_META_BYTES} bytes")
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{folder}: not a dataset folder ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} metadata file")
    version = meta.get("obs_version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in versions():
        raise ValueError(
            f"{path}: obs_version {str(version)[:20]!r} is not a registered version {versions()}"
        )
    shape = meta.get("obs_shape")
    if shape != list(get_obs_version(version).shape()):
        raise ValueError(
            f"{path}: obs_shape {str(shape)[:40]} is not observation v{version}'s "
            f"{list(get_obs_version(version).shape())}"
        )
    decisions = meta.get("decisions")
    if isinstance(decisions, bool) or not isinstance(decisions, int) or decisions < 0:
        raise ValueError(f"{path}: decisions must be a count, got {str(decisions)[:20]!r}")
    try:
        RuleConfig.from_dict(meta.get("rules"))
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: bad rules ({exc})") from None
    return meta


def check_compatible(
    folders: list[str | Path], metas: list[dict[str, Any]], *, mixed_rules: bool = False
) -> None:
    """Raise ``ValueError`` unless the datasets can be read together.

    They must hold the same observation version (and so shape); their rule sets must be
    the same unless ``mixed_rules`` (a CLI's ``--mixed-rules``) says mixing them is meant.
    """
    for folder, meta in zip(folders[1:], metas[1:], strict=True):
        if meta["obs_version"] != metas[0]["obs_version"]:
            raise ValueError(
                f"{folder} holds observation v{meta['obs_version']}, {folders[0]} "
                f"v{metas[0]['obs_version']}: they cannot be read together"
            )
        if meta["rules"] != metas[0]["rules"] and not mixed_rules:
            diff = sorted(
                k for k in meta["rules"] if meta["rules"].get(k) != metas[0]["rules"].get(k)
            )
            raise ValueError(
                f"{folder} and {folders[0]} were played under different rules ({diff[:4]}): "
                "pass --mixed-rules to train on both"
            )


def check_schema(path: Path, schema: pa.Schema, rows: int, columns: list[str] | None) -> list[str]:
    """The columns to read from shard ``path`` (``columns``, or all), checked against its schema.

    Each must be a column of ``decision_schema(rows)`` with exactly that Arrow type (so a
    shard written for another observation version, whose ``obs`` is narrower or wider,
    is refused instead of being cut or zero-padded).

    Raises:
        ValueError: an unknown or missing column, or a column of another type.
    """
    want = decision_schema(rows)
    names = list(want.names) if columns is None else list(columns)
    for name in names:
        if name not in want.names:
            raise ValueError(f"{path}: {name!r} is not a decision column {DECISION_COLUMNS}")
        i = schema.get_field_index(name)
        if i < 0:
            raise ValueError(f"{path}: the shard has no column {name!r}")
        got, expected = schema.field(i).type, want.field(name).type
        if got != expected:
            raise ValueError(
                f"{path}: column {name!r} is {got}, expected {expected} "
                "(a shard of another observation version or format?)"
            )
    return names


def check_nulls(path: Path, table: pa.Table | pa.RecordBatch) -> None:
    """Raise ``ValueError`` if any column of ``table`` (or list element) is null."""
    for name in table.column_names:
        col = table.column(name)
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        for chunk in chunks:
            nulls = chunk.null_count
            if not nulls and pa.types.is_fixed_size_list(chunk.type):
                nulls = chunk.flatten().null_count
            if nulls:
                raise ValueError(f"{path}: column {name!r} holds {nulls} null values")
