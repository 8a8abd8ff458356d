"""A ladder's pair files and the identity they are named by.

Each pair of a ladder is written to ``OUT/pairs/A__B-<digest>.json``, named by a
digest of the pair's identity (``pair_identity``): each agent's ``agent_identity``,
which builds the agent (``make_agent``) inside ``checkpoint.recording()`` and hashes
every file it loads (an alias's target recorded too). ``load_pair`` reads a finished
pair back for ``--resume``; ``older_pairs`` finds pair files of an older format
(``FORMAT`` 1 knew a registered agent by its name only), which ``--resume`` refuses.
``sichuan_env.agents.eval.ladder`` re-exports these names.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.registry import aliases, make_agent

from sichuan_env import RuleConfig
from sichuan_env._files import write_atomic

FORMAT = 2
"""Version of the pair files and ``ladder.json`` (1: agents known by name only)."""


SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"
"""The shipped checkpoints (``bc`` is ``SHIPPED/bc.pt``), hashed like any other."""


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _recording() -> contextlib.AbstractContextManager[list[Path]]:
    """``checkpoint.recording()``, or an empty list without torch (then nothing loads one)."""
    try:
        from sichuan_env.agents import checkpoint
    except ImportError:
        return contextlib.nullcontext([])
    return checkpoint.recording()


def _shipped_dir() -> Path:
    try:
        from sichuan_env.agents import checkpoint
    except ImportError:
        return SHIPPED
    return Path(checkpoint.SHIPPED_DIR)


def built_identity(spec: str, seed: int | None = 0) -> dict[str, Any]:
    """``agent_identity`` of an agent that must build: the ladder's check of every spec.

    Raises:
        ValueError, TypeError: the agent cannot be built (``make_agent``).
    """
    with _recording() as read:
        make_agent(spec, seed=seed)
    return _identity(spec, read)


def agent_identity(spec: str, seed: int | None = 0) -> dict[str, Any]:
    """What identifies an agent in a pair: its spec, an alias's target, every file it loads.

    The agent is built (``make_agent``) while ``checkpoint.recording`` notes every
    checkpoint file it reads (``x.pt`` and ``x.json``: each of a composite agent's, such
    as ``distill-guard``'s ``distill`` and ``belief``; an alias's target's; a plugin's that
    loads through ``sichuan_env.agents.checkpoint``); a spec that is a file is hashed too,
    with its JSON. ``sha256`` maps each file (a shipped one by its name, another by its
    path) to its SHA-256, so a retrained or reshipped checkpoint, or an alias moved to
    another agent (``alias``: its target), is another agent. A spec that cannot be built
    gets the files read before it failed (``built_identity`` raises instead).

    Args:
        spec: a lineup entry (``make_agent``).
        seed: the seed the agent is built with (the identity does not depend on it).

    Returns:
        ``{"spec", "sha256": {file: digest}}``, with ``"alias"`` for an alias.
    """
    with _recording() as read:
        try:
            make_agent(spec, seed=seed)
        except (ValueError, TypeError, ImportError):
            pass
    return _identity(spec, read)


def _identity(spec: str, read: list[Path]) -> dict[str, Any]:
    identity: dict[str, Any] = {"spec": spec}
    target = aliases().get(spec)
    if target is not None:
        identity["alias"] = target
    path = Path(spec)
    extra = [path, path.with_suffix(".json")] if path.is_file() else []
    shipped = _shipped_dir().resolve()
    files: dict[str, str] = {}
    for f in [*extra, *read]:
        f = Path(f)
        name = f.name if f.resolve().parent == shipped else str(f)
        if name not in files and f.is_file():
            files[name] = _file_sha256(f)
    identity["sha256"] = files
    return identity


def pair_identity(
    a: str, b: str, identities: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The identity of the pair ``a``, ``b`` (``agent_identity`` of each, in order).

    ``identities`` holds the agents' identities already computed (by spec).
    """
    known = identities or {}
    return {
        "format": FORMAT,
        "agents": [known[x] if x in known else agent_identity(x) for x in (a, b)],
    }


def older_pairs(out: Path) -> list[Path]:
    """The pair files in ``out/pairs`` of a format older than ``FORMAT`` (unreadable ones not)."""
    old = []
    for f in sorted((out / "pairs").glob("*.json")):
        try:
            if f.stat().st_size > 16 * 2**20:
                continue
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt < FORMAT:
            old.append(f)
    return old


def _pair_file(out: Path, a: str, b: str, identity: dict[str, Any]) -> Path:
    """``OUT/pairs/<readable prefix>-<digest>.json``: named by a digest of the pair's identity.

    The prefix (each spec's last path part, at most 24 safe characters) is for people;
    the digest (SHA-256 of the identity, 20 hex digits) tells pairs apart, so any two specs
    (long paths, ``p/bc.pt`` and ``p_bc.pt``) get different files of a bounded name length.
    """
    key = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(key).hexdigest()[:20]
    safe = [re.sub(r"[^A-Za-z0-9_.-]", "_", Path(x).name or x)[:24] for x in (a, b)]
    return out / "pairs" / f"{safe[0]}__{safe[1]}-{digest}.json"


def _settings(walls: int, seed: int, rules: RuleConfig, model: Any = None) -> dict[str, Any]:
    value_model = None if model is None else model.doc.get("sha256")
    return {"format": FORMAT, "walls": walls, "seed": seed, "rules": rules.to_dict(),
            "value_model": value_model}  # fmt: skip


def load_pair(
    path: Path, a: str, b: str, settings: dict[str, Any], identity: dict[str, Any] | None = None
) -> np.ndarray | None:
    """A finished pair's per-wall points, or None when the file is missing or other settings'.

    The points are the adjusted ones when ``settings`` name a value model or the
    advantage-sum estimate.

    Raises:
        ValueError: a file that is not a pair file of this ladder (damaged or hand-edited),
            or of another pair (its ``identity`` differs from ``identity``).
    """
    if not path.is_file():
        return None
    if path.stat().st_size > 16 * 2**20:
        raise ValueError(f"{path}: larger than 16 MB, not a pair file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not a pair file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("agents") != [a, b]:
        raise ValueError(f"{path}: not the pair {a} / {b}")
    if identity is not None and doc.get("identity") != identity:
        raise ValueError(f"{path}: not the pair {a} / {b} (other agents or checkpoints)")
    if {k: doc.get(k) for k in settings} != settings:
        return None  # other walls, seed or rules: played again
    adjusted = settings.get("value_model") or settings.get("estimator") == "advantage-sum"
    pts = doc.get("points_adjusted" if adjusted else "points")
    if (
        not isinstance(pts, list)
        or len(pts) != settings["walls"]
        or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in pts)
    ):
        raise ValueError(f"{path}: its points must be {settings['walls']} finite numbers")
    return np.asarray(pts, dtype=np.float64)


def _save_json(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``path`` whole or not at all (``write_atomic``: a unique temporary name).

    Raises:
        ValueError: a non-finite number in ``doc`` (NaN is not JSON; nothing is written).
    """
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
