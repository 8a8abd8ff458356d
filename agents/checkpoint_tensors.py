"""The tensor checks of a checkpoint: what an architecture holds and what a state_dict may be.

``expected_tensors`` lists the tensors of an architecture without allocating
them (a network built on the ``meta`` device) and bounds their number and
size; ``check_tensors`` accepts a loaded state_dict only if it holds exactly
those tensors, dense, contiguous, on the CPU, of the expected floating dtype
and shape, and finite; ``check_finite_module`` checks a network before it is
saved. ``sichuan_env.agents.checkpoint`` reads and writes the files and calls
these (steps 2 and 4 of its checks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import torch
from torch import nn

MAX_WEIGHTS_BYTES = 256 << 20
"""Bytes a weights file may take."""
MAX_PARAMETERS = MAX_WEIGHTS_BYTES // 2
"""Values an architecture may hold (float16 weights of ``MAX_WEIGHTS_BYTES``)."""
MAX_TENSORS = 4096
"""Tensors a state_dict may hold."""


def expected_tensors(
    build: Callable[[], nn.Module], dtype: torch.dtype | None = None
) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """``{name: (shape, dtype)}`` of the network ``build()`` makes, built on the meta device.

    Nothing is allocated or initialised, however large the architecture. ``dtype``
    replaces the floating tensors' dtype (weights stored in float16).

    Raises:
        ValueError: more than ``MAX_PARAMETERS`` values or ``MAX_TENSORS`` tensors.
    """
    with torch.device("meta"):
        net = build()
    out = {
        k: (tuple(v.shape), dtype if dtype is not None and v.is_floating_point() else v.dtype)
        for k, v in net.state_dict().items()
    }
    values = sum(math.prod(s) for s, _ in out.values())
    if values > MAX_PARAMETERS or len(out) > MAX_TENSORS:
        raise ValueError(
            f"the architecture holds {values} values in {len(out)} tensors "
            f"(at most {MAX_PARAMETERS} in {MAX_TENSORS})"
        )
    return out


def check_tensors(
    state: object, expected: Mapping[str, tuple[tuple[int, ...], torch.dtype]], what: str
) -> None:
    """Raise ``ValueError`` unless ``state`` holds exactly the ``expected`` tensors, usable.

    Each must be a dense (strided), contiguous CPU tensor of the expected dtype and shape,
    a floating one, with finite values. Sparse, quantized or ``meta`` tensors, integer
    tensors and anything else are refused before any arithmetic touches them.
    """
    if not isinstance(state, dict):
        raise ValueError(f"{what}: expected a state_dict, got {type(state).__name__}")
    if len(state) > MAX_TENSORS:
        raise ValueError(f"{what}: more than {MAX_TENSORS} entries")
    missing = sorted(set(expected) - set(state))
    extra = sorted(str(k)[:60] for k in set(state) - set(expected))
    if missing or extra:
        raise ValueError(f"{what}: tensors missing {missing[:5]}, unexpected {extra[:5]}")
    for key, (shape, dtype) in expected.items():
        t = state[key]
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{what}: {key!r} is a {type(t).__name__}, not a tensor")
        if t.layout != torch.strided or t.is_quantized or t.device.type != "cpu":
            raise ValueError(
                f"{what}: tensor {key!r} is not a dense CPU tensor ({t.layout}, {t.device})"
            )
        if t.dtype != dtype or not t.is_floating_point():
            raise ValueError(f"{what}: tensor {key!r} should be {dtype}, got {t.dtype}")
        if tuple(t.shape) != shape:
            raise ValueError(f"{what}: tensor {key!r} should be {shape}, got {tuple(t.shape)}")
        if not t.is_contiguous():
            raise ValueError(f"{what}: tensor {key!r} is not contiguous")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{what}: tensor {key!r} has non-finite values")


def check_finite_module(net: nn.Module, what: str) -> None:
    """Raise ``ValueError`` if any floating tensor of ``net``'s state_dict is not finite."""
    for key, t in net.state_dict().items():
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"{what}: tensor {key!r} has non-finite values")
