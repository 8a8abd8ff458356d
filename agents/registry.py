"""Agents by name or by checkpoint path: ``make_agent("heuristic")``, ``make_agent("run/best.pt")``.

Every place that lets a user pick an agent (``agents.evaluate --lineup``,
``sichuan_env.play --opponents``, the benchmarks) resolves the choice here,
so a new agent is one ``register`` call away from all of them::

    from agents.registry import register, register_loader

    register("greedy", GreedyAgent)  # a factory: (seed) -> Agent
    register("ppo", "agents.torch_agent:load_shipped")  # imported on first use
    register_loader(".pt", "agents.torch_agent:TorchAgent.load")  # (path, seed) -> Agent

A spec is a registered name, or else a path that a registered loader
accepts (by file-name suffix, or by a predicate on the path). Factories and
loaders given as ``"module:attribute"`` strings are imported only when used,
so heavy dependencies (torch) stay out of ``import agents``. Built in:
``random`` (``RandomAgent``) and ``heuristic`` (``HeuristicAgent``).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sichuan_env.tiles import InputTypeError, echo

from .base import Agent, check_seed

Factory = Callable[[int | None], Agent]
"""Makes an agent from a seed (None: the agent's default)."""
Loader = Callable[[Path, int | None], Agent]
"""Makes an agent from a checkpoint path and a seed."""
Match = str | Callable[[Path], bool]
"""A file-name suffix (``".pt"``) or a predicate on the path."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_FACTORIES: dict[str, Factory | str] = {}
_LOADERS: list[tuple[Match, Loader | str]] = []


def _resolve_ref(ref: Any, what: str) -> Callable[..., Any]:
    """A callable, or the object a ``"module:attr.attr"`` string names (imported now)."""
    obj = ref if callable(ref) else _import_ref(ref)
    if not callable(obj):
        raise TypeError(f"{what} {echo(ref)} is not callable")
    return obj


@functools.lru_cache(maxsize=64)
def _import_ref(ref: str) -> Any:
    module, _, attrs = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def _check_ref(ref: object, arg: str) -> None:
    if callable(ref):
        return
    if not isinstance(ref, str) or not re.fullmatch(r"[\w.]+:[\w.]+", ref):
        raise ValueError(
            f"{arg} must be a callable or a 'module:attribute' string, got {echo(ref)}"
        )


def register(name: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Make ``name`` resolve to ``factory(seed)``.

    Args:
        name: letters, digits, ``_`` and ``-``, starting with a letter (so it can
            never be mistaken for a path).
        factory: ``(seed) -> Agent``, or a ``"module:attribute"`` string naming one.
        replace: allow replacing an existing registration.

    Raises:
        ValueError: for a bad name or factory, or a name already registered.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            "an agent name is letters, digits, '_' and '-' starting with a letter, "
            f"got {echo(name)}"
        )
    _check_ref(factory, "factory")
    if name in _FACTORIES and not replace:
        raise ValueError(f"agent {name!r} is already registered (pass replace=True)")
    _FACTORIES[name] = factory


def register_loader(match: Match, loader: Loader | str) -> None:
    """Make paths that ``match`` load with ``loader(path, seed)``.

    Args:
        match: a file-name suffix such as ``".pt"``, or a predicate ``(Path) -> bool``.
        loader: ``(path, seed) -> Agent``, or a ``"module:attribute"`` string naming one.

    Raises:
        ValueError: for a bad suffix or loader.
    """
    if isinstance(match, str):
        if not match.startswith(".") or len(match) < 2 or os.sep in match:
            raise ValueError(f"a loader suffix starts with '.', such as '.pt', got {echo(match)}")
    elif not callable(match):
        raise ValueError(f"match must be a suffix or a predicate, got {echo(match)}")
    _check_ref(loader, "loader")
    _LOADERS.append((match, loader))


def available() -> list[str]:
    """The registered agent names, sorted."""
    return sorted(_FACTORIES)


def loaders() -> list[str]:
    """What the registered checkpoint loaders accept (suffixes, or the predicates' names)."""
    return [m if isinstance(m, str) else getattr(m, "__name__", repr(m)) for m, _ in _LOADERS]


def describe() -> str:
    """One line naming what ``make_agent`` accepts, for error and help texts."""
    kinds = loaders()
    paths = f"a checkpoint path ({', '.join(kinds)})" if kinds else "no checkpoint loader"
    return f"registered names: {', '.join(available())}; {paths}"


def _loader_for(path: Path) -> Loader | str | None:
    for match, loader in _LOADERS:
        if path.name.endswith(match) if isinstance(match, str) else match(path):
            return loader
    return None


def make_agent(spec: str | os.PathLike, seed: int | None = None) -> Agent:
    """The agent a lineup entry names: a registered name, or a checkpoint path.

    Args:
        spec: a name from ``available()``, or the path of a checkpoint that a
            registered loader accepts.
        seed: passed to the factory or loader (reproducible random choices).

    Returns:
        An object satisfying the ``Agent`` protocol.

    Raises:
        ValueError: for an unknown name, a path no loader accepts, a missing or
            unreadable checkpoint file, or a bad seed (the message lists the registered names).
        TypeError: when a factory or loader returns something that is not an Agent.
    """
    seed = check_seed(seed)
    if isinstance(spec, str) and spec in _FACTORIES:
        agent = _resolve_ref(_FACTORIES[spec], "factory")(seed)
        what = f"factory of {spec!r}"
    elif isinstance(spec, (str, os.PathLike)):
        if isinstance(spec, str) and not spec.strip():
            raise ValueError(f"an agent spec must not be empty; {describe()}")
        path = Path(spec)
        loader = _loader_for(path)
        if loader is None:
            raise ValueError(f"unknown agent {echo(str(spec))}; {describe()}")
        if not path.is_file():
            raise ValueError(f"checkpoint {echo(str(spec))} is not a file; {describe()}")
        try:
            agent = _resolve_ref(loader, "loader")(path, seed)
        except OSError as exc:  # an unreadable checkpoint is bad input, not a crash
            raise ValueError(f"cannot read checkpoint {echo(str(spec))}: {exc}") from exc
        what = f"loader of {echo(str(spec))}"
    else:
        raise InputTypeError(
            f"an agent spec is a name or a path, got {type(spec).__name__}; {describe()}"
        )
    if not isinstance(agent, Agent):
        raise TypeError(f"the {what} returned {type(agent).__name__}, not an Agent")
    return agent


register("random", "agents.random_agent:RandomAgent")
register("heuristic", "agents.heuristic:HeuristicAgent")
register("value", "agents.population:ValueAgent")
register("defensive", "agents.population:DefensiveAgent")
register("search", "agents.search_agent:SearchAgent")
import agents.checkpoints  # noqa: F401  (registers bc, ppo and the .pt loader, lazily)
