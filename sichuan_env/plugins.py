"""What sits above the library, reached through package entry points, never by name.

``sichuan_env`` (tiles → kernels → hand → rules → engine → encoding → envs)
imports nothing from the agents and training packages above it. The few places
where the library needs them take objects, or find them through entry points
that an installed distribution declares (this project's own in ``pyproject.toml``):

- ``sichuan_env.gym``: Gymnasium ids and their env factories, registered by
  ``import sichuan_env`` (``gymnasium.make("SichuanMahjong-v0")``); the group
  ``sichuan_env.gym_vector`` gives the same ids' vector entry points
  (``gymnasium.make_vec``);
- PettingZoo's registry (1.27 and newer) gets the AEC env as
  ``SichuanMahjong-v0`` on ``import sichuan_env``
  (``pettingzoo.make("aec", "SichuanMahjong-v0")``; ``register_pettingzoo``);
- ``sichuan_env.resolvers``: ``agent`` is the callable ``(spec, seed) -> agent``
  that turns the names a user types (``--opponents heuristic``) into agent
  objects, for terminal play and the viewer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

GYM_GROUP = "sichuan_env.gym"
GYM_VECTOR_GROUP = "sichuan_env.gym_vector"
RESOLVER_GROUP = "sichuan_env.resolvers"


def register_gymnasium() -> list[str]:
    """Register every Gymnasium id of the ``sichuan_env.gym`` entry points (once).

    Returns:
        The ids registered by this call (empty when all were registered already).
    """
    import gymnasium

    vector = {ep.name: ep.value for ep in entry_points(group=GYM_VECTOR_GROUP)}
    done = []
    for ep in entry_points(group=GYM_GROUP):
        if ep.name in gymnasium.registry:
            continue
        gymnasium.register(id=ep.name, entry_point=ep.value, vector_entry_point=vector.get(ep.name))
        done.append(ep.name)
    return done


PETTINGZOO_ID = "SichuanMahjong-v0"
"""The AEC env's id in PettingZoo's registry (``pettingzoo.make("aec", PETTINGZOO_ID)``)."""


def register_pettingzoo() -> list[str]:
    """Register the AEC env in PettingZoo's registry (PettingZoo 1.27 and newer), once.

    ``pettingzoo.make("aec", "SichuanMahjong-v0", **kwargs)`` then builds what
    ``sichuan_env.env(**kwargs)`` builds. An older PettingZoo has no registry:
    nothing is registered, and ``sichuan_env.env()`` works as before.

    Returns:
        The ids registered by this call (empty when registered already, or no registry).
    """
    import pettingzoo

    register = getattr(pettingzoo, "register", None)
    registry = getattr(pettingzoo, "aec_registry", None)
    if not callable(register) or not isinstance(registry, dict) or PETTINGZOO_ID in registry:
        return []
    register("aec", PETTINGZOO_ID, entry_point="sichuan_env:env")
    return [PETTINGZOO_ID]


@functools.lru_cache(maxsize=1)
def agent_resolver() -> Callable[[str, int | None], Any]:
    """The installed ``(spec, seed) -> agent`` resolver (entry point ``sichuan_env.resolvers``).

    Raises:
        ValueError: when no installed distribution declares one (a bare source
            tree that was never ``pip install``-ed), or when loading it raises anything
            (a broken plugin: one line naming the entry point), or it is not callable.
    """
    found = [ep for ep in entry_points(group=RESOLVER_GROUP) if ep.name == "agent"]
    if not found:
        raise ValueError(
            "no agent resolver is installed (entry point group "
            f"{RESOLVER_GROUP!r}, name 'agent'): pip install sichuan-env"
        )
    try:
        resolver = found[0].load()
    except Exception as exc:  # noqa: BLE001  (a plugin's import may raise anything)
        text = " ".join(str(exc).split())[:300]
        raise ValueError(
            f"cannot load the agent resolver {found[0].value!r} (entry point group "
            f"{RESOLVER_GROUP!r}): {type(exc).__name__}: {text}"
        ) from None
    if not callable(resolver):
        raise ValueError(f"the agent resolver {found[0].value!r} is not callable")
    return resolver
