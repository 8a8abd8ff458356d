"""Checkpoint files, written and read in one place: policy, belief and training-run checkpoints.

A checkpoint is two files side by side::

    run/best.pt     the network's state_dict (torch.save; read with weights_only=True)
    run/best.json   {"format", "arch", "obs_version", "rules", "command", "commit",
                     "wall_clock_s", "created", "sha256", ...}

A ``Kind`` says what one sort of checkpoint holds: its ``format`` string, the
JSON keys it requires, how its ``arch`` object becomes a (bounded, validated)
config and how a config becomes a network. ``sichuan_env.agents.nn.torch_agent``
(``TorchAgent``) and ``sichuan_env.agents.belief.model`` (``BeliefModel``)
each declare their kind and read and write through ``save`` / ``load`` here,
as do the training scripts (``sichuan_env.train.common``).

Nothing read from disk is trusted, and nothing costly happens before the
cheap checks pass, in this order:

1. the JSON: bounded size and nesting depth, every required key of its type,
   the format, the architecture (``Kind.config`` bounds hidden sizes and layer
   counts);
2. the architecture's tensors, from a network built on the ``meta`` device
   (no memory, no initialisation): their count is bounded (``MAX_PARAMETERS``);
3. the weights file: bounded size, and ``sha256`` must be ``digest``, the
   SHA-256 of the weights file *and* the canonical JSON (every key but
   ``sha256``), so a config edited after the fact does not load;
4. ``torch.load(weights_only=True)``, then every tensor: a name of the
   architecture, dense (strided), on the CPU, contiguous, of the expected
   floating dtype and shape, finite;
5. only then is the network built and the tensors loaded into it.

Every problem is a ``ValueError`` naming the file. ``save`` refuses
non-finite tensors, so a diverged run never replaces a good checkpoint. The
tensor checks (steps 2 and 4) live in ``sichuan_env.agents.checkpoint_tensors``, the
JSON's bounds and its format (step 1: a belief or value checkpoint given where a policy
is expected says which kind it is) in ``sichuan_env.agents.checkpoint_json``; both are
re-exported here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from sichuan_env.agents.checkpoint_json import (
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    format_problem,
    read_json,
)
from sichuan_env.agents.checkpoint_tensors import (
    MAX_PARAMETERS,
    MAX_TENSORS,
    MAX_WEIGHTS_BYTES,
    check_finite_module,
    check_tensors,
    expected_tensors,
)
from sichuan_env.agents.registry_refs import folder_problem
from torch import nn

from sichuan_env._files import as_write_error, write_atomic

SHIPPED_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where shipped checkpoints live (``<name>.pt`` + ``<name>.json``)."""
HASH_TAG = b"\0sichuan-checkpoint-config\0"
"""Separates the weights' bytes from the JSON's in ``digest``."""


@dataclass(frozen=True)
class Kind:
    """One sort of checkpoint.

    Attributes:
        format: the JSON's ``format`` value.
        required: keys every JSON of this kind holds, with their JSON types.
        config: ``arch`` object -> config (raises ``ValueError`` on unknown, missing or
            out-of-range fields); the config has an ``obs_version``.
        build: config -> network (in float32).
        weight_dtypes: names allowed in the JSON's ``weights_dtype`` (then a required
            key) -> the dtype the tensors are stored in; None: the network's own dtypes.
    """

    format: str
    required: Mapping[str, Any]
    config: Callable[[object], Any]
    build: Callable[[Any], nn.Module]
    weight_dtypes: Mapping[str, torch.dtype] | None = field(default=None)


def config_path(weights: str | os.PathLike) -> Path:
    """The JSON next to a ``.pt`` file."""
    return Path(weights).with_suffix(".json")


def resolve(spec: str | os.PathLike) -> Path:
    """A shipped checkpoint's name (``"ppo"``) or a path, as the ``.pt`` path.

    Raises:
        ValueError: a name that is not shipped.
    """
    path = Path(spec)
    if isinstance(spec, str) and path.suffix != ".pt" and os.sep not in spec:
        path = SHIPPED_DIR / f"{spec}.pt"
        if not path.is_file():
            if problem := folder_problem(spec):
                raise ValueError(problem)
            shipped = sorted(p.stem for p in SHIPPED_DIR.glob("*.pt"))
            raise ValueError(f"no shipped checkpoint {spec!r}; shipped: {shipped}")
    elif problem := folder_problem(path):
        raise ValueError(problem)
    return path


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def canonical(doc: Mapping[str, Any]) -> bytes:
    """The JSON ``doc`` without ``sha256``, as hashed (sorted keys, no spaces).

    Raises:
        ValueError: a value JSON cannot hold.
    """
    body = {k: v for k, v in doc.items() if k != "sha256"}
    try:
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"checkpoint metadata is not JSON-serialisable: {exc}") from None


def digest(weights: str | os.PathLike, doc: Mapping[str, Any]) -> str:
    """The ``sha256`` a checkpoint's JSON records: of the weights file and the JSON (hex).

    SHA-256 over the weights file's bytes, ``HASH_TAG``, then ``canonical(doc)``.
    """
    h = hashlib.sha256()
    with open(weights, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    h.update(HASH_TAG)
    h.update(canonical(doc))
    return h.hexdigest()


def read_config(path: str | os.PathLike, kind: Kind) -> dict[str, Any]:
    """The validated JSON of checkpoint ``path`` (the ``.pt`` or the ``.json``).

    Raises:
        ValueError: see ``read_json``; a missing or mistyped key, another format, a bad
            ``sha256`` field, an unknown ``weights_dtype``, an invalid or oversized
            architecture, or an ``obs_version`` that differs from the architecture's.
    """
    if problem := folder_problem(path):
        raise ValueError(problem)
    cfg = config_path(path)
    if not cfg.is_file() and not Path(path).exists():  # name what the user gave: the .pt
        raise ValueError(f"checkpoint {str(path)!r} is missing")
    doc = read_json(cfg)
    if problem := format_problem(path, doc, kind.format):  # another kind's checkpoint, or none
        raise ValueError(problem)
    for key, typ in kind.required.items():
        if key not in doc:
            raise ValueError(f"checkpoint config {str(cfg)!r} misses the key {key!r}")
        v = doc[key]
        if isinstance(v, bool) or not isinstance(v, typ):
            shown = repr(v) if len(repr(v)) < 80 else f"{type(v).__name__} {repr(v)[:60]}..."
            raise ValueError(f"checkpoint config key {key!r} has the wrong type: {shown}")
    sha = doc["sha256"]
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ValueError(f"checkpoint config {str(cfg)!r}: sha256 is not 64 hex digits")
    if kind.weight_dtypes is not None:
        wd = doc.get("weights_dtype")
        if not isinstance(wd, str) or wd not in kind.weight_dtypes:
            raise ValueError(
                f"checkpoint weights_dtype {str(wd)[:40]!r} is not one of {sorted(kind.weight_dtypes)}"
            )
    try:
        arch = kind.config(doc["arch"])
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"checkpoint config {str(cfg)!r}: bad architecture: {exc}") from None
    if arch.obs_version != doc["obs_version"]:
        raise ValueError("checkpoint config: obs_version differs from the architecture's")
    return doc


def read_weights(path: str | os.PathLike, doc: Mapping[str, Any], kind: Kind) -> dict:
    """The checked tensors of checkpoint ``path`` whose validated JSON is ``doc``.

    Raises:
        ValueError: an oversized architecture, a weights file that is missing, too large,
            not what ``sha256`` hashed, unreadable by
            ``torch.load(weights_only=True)``, or with tensors that do not fit.
    """
    path = Path(path)
    cfg = kind.config(doc["arch"])
    dtype = kind.weight_dtypes[doc["weights_dtype"]] if kind.weight_dtypes is not None else None
    expected = expected_tensors(lambda: kind.build(cfg), dtype)
    if not path.is_file():
        raise ValueError(f"checkpoint weights {str(path)!r} are missing")
    size = path.stat().st_size
    if size > MAX_WEIGHTS_BYTES:
        raise ValueError(f"checkpoint weights {str(path)!r} are larger than {MAX_WEIGHTS_BYTES}")
    if digest(path, doc) != doc["sha256"]:
        raise ValueError(
            f"checkpoint weights {str(path)!r} do not match the sha256 of their config, "
            "which hashes the weights and the config (one was altered, or the checkpoint "
            "predates hashed configs: see tests/data/rehash_checkpoints.py)"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        text = " ".join(str(exc).split())[:200]
        raise ValueError(f"checkpoint weights {str(path)!r} cannot be read: {text}") from None
    check_tensors(state, expected, str(path))
    return state


_RECORDERS: list[list[Path]] = []
"""The lists of open ``recording`` blocks (innermost last)."""


@contextlib.contextmanager
def recording() -> Iterator[list[Path]]:
    """Within the block, every checkpoint ``load`` reads is recorded: yields the list it fills.

    Each ``load`` appends its weights file and its JSON (``x.pt``, ``x.json``: the paths it
    reads, shipped names resolved), whether or not they pass the checks; nested blocks each
    see every file. For what identifies an agent: the ladder builds it inside a block and
    hashes every file it read (``sichuan_env.agents.eval.ladder.agent_identity``). One
    thread at a time.
    """
    files: list[Path] = []
    _RECORDERS.append(files)
    try:
        yield files
    finally:
        for i in range(len(_RECORDERS) - 1, -1, -1):  # by identity: lists compare by value
            if _RECORDERS[i] is files:
                del _RECORDERS[i]
                break


def load(path: str | os.PathLike, kind: Kind) -> tuple[nn.Module, dict[str, Any]]:
    """``(network in eval mode, config)`` of checkpoint ``path`` (a shipped name or a path).

    The network holds the stored dtype (float16 weights stay float16; call ``.float()``).

    Raises:
        ValueError: an unknown shipped name, or any check of ``read_config`` / ``read_weights``.
    """
    path = resolve(path)
    for files in _RECORDERS:
        files.extend((path, config_path(path)))
    doc = read_config(path, kind)
    state = read_weights(path, doc, kind)
    net = kind.build(kind.config(doc["arch"]))
    if kind.weight_dtypes is not None:
        net = net.to(kind.weight_dtypes[doc["weights_dtype"]])
    net.load_state_dict(state, strict=True)
    return net.eval(), doc


def save(
    path: str | os.PathLike,
    kind: Kind,
    net: nn.Module,
    meta: Mapping[str, Any],
    *,
    dtype: str | None = None,
) -> Path:
    """Write checkpoint ``path`` (+ JSON) of ``net``; returns the ``.pt`` path.

    The JSON holds ``format``, ``arch`` (``net.config.to_dict()``), ``obs_version``,
    ``created``, ``weights_dtype`` (kinds that store one), ``meta`` and ``sha256``
    (``digest``). Both files are written to temporary names, then renamed into place;
    an existing checkpoint of that name stays as it was when anything fails.

    Args:
        path: where the weights go (a ``.pt`` name); the JSON takes the same stem.
        kind: the checkpoint kind.
        net: the network (its ``config`` has ``to_dict()`` and ``obs_version``).
        meta: ``rules``, ``command``, ``commit``, ``wall_clock_s``, the kind's other required
            keys and any extra JSON-serialisable fields (metrics).
        dtype: a name of ``kind.weight_dtypes`` (default: its first), for kinds that have them.

    Raises:
        ValueError: a path not ending in ``.pt``, an unknown dtype, a required field
            missing, metadata JSON cannot hold, or a non-finite tensor (nothing is written).
        OSError: a file could not be written, however it failed (``torch.save``'s
            ``RuntimeError`` included: a ``sichuan_env._files.WriteError`` naming ``path``);
            an existing checkpoint of that name is unchanged.
    """
    path = Path(path)
    if path.suffix != ".pt":
        raise ValueError(f"a checkpoint path ends in .pt, got {str(path)!r}")
    config: Any = net.config
    doc: dict[str, Any] = {
        "format": kind.format,
        "arch": config.to_dict(),
        "obs_version": config.obs_version,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **meta,
    }
    cast = None
    if kind.weight_dtypes is not None:
        dtype = next(iter(kind.weight_dtypes)) if dtype is None else dtype
        if dtype not in kind.weight_dtypes:
            raise ValueError(f"dtype must be one of {sorted(kind.weight_dtypes)}, got {dtype!r}")
        doc["weights_dtype"] = dtype
        cast = kind.weight_dtypes[dtype]
    elif dtype is not None:
        raise ValueError("this kind of checkpoint stores the network's own dtypes")
    missing = [k for k in kind.required if k not in doc and k != "sha256"]
    if missing:
        raise ValueError(f"checkpoint metadata misses {missing}")
    state = {}
    for k, v in net.state_dict().items():
        v = v.detach().cpu()
        state[k] = v.to(cast) if cast is not None and v.is_floating_point() else v.clone()
        if v.is_floating_point() and not bool(torch.isfinite(state[k]).all()):
            raise ValueError(
                f"not writing {path}: tensor {k!r} has non-finite values (the run diverged)"
            )
    canonical(doc)  # JSON-serialisable, before any file is written
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_pt = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_json: str | None = None
    try:
        with open(tmp_pt, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        doc["sha256"] = digest(tmp_pt, doc)
        fd, tmp_json = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, indent=2))
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_pt, 0o666 & ~umask)
        os.chmod(tmp_json, 0o666 & ~umask)
        os.replace(tmp_pt, path)
        os.replace(tmp_json, config_path(path))
    except BaseException as exc:
        for tmp in (tmp_pt, tmp_json):
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        # torch.save reports a short write as RuntimeError ("[enforce fail at
        # inline_container.cc]"): an OSError naming the checkpoint, as any failed write
        error = as_write_error(path, exc) if isinstance(exc, (OSError, RuntimeError)) else exc
        if error is exc:
            raise
        raise error from exc
    return path


def rehash(path: str | os.PathLike) -> str:
    """Record ``digest`` in the JSON of checkpoint ``path`` (its weights untouched); the hash.

    For checkpoints written before the JSON was hashed (their ``sha256`` covered the
    weights only); check such a file's weights against the old hash first
    (``tests/data/rehash_checkpoints.py`` does).
    """
    path = Path(path)
    cfg = config_path(path)
    doc = read_json(cfg)
    doc["sha256"] = digest(path, doc)
    write_atomic(cfg, json.dumps(doc, indent=2))
    return doc["sha256"]


__all__ = [
    "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "MAX_PARAMETERS", "MAX_TENSORS", "MAX_WEIGHTS_BYTES",
    "SHIPPED_DIR", "Kind", "canonical", "check_finite_module", "check_tensors", "config_path",
    "digest", "expected_tensors", "file_sha256", "load", "read_config", "read_json",
    "read_weights", "recording", "rehash", "resolve", "save",
]  # fmt: skip
