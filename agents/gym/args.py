"""The argument checks of the Gymnasium envs: ``SingleSeatEnv`` and ``SingleSeatVectorEnv``.

Both envs check every constructor argument here (``check_env_args``) before
anything is built, with the same messages and ranges, and ``reset``'s options
(``check_options``); the batched env's seed list and ``reset_mask`` are checked
here too. A check raises ``TypeError`` for an argument of the wrong type and
``ValueError`` for a bad value, and changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import ObsVersion
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.deal_args import validate_seed
from sichuan_env.tiles import echo

MAX_MAGNITUDE = 1e6
"""Largest ``|reward_scale|`` and ``illegal_penalty`` accepted (rewards stay exact floats)."""
RENDER_MODES = ("human", "ansi", "rgb_array")


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer scalar (a Python or numpy integer, not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_number(value: object, name: str, lo: float, hi: float) -> float:
    """``value`` as a float after checking it is a real number in ``[lo, hi]``.

    Raises:
        TypeError: not a real number (bools, strings, None, arrays).
        ValueError: NaN, infinite, or outside ``[lo, hi]`` (huge integers included).
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} must be a real number, got {echo(value)}")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not (math.isfinite(x) and lo <= x <= hi):
        raise ValueError(f"{name} must be a finite number in [{lo:g}, {hi:g}], got {echo(value)}")
    return x


def check_options(options: object) -> dict[str, Any]:
    """``reset``'s ``options``: None or a dict (no key is defined; any is ignored).

    Raises:
        TypeError: neither None nor a dict.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be None or a dict, got {echo(options)}")
    return options


@dataclass(frozen=True)
class EnvArgs:
    """The checked constructor arguments shared by ``SingleSeatEnv`` and the batched env."""

    opponents: tuple[Any, ...]
    rules: RuleConfig
    spec: ObsVersion
    seat: int | str
    oracle: bool
    reward_scale: float
    illegal_action: str
    illegal_penalty: float
    render_mode: str | None
    fused_opponents: bool


def check_env_args(
    opponents: object,
    rules: object,
    obs_version: object,
    seat: object,
    oracle: object,
    reward_scale: object,
    illegal_action: object,
    illegal_penalty: object,
    render_mode: object,
    fused_opponents: object,
    render_modes: tuple[str, ...] = RENDER_MODES,
) -> EnvArgs:
    """Check every constructor argument before anything is built; see ``SingleSeatEnv``.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an argument of the right type with a bad value.
    """
    if not isinstance(opponents, (list, tuple)):
        raise TypeError(f"opponents must be a list or tuple of 3 agents, got {echo(opponents)}")
    if len(opponents) != 3:
        raise ValueError(f"opponents must name 3 agents, got {len(opponents)}: {echo(opponents)}")
    rules = RuleConfig() if rules is None else rules
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if not is_int(obs_version):
        raise TypeError(f"obs_version must be an integer, got {echo(obs_version)}")
    spec = get_obs_version(int(obs_version))  # type: ignore[call-overload]
    if isinstance(seat, str):
        if seat != "rotate":
            raise ValueError(f"seat must be 0..3 or 'rotate', got {echo(seat)}")
    elif not is_int(seat):
        raise ValueError(f"seat must be 0..3 or 'rotate', got {echo(seat)}")
    elif not 0 <= seat <= 3:  # type: ignore[operator]
        raise ValueError(f"seat must be 0..3 or 'rotate', got {seat}")
    for name, flag in (("oracle", oracle), ("fused_opponents", fused_opponents)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {echo(flag)}")
    scale = check_number(reward_scale, "reward_scale", -MAX_MAGNITUDE, MAX_MAGNITUDE)
    if not isinstance(illegal_action, str):
        raise TypeError(f"illegal_action must be 'penalize' or 'raise', got {echo(illegal_action)}")
    if illegal_action not in ("penalize", "raise"):
        raise ValueError(
            f"illegal_action must be 'penalize' or 'raise', got {echo(illegal_action)}"
        )
    penalty = check_number(illegal_penalty, "illegal_penalty", 0.0, MAX_MAGNITUDE)
    if render_mode is not None and (
        not isinstance(render_mode, str) or render_mode not in render_modes
    ):
        raise ValueError(
            f"render_mode must be None or one of {render_modes}, got {echo(render_mode)}"
        )
    return EnvArgs(
        opponents=tuple(opponents),
        rules=rules,
        spec=spec,
        seat=seat if isinstance(seat, str) else int(seat),  # type: ignore[call-overload]
        oracle=bool(oracle),
        reward_scale=scale,
        illegal_action=illegal_action,
        illegal_penalty=penalty,
        render_mode=render_mode,
        fused_opponents=bool(fused_opponents),
    )


def seed_list(seed: object, n: int) -> list[int | None]:
    """``reset``'s ``seed`` as one checked seed (or None) per env."""
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        return [validate_seed(int(seed) + i, f"seed + {i}") for i in range(n)]
    if isinstance(seed, np.ndarray):
        if seed.ndim != 1:
            raise ValueError(f"seed must be None, an integer or {n} seeds, got shape {seed.shape}")
        seed = seed.tolist()
    if not isinstance(seed, (list, tuple)):
        raise TypeError(f"seed must be None, an integer or a list of {n} seeds, got {echo(seed)}")
    if len(seed) != n:
        raise ValueError(f"seed must hold one seed per env ({n}), got {len(seed)}")
    return [None if s is None else validate_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]


def reset_mask(options: dict[str, Any], n: int) -> np.ndarray:
    """``options["reset_mask"]``, checked as ``SyncVectorEnv`` checks it (all True if absent)."""
    if "reset_mask" not in options:
        return np.ones(n, dtype=bool)
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask).__name__}")
    if mask.shape != (n,):
        raise ValueError(f"options['reset_mask'] must have shape ({n},), got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"options['reset_mask'] must have dtype bool, got {mask.dtype}")
    if not mask.any():
        raise ValueError("options['reset_mask'] must reset at least one env")
    return mask.copy()
