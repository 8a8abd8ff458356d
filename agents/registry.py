"""Agents by name or by checkpoint path: ``make_agent("heuristic")``, ``make_agent("run/best.pt")``.

Every place that lets a user pick an agent (``sichuan_env.agents.eval.evaluate --lineup``,
``sichuan_env.play --opponents``, the benchmarks) resolves the choice here,
so a new agent is one ``register`` call away from all of them::

    from sichuan_env.agents.registry import register, register_loader

    register("greedy", GreedyAgent)  # a factory: (seed) -> Agent
    register("ppo", "sichuan_env.agents.nn.torch_agent:load_shipped")  # imported on first use
    register_loader(".pt", "sichuan_env.agents.nn.torch_agent:TorchAgent.load")  # (path, seed) -> Agent

A spec is a registered name, a ``"package.module:Class"`` (or ``:factory``)
reference to any importable agent class or ``(seed) -> Agent`` factory (a
module importable from nowhere else is looked for in the current folder, as
``python -m`` would, so console tools find ``./mybelief.py`` without
``PYTHONPATH=.``), or else a path that a registered loader accepts (by
file-name suffix, or by a predicate on the path). An unknown name is refused
with the closest registered ones, a folder with the checkpoints it holds
(``sichuan_env.agents.registry_refs`` reads the strings). Installed packages
can add names through the entry point group ``sichuan_env.agents`` (``name =
"package.module:Class"``); they resolve like registered names, so every CLI
(``sichuan-eval --lineup``, ``sichuan-play --opponents``, ``sichuan-viewer
--agent``) sees them. Factories and loaders given as ``"module:attribute"``
strings are imported only when used, so heavy dependencies (torch) stay out of
``import agents``. Built in:
``random`` (``RandomAgent``) and ``heuristic`` (``HeuristicAgent``).

What a string names is checked before it is called: a class with ``act`` and
``act_batch``, or a Python function or method annotated to return an agent
class or ``Agent`` (``def make(seed: int | None) -> MyAgent``); anything else
(``sys:exit``, a builtin, an unannotated function) is refused. Any exception
while importing a plugin or building an agent becomes a ``ValueError`` whose
one line names the spec, so every CLI reports it as one line.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from sichuan_env.agents.base import Agent, check_seed
from sichuan_env.agents.registry_refs import (
    check_ref,
    did_you_mean,
    folder_problem,
    resolve_ref,
    why,
)

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
_ALIASES: dict[str, str] = {}
_LOADERS: list[tuple[Match, Loader | str]] = []


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
    check_ref(factory, "factory")
    if name in _FACTORIES and not replace:
        raise ValueError(f"agent {name!r} is already registered (pass replace=True)")
    _FACTORIES[name] = factory


def register_alias(name: str, target: str, *, replace: bool = False) -> None:
    """Make ``name`` another name of the registered agent ``target`` (``strongest``).

    An alias resolves to its target wherever a name is accepted, so a lineup that
    names ``strongest`` follows the alias when a better agent replaces its target.

    Raises:
        ValueError: for a bad name, a name already taken (pass ``replace``), or a target
            that is not a registered name (an alias of an alias included).
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"an alias is an agent name, got {echo(name)}")
    if not isinstance(target, str) or target not in _FACTORIES:
        raise ValueError(f"an alias names a registered agent, got {echo(target)}")
    if (name in _FACTORIES or name in _ALIASES) and not replace:
        raise ValueError(f"agent {name!r} is already registered (pass replace=True)")
    _ALIASES[name] = target


def aliases() -> dict[str, str]:
    """``{alias: the registered name it stands for}``."""
    return dict(_ALIASES)


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
    check_ref(loader, "loader")
    _LOADERS.append((match, loader))


@functools.lru_cache(maxsize=1)
def _load_entry_points() -> None:
    """Register the agents of the ``sichuan_env.agents`` entry points (once, lazily)."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _FACTORIES and _NAME.fullmatch(ep.name) and _REF.fullmatch(ep.value):
            _FACTORIES[ep.name] = ep.value


def available(include_aliases: bool = True) -> list[str]:
    """The registered agent names, and aliases unless told not to (entry points included), sorted."""
    _load_entry_points()
    return sorted({*_FACTORIES, *(_ALIASES if include_aliases else ())})


def _call_factory(factory: Callable[..., Any], seed: int | None, spec: str) -> Any:
    """``factory(seed)``, or ``factory()`` for a class or callable that takes no argument.

    Raises:
        ValueError: any exception the factory raises, as one line naming ``spec``.
    """
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: try the seed
        params = None
    takes = params is None or any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )
    try:
        return factory(seed) if takes else factory()
    except ValueError as exc:  # already a clear message (a damaged checkpoint, a bad seed)
        raise ValueError(f"cannot build agent {spec!r}: {exc}") from exc
    except Exception as exc:
        raise ValueError(f"cannot build agent {spec!r}: {why(exc)}") from exc


def _from_reference(spec: str, seed: int | None) -> Any:
    """The agent a ``"package.module:Class"`` spec makes (imported and checked now)."""
    return _call_factory(resolve_ref(spec, "factory", spec), seed, spec)


def loaders() -> list[str]:
    """What the registered checkpoint loaders accept (suffixes, or the predicates' names)."""
    return [m if isinstance(m, str) else getattr(m, "__name__", repr(m)) for m, _ in _LOADERS]


def describe() -> str:
    """One line naming what ``make_agent`` accepts, for error and help texts."""
    kinds = loaders()
    paths = f"a checkpoint path ({', '.join(kinds)})" if kinds else "no checkpoint loader"
    names = [f"{n} (= {_ALIASES[n]})" if n in _ALIASES else n for n in available()]
    return f"registered names: {', '.join(names)}; {paths}; or 'package.module:Class'"


def _loader_for(path: Path) -> Loader | str | None:
    for match, loader in _LOADERS:
        if path.name.endswith(match) if isinstance(match, str) else match(path):
            return loader
    return None


def make_agent(spec: str | os.PathLike, seed: int | None = None, *, device: Any = None) -> Agent:
    """The agent a lineup entry names: a registered name, or a checkpoint path.

    Args:
        spec: a name from ``available()``, or the path of a checkpoint that a
            registered loader accepts.
        seed: passed to the factory or loader (reproducible random choices).
        device: where an agent that runs a network runs it (``"auto"``, ``"cpu"``,
            ``"cuda[:N]"``, ``"mps"`` or a ``torch.device``; ``sichuan_env.agents.device``):
            the agent's ``to(device)`` is called; an agent without ``to`` (the rule-based
            ones) runs no network and ignores it. None: the agent's own default (the CPU).

    Returns:
        An object satisfying the ``Agent`` protocol.

    Raises:
        ValueError: for an unknown name, a path no loader accepts, a missing or
            unreadable checkpoint file, or a bad seed (the message lists the registered
            names); a ``"module:attr"`` that is not an agent class or factory (checked
            before it is called: ``sys:exit`` is refused); and any exception raised while
            importing a plugin or building the agent (one line naming the spec).
        TypeError: when a factory or loader returns something that is not an Agent
            (an ``InputTypeError``: a ``ValueError`` too).
        DeviceError: a device this machine does not have (a ``ValueError``), checked
            before anything is built.
    """
    seed = check_seed(seed)
    if isinstance(spec, str) and spec in _ALIASES:
        spec = _ALIASES[spec]
    if device is not None:  # torch is imported only when a device is asked for
        from sichuan_env.agents.device import resolve_device

        device = resolve_device(device)
    if isinstance(spec, str) and spec not in _FACTORIES:
        _load_entry_points()
    if isinstance(spec, str) and spec in _FACTORIES:
        agent = _call_factory(resolve_ref(_FACTORIES[spec], "factory", spec), seed, spec)
        what = f"factory of {spec!r}"
    elif isinstance(spec, str) and _REF.fullmatch(spec):
        agent = _from_reference(spec, seed)
        what = f"class or factory {spec!r}"
    elif isinstance(spec, (str, os.PathLike)):
        if isinstance(spec, str) and not spec.strip():
            raise ValueError(f"an agent spec must not be empty; {describe()}")
        path = Path(spec)
        if problem := folder_problem(path):
            raise ValueError(problem)
        loader = _loader_for(path)
        if loader is None:
            raise ValueError(
                f"unknown agent {echo(str(spec))}{did_you_mean(spec, available())}; {describe()}"
            )
        if not path.is_file():
            raise ValueError(f"checkpoint {echo(str(spec))} is not a file; {describe()}")
        load = resolve_ref(loader, "loader", str(spec))
        try:
            agent = load(path, seed)
        except OSError as exc:  # an unreadable checkpoint is bad input, not a crash
            raise ValueError(f"cannot read checkpoint {echo(str(spec))}: {exc}") from exc
        except ValueError:
            raise
        except Exception as exc:
            raise ValueError(f"cannot load checkpoint {echo(str(spec))}: {why(exc)}") from exc
        what = f"loader of {echo(str(spec))}"
    else:
        raise InputTypeError(
            f"an agent spec is a name or a path, got {type(spec).__name__}; {describe()}"
        )
    if not isinstance(agent, Agent):
        raise InputTypeError(f"the {what} returned {type(agent).__name__}, not an Agent")
    to = getattr(agent, "to", None)  # agents that run a network: TorchAgent, the belief agents
    if device is not None and callable(to):
        to(device)
    return agent


register("random", "sichuan_env.agents.rule_based.random_agent:RandomAgent")
register("heuristic", "sichuan_env.agents.rule_based.heuristic:HeuristicAgent")
register("value", "sichuan_env.agents.rule_based.population:ValueAgent")
register("defensive", "sichuan_env.agents.rule_based.population:DefensiveAgent")
register("search", "sichuan_env.agents.search.agent:SearchAgent")
register("search-claims", "sichuan_env.agents.search.agent:search_claims")
register("search-setup", "sichuan_env.agents.search.agent:search_setup")
register("search-belief", "sichuan_env.agents.search.belief_agent:search_belief")
register("distill-search-after-win", "sichuan_env.agents.search.hybrid:distill_search_after_win")
register(
    "distill-search64-after-win", "sichuan_env.agents.search.hybrid:distill_search64_after_win"
)
register(
    "ensemble6-guard-search64-after-win",
    "sichuan_env.agents.search.hybrid:ensemble6_guard_search64_after_win",
)
register(
    "distill-search128-selfaux-after-win",
    "sichuan_env.agents.search.hybrid:distill_search128_selfaux_after_win",
)
register(
    "distill-search128-z1_5-after-win",
    "sichuan_env.agents.search.hybrid:distill_search128_z15_after_win",
)
register("distill-valueleaf8", "sichuan_env.agents.search.value_leaf:distill_valueleaf")
register(
    "distill-valueleaf8-after-win",
    "sichuan_env.agents.search.value_leaf:distill_valueleaf_after_win",
)
# the shipped checkpoints (agents/checkpoints/ holds data only); strings: torch stays unimported
register("bc", "sichuan_env.agents.nn.torch_agent:load_bc")
register("ppo", "sichuan_env.agents.nn.torch_agent:load_ppo")
register("distill", "sichuan_env.agents.nn.torch_agent:load_distill")
register("distill-sample", "sichuan_env.agents.nn.torch_agent:load_distill_sample")
register("exit", "sichuan_env.agents.nn.torch_agent:load_exit")
register("distill-guard", "sichuan_env.agents.belief.guard:load_distill_guard")
register("exit-valueleaf", "sichuan_env.agents.nn.torch_agent:load_exit_valueleaf")
register("exit-valueleaf-guard", "sichuan_env.agents.belief.guard:load_exit_valueleaf_guard")
register("ensemble6", "sichuan_env.agents.nn.ensemble:load_ensemble6")
register("ensemble6-guard", "sichuan_env.agents.belief.guard:load_ensemble6_guard")
register_loader(".pt", "sichuan_env.agents.nn.torch_agent:load_checkpoint")
# the aliases users rely on, each pointing at a registered agent confirmed on fresh walls
# (docs/agents.md, "strongest and strongest-net")
register_alias("strongest-net", "ensemble6-guard")
register_alias("strongest", "ensemble6-guard-search64-after-win")
