"""Griffe extension: graft ``agents/`` and ``train/`` into ``sichuan_env`` for the API reference.

``pyproject.toml`` installs the top-level folders ``agents/`` and ``train/`` as
``sichuan_env.agents`` and ``sichuan_env.train`` (setuptools ``package-dir``).
Griffe reads sources statically and does not follow that mapping, so without
this extension ``::: sichuan_env.agents.registry`` would not resolve. Loaded by
``mkdocs.yml`` (mkdocstrings ``extensions``); nothing is imported.
"""

from __future__ import annotations

from typing import Any

import griffe

GRAFTS = {"agents": "agents", "train": "train"}  # member of sichuan_env -> folder at the repo root


class PackageDir(griffe.Extension):
    """After ``sichuan_env`` is loaded, load each folder and attach it as a subpackage."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Graft the folders onto ``sichuan_env`` once it is loaded."""
        if pkg.name != "sichuan_env":
            return
        for member, folder in GRAFTS.items():
            if member in pkg.members:
                continue
            sub = loader.load(folder, try_relative_path=False)
            pkg.set_member(member, sub)
