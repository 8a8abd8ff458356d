"""One contract for the actions every env takes: what is an action id, and what is an error.

Every env and mode (the PettingZoo AEC env, the Gymnasium single-seat and vector
envs, ``VectorEnv``) checks its actions here first, before anything moves:

- an action of the wrong type or shape (a string, a float even if whole such as
  ``2.0``, a bool, ``None`` where no action is due, a list ``[2]``, a numpy float
  ``np.float32(1)``, an array with dimensions) raises ``ActionTypeError``, which
  is both a ``TypeError`` and an ``IllegalActionError`` (a ``ValueError``);
- an integer outside ``[0, 88)`` raises ``IllegalActionError``;

whatever the env's ``illegal_action`` says: ``"penalize"``, ``"terminate"`` and
``"raise"`` are what happens to a well-formed action id that is not legal now.
A rejected call changes nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.actions import ACTION_SPACE, as_action_id
from ..engine.errors import IllegalActionError


class ActionTypeError(IllegalActionError, TypeError):
    """An action that is not an action id at all (wrong type or shape); nothing changes."""


def action_id(action: object, who: str, legal: Callable[[], list[str]] | None = None) -> int:
    """``action`` as an id in ``[0, 88)`` (``as_action_id``), or the contract's error.

    Args:
        action: an ``int``, a numpy integer or a 0-d integer array.
        who: the prefix of the error message (``"player_0"``, ``"SingleSeatEnv.step"``).
        legal: gives the legal actions the error lists (``IllegalActionError.legal``).

    Raises:
        ActionTypeError: not an integer scalar (a ``TypeError``).
        IllegalActionError: an integer outside ``[0, 88)`` (a ``ValueError``).
    """
    if type(action) is int and 0 <= action < ACTION_SPACE:
        return action
    try:
        return as_action_id(action)
    except TypeError as exc:
        raise ActionTypeError(f"{who}: {exc}", None if legal is None else legal()) from None
    except ValueError as exc:
        raise IllegalActionError(f"{who}: {exc}", None if legal is None else legal()) from None


def action_ids(actions: Any, n: int, skip: np.ndarray | None = None) -> np.ndarray:
    """``actions`` as ``int64[n]`` ids: an integer array of shape ``(n,)`` or n integer scalars.

    Args:
        actions: the batch of actions.
        n: how many envs.
        skip: ``bool[n]``, envs whose actions are ignored (their range is not
            checked, and their id in the result is 0); types are checked everywhere.

    Raises:
        ActionTypeError: a float, bool or object array, or an element that is not
            an integer scalar (naming the envs).
        ValueError: not n actions.
        IllegalActionError: an integer outside ``[0, 88)`` in an env not skipped.
    """
    values: dict[int, int] = {}  # env -> its out-of-range integer (as given)
    if isinstance(actions, (list, tuple)):
        if len(actions) != n:
            raise ValueError(f"actions must be {n} action ids (one per env), got {len(actions)}")
        arr = np.zeros(n, dtype=np.int64)
        bad: list[int] = []
        first = ""
        for i, x in enumerate(actions):
            a, problem = _one(x)
            if problem is not None:
                bad.append(i)
                first = first or problem
            elif a < 0 or a >= ACTION_SPACE:  # an integer out of range (maybe beyond int64)
                arr[i], values[i] = -1, a
            else:
                arr[i] = a
        if bad:
            raise ActionTypeError(f"actions of envs {bad[:10]} are not action ids: {first}")
    else:
        arr = np.asarray(actions)
        if arr.shape != (n,):
            raise ValueError(f"actions must have shape ({n},) (one per env), got {arr.shape}")
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise ActionTypeError(
                f"actions must be integer action ids in [0, {ACTION_SPACE}), got dtype {arr.dtype}"
            )
    out = (arr < 0) | (arr >= ACTION_SPACE)
    if skip is not None:
        out &= ~np.asarray(skip, dtype=bool)
    if out.any():
        rows = np.flatnonzero(out)[:10]
        shown = [values.get(int(i), int(arr[i])) for i in rows]
        raise IllegalActionError(
            f"actions of envs {rows.tolist()} are out of range [0, {ACTION_SPACE}) "
            f"(actions {shown}); no env moved"
        )
    return np.where((arr < 0) | (arr >= ACTION_SPACE), 0, arr).astype(np.int64)


def _one(x: object) -> tuple[int, str | None]:
    """``(the integer, None)`` for an integer scalar (in range or not), else ``(0, why not)``."""
    try:
        return as_action_id(x), None
    except TypeError as exc:
        return 0, str(exc)
    except ValueError:  # an integer out of range
        return operator.index(x), None  # type: ignore[arg-type]


__all__ = ["ActionTypeError", "action_id", "action_ids"]
