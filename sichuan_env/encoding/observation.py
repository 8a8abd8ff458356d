"""Observations: the registry of versions and the v1 layout, under one stable import path.

``from sichuan_env.encoding import observation as O`` gives the registry
functions (``O.get``, ``O.obs_rows``, ``O.obs_shape``, ``O.block_offsets``,
``O.versions``) and the v1 row constants and writers (``O.HAND``, ``O.VOIDS``,
…, ``O.encode_v1``, ``O.encode_at``), which readers of v1 observations such as
the heuristic agent use. New versions live in their own modules
(``encoding/v1.py`` is the model) and register themselves.
"""

from __future__ import annotations

from .registry import ObsVersion, block_offsets, get, obs_rows, obs_shape, register, versions
from .v1 import (
    BLOCKS,
    CLAIM,
    DEALER,
    DISCARDS,
    DRAWN,
    EXCHANGE,
    HAND,
    MELDS,
    ORACLE_BLOCKS,
    ORACLE_HANDS,
    PHASE,
    PICKS,
    RECENT,
    SCORES,
    VISIBLE,
    VOIDS,
    WALL,
    WALL_ORDER,
    WIN_FROM,
    WON,
    encode_at,
    encode_batch,
    encode_v1,
)

OBS_SPEC = {v: get(v).blocks for v in versions()}
"""Row blocks per registered version (a snapshot taken at import; use ``get`` for later ones)."""
ORACLE_SPEC = ORACLE_BLOCKS
"""Rows the v1 oracle view appends."""
OBS_SHAPE = {v: get(v).shape() for v in versions()}
"""Observation shape per registered version, without the oracle rows (a snapshot)."""

__all__ = [
    "BLOCKS",
    "CLAIM",
    "DEALER",
    "DISCARDS",
    "DRAWN",
    "EXCHANGE",
    "HAND",
    "MELDS",
    "OBS_SHAPE",
    "OBS_SPEC",
    "ORACLE_BLOCKS",
    "ORACLE_HANDS",
    "ORACLE_SPEC",
    "PHASE",
    "PICKS",
    "RECENT",
    "SCORES",
    "VISIBLE",
    "VOIDS",
    "WALL",
    "WALL_ORDER",
    "WIN_FROM",
    "WON",
    "ObsVersion",
    "block_offsets",
    "encode_at",
    "encode_batch",
    "encode_v1",
    "get",
    "obs_rows",
    "obs_shape",
    "register",
    "versions",
]
