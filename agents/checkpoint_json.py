"""A checkpoint's JSON, read within bounds, and what its ``format`` says it is.

``read_json`` reads a bounded JSON object (size, nesting depth); ``format_problem``
names the kind of a checkpoint given where another kind is expected ("a belief
checkpoint, not a policy"), since its other keys would only say that one is missing.
``sichuan_env.agents.checkpoint`` re-exports both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAX_JSON_BYTES = 1 << 20
"""Bytes a checkpoint's JSON may take."""
MAX_JSON_DEPTH = 16
"""Nesting depth a checkpoint's JSON may reach (metrics nest two or three levels)."""

FORMAT_NAMES = {
    "sichuan-torch-agent/1": "policy",
    "sichuan-belief/1": "belief",
    "sichuan-luck-value/1": "luck value model",
    "sichuan-table-value/1": "whole-table value model",
}
"""What each checkpoint ``format`` of the project holds, for errors that name the kind."""


def kind_name(fmt: object) -> str:
    """What a checkpoint of format ``fmt`` holds (``"policy"``), or the format quoted."""
    if isinstance(fmt, str) and fmt in FORMAT_NAMES:
        return FORMAT_NAMES[fmt]
    return f"{str(fmt)[:80]!r}"


def format_problem(path: str | os.PathLike, doc: Mapping[str, Any], want: str) -> str | None:
    """Why the JSON ``doc`` of checkpoint ``path`` is not of format ``want`` (None: it is).

    A ``format`` that is not a string, or none, is left to the key checks (the wrong type,
    a missing key).
    """
    fmt = doc.get("format")
    if not isinstance(fmt, str) or fmt == want:
        return None
    if fmt in FORMAT_NAMES:
        kind = kind_name(fmt)
        return f"checkpoint {str(path)!r} is a {kind} checkpoint (format {fmt!r}), not a {kind_name(want)}"
    return (
        f"checkpoint {str(path)!r} has the format {fmt[:80]!r}, not {want!r} "
        f"(a {kind_name(want)} checkpoint)"
    )


def _depth(value: object) -> int:
    """The nesting depth of a parsed JSON value (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v)
    return deepest


def read_json(path: str | os.PathLike, what: str = "checkpoint config") -> dict[str, Any]:
    """A bounded JSON object from disk (size, depth), not yet checked key by key.

    Raises:
        ValueError: missing, not a file, too large, not UTF-8 JSON, too deep, not an object.
    """
    cfg = Path(path)
    if not cfg.is_file():
        raise ValueError(f"{what} {str(cfg)!r} is missing")
    if cfg.stat().st_size > MAX_JSON_BYTES:
        raise ValueError(f"{what} {str(cfg)!r} is larger than {MAX_JSON_BYTES} bytes")
    try:
        doc = json.loads(cfg.read_bytes().decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{what} {str(cfg)!r} is nested too deeply") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{what} {str(cfg)!r} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{what} {str(cfg)!r} must be a JSON object")
    if _depth(doc) > MAX_JSON_DEPTH:
        raise ValueError(f"{what} {str(cfg)!r} is nested deeper than {MAX_JSON_DEPTH} levels")
    return doc
