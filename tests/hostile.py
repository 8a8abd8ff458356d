"""``rejects``: a call must raise a clear error and leave every object exactly as it was;
``exits_in_one_line``: a CLI's ``main`` exits with one ``error:`` line; ``files_of``: a folder's
files and bytes (nothing lost)."""

from __future__ import annotations

import copy
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

ALLOWED = (ValueError, TypeError, RuntimeError)
"""The contract's error types (``IllegalActionError`` is a ``ValueError``)."""


def snapshot(obj: object) -> bytes:
    """Everything observable about an object's state, as bytes (numpy arrays by content)."""
    if hasattr(obj, "_st") and hasattr(obj, "_history"):  # Game
        return pickle.dumps(
            (
                obj._st.tobytes(),
                obj._mask().tobytes(),
                obj.record() if obj._st["n_log"][0] < 640 else None,
            )
        )
    if hasattr(obj, "_states") and hasattr(obj, "_masks"):  # VectorEnv
        parts = [
            getattr(obj, name).tobytes()
            for name in sorted(vars(obj))
            if isinstance(getattr(obj, name), np.ndarray)
        ]
        return pickle.dumps(parts)
    env = getattr(obj, "unwrapped", obj)
    if hasattr(env, "possible_agents"):  # AEC env
        game = env.game
        return pickle.dumps(
            (
                None if game is None else game._st.tobytes(),
                copy.deepcopy(getattr(env, "_cumulative_rewards", None)),
                copy.deepcopy(getattr(env, "rewards", None)),
                copy.deepcopy(getattr(env, "terminations", None)),
                list(getattr(env, "agents", [])),
                getattr(env, "agent_selection", None),
            )
        )
    return pickle.dumps(obj)


def rejects(
    obj: object, call: Callable[[], object], exc: type | tuple = ALLOWED, match: str | None = None
) -> BaseException:
    """Assert ``call()`` raises ``exc`` (matching ``match``) and ``obj`` is unchanged."""
    before = snapshot(obj)
    with pytest.raises(exc, match=match) as info:
        call()
    assert isinstance(info.value, ALLOWED), f"{type(info.value).__name__} is outside the contract"
    assert snapshot(obj) == before, "a rejected call changed the object's state"
    return info.value


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def exits_in_one_line(main, argv: list[str], code: int, capsys, pattern: str) -> str:
    """``main(argv)`` exits ``code`` with one ``error:`` line matching ``pattern``, no traceback."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert info.value.code == code, err
    assert "Traceback" not in err and ": error: " in lines[-1], err
    assert re.search(pattern, lines[-1]), lines[-1]
    return lines[-1]
