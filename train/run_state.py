"""A training run's saved state, read back without trust: ``state.pt``, counters, optimizer.

``read_state`` loads a run's ``state.pt`` safely, ``check_counters`` checks its
counters against the script's types, ``load_optimizer`` / ``check_optimizer``
load and check the optimizer's state (finite, shaped like the parameters, on the
CPU or the parameter's device). ``sichuan_env.train.common`` re-exports them for
``save_run`` / ``load_run`` and the belief model's training.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

MAX_STATE_BYTES = 1 << 30
"""Bytes a run's ``state.pt`` may take (the optimizer's moments: twice the weights, and more)."""
MAX_COUNTER = 2**62
"""Integer counters lie in ``0..MAX_COUNTER``."""
BEST = "best"
"""A counter type: a float that may be +-inf (a best-so-far that starts unset), never NaN."""


def read_state(path: Path) -> dict[str, Any]:
    """A run's ``state.pt``: ``{"optimizer": dict, "counters": dict}``, read safely.

    Raises:
        ValueError: missing, not a file, larger than ``MAX_STATE_BYTES``, truncated or
            otherwise unreadable by ``torch.load(weights_only=True)`` (which refuses
            pickled objects), or without the two dicts.
    """
    if not path.is_file():
        raise ValueError(f"cannot resume: {path} is missing")
    if path.stat().st_size > MAX_STATE_BYTES:
        raise ValueError(f"cannot resume: {path} is larger than {MAX_STATE_BYTES} bytes")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (torch raises many kinds for a damaged file)
        text = " ".join(str(exc).split())[:200]
        raise ValueError(f"cannot resume: {path} cannot be read: {text}") from None
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("optimizer"), dict)
        or not isinstance(state.get("counters"), dict)
    ):
        raise ValueError(f"cannot resume: {path} is not a training state")
    return state


def check_counters(counters: object, types: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``counters`` after checking they are exactly ``types``' keys, each of its type.

    ``types`` maps each key to ``int`` (``0..MAX_COUNTER``), ``float`` (finite, an int
    accepted) or ``BEST`` (a float, +-inf allowed, never NaN).

    Raises:
        ValueError: not a dict, missing or unknown keys (a run of another script), or a
            value of the wrong type or range.
    """
    if not isinstance(counters, dict):
        raise ValueError(f"{what}: the counters are not a dict")
    missing = sorted(set(types) - set(counters))
    extra = sorted(str(k)[:40] for k in set(counters) - set(types))
    if missing or extra:
        raise ValueError(
            f"{what}: counters missing {missing}, unexpected {extra[:5]} (a run of another script?)"
        )
    out: dict[str, Any] = {}
    for key, typ in types.items():
        v = counters[key]
        if typ is int:
            ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_COUNTER
        else:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)
            ok = ok and (typ == BEST or math.isfinite(v))
            v = float(v) if ok else v
        if not ok:
            shown = repr(v)[:40]
            raise ValueError(
                f"{what}: counter {key!r} is {shown}, not a valid {getattr(typ, '__name__', typ)}"
            )
        out[key] = v
    return out


def _check_tensor_value(v: torch.Tensor, what: str, device: torch.device | None = None) -> None:
    on = v.device.type == "cpu" or (device is not None and v.device == device)
    if v.layout != torch.strided or not on or v.is_quantized:
        raise ValueError(f"{what} is not a dense tensor on the CPU or its parameter's device")
    if (v.is_floating_point() or v.is_complex()) and not bool(torch.isfinite(v).all()):
        raise ValueError(f"{what} holds non-finite values")


def check_optimizer(opt: torch.optim.Optimizer, what: str) -> None:
    """Raise ``ValueError`` unless ``opt``'s state is finite and shaped like its parameters.

    Every numeric hyper-parameter of every group is finite (the learning rate > 0), and
    every state tensor of a parameter is a dense tensor with finite values on the CPU or
    the parameter's device (``--device``), of the parameter's shape unless a scalar
    (Adam's ``step``).
    """
    for g, group in enumerate(opt.param_groups):
        for key, value in group.items():
            if key == "params":
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            for x in values:
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    continue
                if not math.isfinite(x):
                    raise ValueError(f"{what}: param group {g} has {key} = {value}")
        lr = group.get("lr")
        if isinstance(lr, (int, float)) and not isinstance(lr, bool) and not lr > 0:
            raise ValueError(f"{what}: param group {g} has lr = {lr}")
        for i, p in enumerate(group["params"]):
            for key, v in opt.state.get(p, {}).items():
                name = f"{what}: state {key!r} of parameter {i} (group {g})"
                if isinstance(v, torch.Tensor):
                    _check_tensor_value(v, name, p.device)
                    if v.dim() and v.shape != p.shape:
                        raise ValueError(f"{name} has shape {tuple(v.shape)}, not {tuple(p.shape)}")
                elif isinstance(v, float) and not math.isfinite(v):
                    raise ValueError(f"{name} is {v}")


def load_optimizer(opt: torch.optim.Optimizer, saved: object, what: str) -> None:
    """Load ``saved`` (an optimizer ``state_dict`` read from disk) into ``opt``, checked.

    Raises:
        ValueError: a state that does not fit ``opt`` (groups, parameters), or that holds
            non-finite, mis-shaped or non-dense tensors, or bad hyper-parameters
            (``check_optimizer``); ``opt`` may then hold part of it: drop it.
    """
    if not isinstance(saved, dict) or not isinstance(saved.get("param_groups"), list):
        raise ValueError(f"{what}: the optimizer state is not an optimizer state_dict")
    try:
        opt.load_state_dict(saved)
    except (ValueError, KeyError, TypeError, RuntimeError, IndexError, AttributeError) as exc:
        text = " ".join(str(exc).split())[:200]
        raise ValueError(f"{what}: optimizer state does not fit: {text}") from None
    check_optimizer(opt, what)


__all__ = [
    "BEST",
    "MAX_COUNTER",
    "MAX_STATE_BYTES",
    "check_counters",
    "check_optimizer",
    "load_optimizer",
    "read_state",
]
