"""The expert-iteration driver's state, ``RUN/exit.json``: read back whole, checked, written.

``read_state`` reads and ``check_state`` checks the state (its settings, each round's
finished stages and their results) before any of it is used; ``write_state`` writes
it atomically after every stage. ``sichuan_env.train.policy.exit`` re-exports them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from sichuan_env._cli import write_atomic

STAGES = ("labels", "fit", "eval")
"""A round's stages, in order (``stages_of``: a value-leaf run adds ``value``)."""
SETTINGS = ("init", "hands", "samples", "p_label", "claims", "rollout", "pool", "aggregate", "epochs",
            "lr", "objective", "margins", "select_walls", "eval_walls", "anchor_decisions", "seed",
            "after_win", "anchor_before_win", "search", "value_model", "value_hands",
            "value_epochs", "estimator", "oracle")  # fmt: skip
"""The arguments a resumed run must keep (``--rounds`` and ``--threads`` may change)."""
LEGACY = {"estimator": "luck"}
"""Settings of runs made before the setting existed, where its default would be wrong."""


def stages_of(settings: dict[str, Any]) -> tuple[str, ...]:
    """A round's stages under ``settings``.

    ``STAGES``, then ``value`` (``V`` refitted on the new network's play) when the labels
    come from the value-leaf search.
    """
    return (*STAGES, "value") if settings.get("search") == "value-leaf" else STAGES


def read_state(run_dir: Path, defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """``RUN/exit.json``, checked whole (``check_state``) before any of it is used.

    Args:
        run_dir: the run folder.
        defaults: the parser's defaults, the types the settings must have.

    Raises:
        ValueError: missing, unreadable, too large or malformed (the message names the key).
    """
    f = run_dir / "exit.json"
    try:
        if f.stat().st_size > 1 << 20:
            raise ValueError(f"{f} is larger than 1 MB")
        doc = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{f} cannot be read: {exc}") from None
    check_state(doc, f, defaults)
    return doc


def check_state(doc: object, f: Path, defaults: dict[str, Any] | None = None) -> None:
    """Raise ``ValueError`` unless ``doc`` is a whole expert-iteration state (keys and types).

    ``{"settings": {...}, "rounds": [...]}`` and nothing else; each setting of ``SETTINGS``
    present has its default's type; round ``i`` is ``{"round": i + 1, "done": [...],
    "seconds": {...}}`` with ``done`` a prefix of ``STAGES`` (only the last round may be
    unfinished), a finite time >= 0 per stage done, each done stage's results
    (``_RESULTS``) present, and every result present of the right types.
    """
    if not isinstance(doc, dict) or set(doc) != {"settings", "rounds"}:
        raise ValueError(f"{f} is not an expert-iteration state (settings, rounds)")
    settings, rounds = doc["settings"], doc["rounds"]
    if not isinstance(settings, dict) or not isinstance(rounds, list):
        raise ValueError(f"{f}: settings must be an object and rounds a list")
    for key, value in settings.items():
        if key not in SETTINGS:
            raise ValueError(f"{f}: unknown setting {str(key)[:40]!r}")
        if defaults is not None and not _same_type(value, defaults[key]):
            raise ValueError(
                f"{f}: setting {key!r} is {str(value)[:40]!r}, not like {defaults[key]!r}"
            )
    stages = stages_of(settings)
    for i, r in enumerate(rounds):
        where = f"{f}: round entry {i} is malformed"
        if not isinstance(r, dict) or r.get("round") != i + 1:
            raise ValueError(f"{where}: it is not round {i + 1}")
        done = r.get("done")
        if not isinstance(done, list) or done != list(stages[: len(done)]):
            raise ValueError(f"{where}: 'done' must list stages of {list(stages)} in order")
        if i < len(rounds) - 1 and len(done) != len(stages):
            raise ValueError(f"{where}: it is unfinished but a later round exists")
        seconds = r.get("seconds")
        if (
            not isinstance(seconds, dict)
            or not set(done) <= set(seconds) <= set(stages)
            or not all(_number(v) and v >= 0 for v in seconds.values())
        ):
            raise ValueError(f"{where}: 'seconds' must give a time >= 0 for each stage done")
        for stage, results in _RESULTS.items():  # a stage to be run again may keep old results
            for key, check in results.items():
                if (stage in done or key in r) and not (key in r and check(r[key])):
                    raise ValueError(f"{where}: {key!r} (stage {stage}) is missing or malformed")
        allowed = {"round", "done", "seconds", *(k for v in _RESULTS.values() for k in v)}
        extra = sorted(str(k)[:40] for k in set(r) - allowed)
        if extra:
            raise ValueError(f"{where}: unexpected keys {extra[:5]}")


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _same_type(value: object, default: object) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return type(value) is type(default)
    if isinstance(default, (int, float)):
        return _number(value) and (isinstance(value, int) or isinstance(default, float))
    if isinstance(default, list):
        return isinstance(value, list) and all(_number(x) for x in value)
    return isinstance(value, type(default))


def _match(v: object) -> bool:
    keys = ("points_per_hand", "ci95", "win_rate", "deal_in_rate", "walls", "seed")
    return isinstance(v, dict) and all(_number(v.get(k)) for k in keys)


_RESULTS: dict[str, dict[str, Any]] = {
    "labels": {"labels": lambda v: isinstance(v, dict) and all(
        _count(v.get(k)) for k in ("shards", "new_rows")) and _count(v.get("rows", 0))},
    "fit": {"fit": lambda v: isinstance(v, dict) and _number(v.get("margin"))
            and isinstance(v.get("selection"), dict)},
    "eval": {"vs_heuristic": _match, "vs_previous": _match},
    "value": {"value": lambda v: isinstance(v, dict) and isinstance(v.get("model"), str)
              and _count(v.get("hands")) and _number(v.get("best_epoch"))},
}  # fmt: skip
"""What each finished stage records in its round's entry, and the check of each."""


def write_state(run_dir: Path, doc: dict) -> None:
    """Write ``RUN/exit.json`` whole or not at all (``write_atomic``)."""
    write_atomic(run_dir / "exit.json", json.dumps(doc, indent=1))
