"""Where a network runs: ``--device auto|cpu|cuda[:N]|mps`` and ``--amp auto|bf16|off``.

One place parses and resolves the device of every training CLI, the agents that
run networks (``make_agent(..., device=)``, ``TorchAgent(device=)``,
``BeliefModel(device=)``) and the CleanRL-style example::

    from sichuan_env.agents.device import add_device_args, resolve_device
    add_device_args(parser)                  # --device, --amp (checked while parsing)
    device = resolve_device(args.device)     # torch.device("cpu") on a CPU-only machine

``auto`` is CUDA where torch sees a GPU, else Apple's MPS where available,
else the CPU. A device this machine does not have (``cuda`` without a GPU,
``cuda:7`` on a machine with two, ``mps`` off a Mac, ``tpu``) is a
``DeviceError`` (a ``ValueError``); in a CLI, one line ``prog: error: argument
--device: ...`` and exit status 2.

Autocast (``amp_dtype``): ``auto`` is bfloat16 on a CUDA device that supports it
and off elsewhere (a CPU gains little, and float16 would need loss scaling);
``bf16`` asks for bfloat16 on any device (CPUs with AMX / AVX512-BF16); ``off``
keeps float32. Checkpoints are always written from CPU tensors
(``cpu_state``), so a file trained on a GPU loads on a CPU-only machine.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator
from typing import Any

import torch

DEVICE_HELP = "auto|cpu|cuda[:N]|mps"
"""The spellings ``--device`` accepts."""
AMP_CHOICES = ("auto", "bf16", "off")
"""The values of ``--amp``."""
_SPEC = re.compile(r"(auto|cpu|mps|cuda)(?::(\d{1,4}))?")


class DeviceError(ValueError):
    """A device that is not spelled right or that this machine does not have."""


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_device(spec: object = "auto") -> torch.device:
    """The ``torch.device`` that ``spec`` names, checked against this machine.

    Args:
        spec: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` or a
            ``torch.device``; None means ``"auto"``.

    Raises:
        DeviceError: a misspelt device, or one this machine does not have (the
            message says what it has).
        TypeError: ``spec`` is neither a string nor a ``torch.device``.
    """
    if spec is None:
        spec = "auto"
    if isinstance(spec, torch.device):
        spec = str(spec)
    if not isinstance(spec, str):
        raise TypeError(f"a device is a string ({DEVICE_HELP}), got {type(spec).__name__}")
    text = spec.strip().lower()
    m = _SPEC.fullmatch(text)
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise DeviceError(f"unknown device {spec[:40]!r}: give {DEVICE_HELP}")
    kind, index = m.group(1), m.group(2)
    if kind == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if _mps_available() else torch.device("cpu")
    if kind == "cpu":
        return torch.device("cpu")
    if kind == "mps":
        if not _mps_available():
            raise DeviceError(f"device 'mps' is not available here ({_have()})")
        return torch.device("mps")
    if not torch.cuda.is_available():
        raise DeviceError(f"device {text!r} is not available: torch sees no CUDA GPU ({_have()})")
    if index is None:
        return torch.device("cuda")
    count = torch.cuda.device_count()
    if int(index) >= count:
        raise DeviceError(
            f"device {text!r} is not available: this machine has {count} CUDA GPU(s) "
            f"(cuda:0..cuda:{count - 1})"
        )
    return torch.device("cuda", int(index))


def _have() -> str:
    """What this machine offers, for error messages."""
    have = ["cpu"]
    if torch.cuda.is_available():
        have.append(f"cuda:0..{torch.cuda.device_count() - 1}")
    if _mps_available():
        have.append("mps")
    return "available: " + ", ".join(have)


def amp_dtype(device: torch.device, amp: str = "auto") -> torch.dtype | None:
    """The autocast dtype for ``device`` under ``amp`` (None: no autocast, float32).

    Raises:
        ValueError: ``amp`` is not one of ``AMP_CHOICES``.
    """
    if amp not in AMP_CHOICES:
        raise ValueError(f"amp must be one of {', '.join(AMP_CHOICES)}, got {amp!r}")
    if amp == "off":
        return None
    if amp == "bf16":
        return torch.bfloat16
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return None


@contextlib.contextmanager
def autocast(device: torch.device, dtype: torch.dtype | None) -> Iterator[None]:
    """``torch.autocast(device.type, dtype)``, or nothing when ``dtype`` is None."""
    if dtype is None:
        yield
        return
    with torch.autocast(device.type, dtype=dtype):
        yield


def cpu_state(value: Any) -> Any:
    """``value`` (a state dict, nested dicts and lists of tensors) with every tensor on the CPU.

    What every checkpoint and training state is saved as, so that it loads on a
    CPU-only machine with ``torch.load``'s default ``map_location``.
    """
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: cpu_state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(cpu_state(v) for v in value)
    return value


def device_arg(text: str) -> str:
    """The argparse ``type`` of ``--device``: the canonical name of a device this machine has.

    Raises:
        argparse.ArgumentTypeError: see ``resolve_device`` (argparse prints one line, exit 2).
    """
    try:
        return str(resolve_device(text))
    except DeviceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def from_args(args: argparse.Namespace) -> tuple[torch.device, torch.dtype | None]:
    """``(device, autocast dtype)`` of parsed ``--device`` and ``--amp`` (``add_device_args``)."""
    device = resolve_device(args.device)
    return device, amp_dtype(device, getattr(args, "amp", "off"))


def add_device_args(parser: argparse.ArgumentParser, *, amp: bool = True) -> None:
    """Add ``--device`` (and, with ``amp``, ``--amp``) to ``parser``.

    ``args.device`` is then the canonical name of a device this machine has
    (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``): ``resolve_device`` turns it into a
    ``torch.device``. An absent device fails while parsing (exit 2).
    """
    parser.add_argument(
        "--device",
        type=device_arg,
        default="auto",
        metavar="DEVICE",
        help=f"where the network runs: {DEVICE_HELP} (auto: CUDA if present, else MPS, else CPU)",
    )
    if amp:
        parser.add_argument(
            "--amp",
            choices=AMP_CHOICES,
            default="auto",
            help="autocast: auto (bfloat16 on CUDA GPUs that support it, off on CPU), bf16, off",
        )


__all__ = [
    "AMP_CHOICES",
    "DEVICE_HELP",
    "DeviceError",
    "add_device_args",
    "amp_dtype",
    "autocast",
    "cpu_state",
    "device_arg",
    "from_args",
    "resolve_device",
]
