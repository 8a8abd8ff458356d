"""Imports go one way: tiles -> kernels -> hand -> rules -> engine -> encoding -> env."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "sichuan_env"
ORDER = ["_jit", "tiles", "kernels", "hand", "rules", "engine", "encoding", "envs"]


def _layer(module: str) -> int | None:
    head = module.split(".")[0]
    return ORDER.index(head) if head in ORDER else None


def _imports(path: Path) -> list[str]:
    rel = path.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = parts[: len(parts) - node.level]
            target = ".".join(base + ([node.module] if node.module else []))
            out.append(target)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("sichuan_env.")
        ):
            out.append(node.module.removeprefix("sichuan_env."))
    return out


def test_no_upward_imports():
    bad = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG)
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue  # the package root re-exports the public API
        mine = _layer(".".join(rel.with_suffix("").parts))
        if mine is None:
            continue
        for target in _imports(path):
            theirs = _layer(target)
            if theirs is not None and theirs > mine:
                bad.append(f"{rel} imports {target}")
    assert not bad, bad


FACADES = [
    "tiles.py",
    "hand.py",
    "rules/config.py",
    "rules/scoring.py",
    "engine/game.py",
    "envs/pettingzoo.py",
    "envs/render.py",
    "play.py",
    "replay.py",
]


def test_facades_do_not_import_numba():
    # typed Python facades call kernels; numba itself stays in the compute modules
    for rel in FACADES:
        src = (PKG / rel).read_text(encoding="utf-8")
        assert "import numba" not in src, rel
