"""Agents by name or by checkpoint path: ``make_agent("heuristic")``, ``make_agent("run/best.pt")``.

Every place that lets a user pick an agent (``sichuan_env.agents.eval.evaluate --lineup``,
``sichuan_env.play --opponents``, the benchmarks) resolves the choice here,
so a new agent is one ``register`` call away from all of them::

    from sichuan_env.agents.registry import register, register_loader

    register("greedy", GreedyAgent)  # a factory: (seed) -> Agent
    register("ppo", "sichuan_env.agents.nn.torch_agent:load_shipped")  # imported on first use
    register_loader(".pt", "sichuan_env.agents.nn.torch_agent:TorchAgent.load")  # (path, seed) -> Agent

A spec is a registered name, a ``"package.module:Class"`` (or ``:factory``)
reference to any importable agent class or ``(seed) -> Agent`` factory, or
else a path that a registered loader accepts (by file-name suffix, or by a
predicate on the path). Installed packages can add names through the entry
point group ``sichuan_env.agents`` (``name = "package.module:Class"``); they
resolve like registered names, so every CLI (``sichuan-eval --lineup``,
``sichuan-play --opponents``, ``sichuan-viewer --agent``) sees them. Factories and
loaders given as ``"module:attribute"`` strings are imported only when used,
so heavy dependencies (torch) stay out of ``import agents``. Built in:
``random`` (``RandomAgent``) and ``heuristic`` (``HeuristicAgent``).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from sichuan_env.agents.base import Agent, check_seed

from sichuan_env.tiles import InputTypeError, echo

Factory = Callable[[int | None], Agent]
"""Makes an agent from a seed (None: the agent's default)."""
Loader = Callable[[Path, int | None], Agent]
"""Makes an agent from a checkpoint path and a seed."""
Match = str | Callable[[Path], bool]
"""A file-name suffix (``".pt"``) or a predicate on the path."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
ENTRY_POINT_GROUP = "sichuan_env.agents"
"""Installed packages name their agents here: ``name = "package.module:Class"``."""
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


@functools.lru_cache(maxsize=1)
def _load_entry_points() -> None:
    """Register the agents of the ``sichuan_env.agents`` entry points (once, lazily)."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _FACTORIES and _NAME.fullmatch(ep.name) and _REF.fullmatch(ep.value):
            _FACTORIES[ep.name] = ep.value


def available() -> list[str]:
    """The registered agent names (entry-point agents included), sorted."""
    _load_entry_points()
    return sorted(_FACTORIES)


def _call_factory(factory: Callable[..., Any], seed: int | None) -> Any:
    """``factory(seed)``, or ``factory()`` for a class or callable that takes no argument."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: try the seed
        return factory(seed)
    takes = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return factory(seed) if takes else factory()


def _from_reference(spec: str, seed: int | None) -> Any:
    """The agent a ``"package.module:Class"`` spec makes (imported now)."""
    try:
        factory = _import_ref(spec)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import agent {spec!r}: {exc}") from None
    if not callable(factory):
        raise ValueError(f"agent {spec!r} is not a class or factory")
    return _call_factory(factory, seed)


def loaders() -> list[str]:
    """What the registered checkpoint loaders accept (suffixes, or the predicates' names)."""
    return [m if isinstance(m, str) else getattr(m, "__name__", repr(m)) for m, _ in _LOADERS]


def describe() -> str:
    """One line naming what ``make_agent`` accepts, for error and help texts."""
    kinds = loaders()
    paths = f"a checkpoint path ({', '.join(kinds)})" if kinds else "no checkpoint loader"
    return f"registered names: {', '.join(available())}; {paths}; or 'package.module:Class'"


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
    if isinstance(spec, str) and spec not in _FACTORIES:
        _load_entry_points()
    if isinstance(spec, str) and spec in _FACTORIES:
        agent = _call_factory(_resolve_ref(_FACTORIES[spec], "factory"), seed)
        what = f"factory of {spec!r}"
    elif isinstance(spec, str) and _REF.fullmatch(spec):
        agent = _from_reference(spec, seed)
        what = f"class or factory {spec!r}"
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


register("random", "sichuan_env.agents.rule_based.random_agent:RandomAgent")
register("heuristic", "sichuan_env.agents.rule_based.heuristic:HeuristicAgent")
register("value", "sichuan_env.agents.rule_based.population:ValueAgent")
register("defensive", "sichuan_env.agents.rule_based.population:DefensiveAgent")
register("search", "sichuan_env.agents.search.agent:SearchAgent")
register("search-claims", "sichuan_env.agents.search.agent:search_claims")
register("search-setup", "sichuan_env.agents.search.agent:search_setup")
register("search-belief", "sichuan_env.agents.search.belief_agent:search_belief")
# the shipped checkpoints (agents/checkpoints/ holds data only); strings: torch stays unimported
register("bc", "sichuan_env.agents.nn.torch_agent:load_bc")
register("ppo", "sichuan_env.agents.nn.torch_agent:load_ppo")
register("distill", "sichuan_env.agents.nn.torch_agent:load_distill")
register("exit", "sichuan_env.agents.nn.torch_agent:load_exit")
register("distill-guard", "sichuan_env.agents.belief.guard:load_distill_guard")
register_loader(".pt", "sichuan_env.agents.nn.torch_agent:load_checkpoint")
