"""What an agent spec's string names: ``"module:attr"`` references, folders, near misses.

``make_agent`` (``sichuan_env.agents.registry``) resolves specs with these:
``resolve_ref`` imports a ``"module:attr"`` reference (``import_ref``; a module
importable from nowhere else is looked for in the current folder, since a console
script does not put it on ``sys.path`` as ``python -m`` does) and checks that it names
an agent factory before anything calls it (``check_factory``); ``folder_problem`` says
why a folder is not a checkpoint (a run folder: pass its ``best.pt`` or ``last.pt``);
``did_you_mean`` suggests the registered names close to an unknown one. Imports
nothing heavy (no torch).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from sichuan_env.agents.base import Agent

from sichuan_env.tiles import echo


def resolve_ref(ref: Any, what: str, spec: str) -> Callable[..., Any]:
    """A callable, or the agent factory a ``"module:attr.attr"`` string names (imported now).

    A callable passed in-process (``register("x", SomeClass)``) is trusted; one named by a
    string (a lineup entry, an entry point, a lazy registration) must pass
    ``check_factory`` before anything calls it.

    Raises:
        ValueError: the module cannot be imported (any exception its import raises), the
            attribute is missing, or it is not an agent factory; the message names ``spec``.
    """
    if callable(ref):
        return ref
    obj = import_checked(ref, spec)
    check_factory(obj, ref, spec, what)
    return obj


def import_checked(ref: str, spec: str) -> Any:
    """``import_ref(ref)``; any failure of the import is a ``ValueError`` naming ``spec``."""
    try:
        return import_ref(ref)
    except Exception as exc:  # noqa: BLE001  (a plugin's import may raise anything)
        named = f"agent {spec!r}" + (f" ({ref})" if ref != spec else "")
        raise ValueError(f"cannot import {named}: {why(exc)}") from None


def why(exc: BaseException) -> str:
    """``Type: message`` of an exception, on one line."""
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def agent_like_class(obj: object) -> bool:
    """A class whose instances have the protocol's methods (``act`` and ``act_batch``)."""
    return inspect.isclass(obj) and all(
        callable(getattr(obj, m, None)) for m in ("act", "act_batch")
    )


def returns_agent(func: Callable[..., Any]) -> bool:
    """Whether ``func``'s return annotation names an agent class or the ``Agent`` protocol."""
    try:
        ann = inspect.signature(func, eval_str=True).return_annotation
    except Exception:  # noqa: BLE001  (names that do not resolve: read the text)
        try:
            ann = inspect.signature(func).return_annotation
        except (TypeError, ValueError):
            return False
    if ann is Agent or agent_like_class(ann):
        return True
    if isinstance(ann, str):
        last = ann.strip().strip("'\"").rsplit(".", 1)[-1]
        return last == "Agent" or last.endswith("Agent")
    return False


def check_factory(obj: object, ref: str, spec: str, what: str) -> None:
    """Raise ``ValueError`` unless ``obj`` may be called to make an agent (it is not called).

    An agent factory named by a string is a class with ``act`` and ``act_batch``, or a
    Python function or method whose return annotation is an agent class or ``Agent``
    (``def make(seed: int | None) -> MyAgent``). Anything else (``sys:exit``, a builtin,
    a module, an instance, an unannotated function) is refused before it is called.
    """
    if what == "loader":
        ok = callable(obj)
    else:
        target = obj.func if isinstance(obj, functools.partial) else obj
        ok = agent_like_class(target) or (
            (inspect.isfunction(target) or inspect.ismethod(target)) and returns_agent(target)
        )
    if not ok:
        kind = "a class with act and act_batch, or a function annotated to return an Agent"
        named = f"agent {spec!r}" + (f" ({ref})" if ref != spec else "")
        raise ValueError(
            f"{named} is not an agent {what}: {type(obj).__name__} "
            f"{echo(getattr(obj, '__qualname__', obj))[:80]} (an agent {what} is {kind})"
        )


@functools.lru_cache(maxsize=64)
def import_ref(ref: str) -> Any:
    """The object a ``"module:attr.attr"`` string names (``import_module``; cached)."""
    module, _, attrs = ref.partition(":")
    obj: Any = import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def import_module(module: str) -> ModuleType:
    """``importlib.import_module(module)``, else from the current folder.

    A console script (``sichuan-eval``) does not put the current folder on ``sys.path``
    as ``python -m`` does, so ``--lineup mybelief:make`` would not find ``./mybelief.py``;
    a top-level module that is importable from nowhere else is looked for there too.

    Raises:
        ModuleNotFoundError: found neither on ``sys.path`` nor in the current folder.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        here = os.getcwd()
        if exc.name != top or any(os.path.abspath(p or ".") == here for p in sys.path):
            raise
    sys.path.insert(0, here)
    try:
        importlib.invalidate_caches()
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != top:
            raise
        raise ModuleNotFoundError(
            f"No module named {top!r} (not on sys.path, nor in the current folder {here})",
            name=top,
        ) from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(here)


def check_ref(ref: object, arg: str) -> None:
    """Raise ``ValueError`` unless ``ref`` is a callable or a ``"module:attribute"`` string."""
    if callable(ref):
        return
    if not isinstance(ref, str) or not re.fullmatch(r"[\w.]+:[\w.]+", ref):
        raise ValueError(
            f"{arg} must be a callable or a 'module:attribute' string, got {echo(ref)}"
        )


def folder_problem(path: str | os.PathLike) -> str | None:
    """Why the folder ``path`` is not a checkpoint, naming the checkpoints it holds; None: no folder.

    A training run writes ``best.pt`` and ``last.pt`` into its folder; the message says
    which of them ``path`` holds, so the user can pass one.
    """
    folder = Path(path)
    if not folder.is_dir():
        return None
    held = [str(folder / n) for n in ("best.pt", "last.pt") if (folder / n).is_file()]
    if held:
        return f"{str(folder)!r} is a run folder, not a checkpoint; pass {' or '.join(held)}"
    return (
        f"{str(folder)!r} is a folder, not a checkpoint, and holds no best.pt or last.pt "
        "(a checkpoint is a .pt file with its .json beside it)"
    )


def did_you_mean(spec: str | os.PathLike, names: list[str]) -> str:
    """`` (did you mean 'heuristic'?)`` for a spec close to some of ``names``, else ``""``."""
    close = difflib.get_close_matches(str(spec), names, n=3, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)"
