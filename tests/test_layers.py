"""Imports go one way, and nothing imports in a circle.

Inside the library, ``sichuan_env`` goes tiles -> kernels -> hand -> rules ->
engine -> encoding -> envs; above it sit ``sichuan_env.agents`` (the repo's
``agents/``), then ``sichuan_env.train`` (``train/``); ``benchmarks/`` and
``research/`` sit on top and nothing in the library imports them. Every
module of every package is read (imports inside functions count too; only an
``if TYPE_CHECKING:`` import is exempt), and so are string references:
``importlib.import_module`` names, ``"module:attr"`` specs and entry points.
"""

from __future__ import annotations

import ast
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {  # folder -> module prefix
    "sichuan_env": "sichuan_env",
    "agents": "sichuan_env.agents",
    "train": "sichuan_env.train",
    "benchmarks": "benchmarks",
    "research": "research",
}
CORE = ["_jit", "tiles", "kernels", "hand", "rules", "engine", "encoding", "envs"]
"""The core's layers, lowest first; core modules outside this list are applications."""
TIERS = ["sichuan_env", "sichuan_env.agents", "sichuan_env.train", "benchmarks", "research"]
"""Who may import whom: a module imports only its own tier or lower ones (benchmarks and
research are both top tiers: neither may be imported by the library; research may use
benchmarks' helpers, never the reverse)."""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    prefix = PACKAGES[rel.parts[0]]
    parts = list(rel.with_suffix("").parts[1:])
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([prefix, *parts])


def all_modules() -> dict[str, Path]:
    out = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "tests" in path.relative_to(ROOT).parts:
                continue  # research topics' tests are not modules of the topic
            out[module_name(path)] = path
    return out


MODULES = all_modules()


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _resolve(target: str) -> str | None:
    """The project module ``target`` names (the longest known prefix), or None."""
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in MODULES:
            return name
    return None


REF = re.compile(r"^([A-Za-z_][\w.]*):[\w.]+$")
LOADERS = ("import_module", "find_spec", "__import__")


def imports_of(name: str, strings: bool = True, typing: bool = False) -> set[str]:
    """The project modules ``name`` imports (and, with ``strings``, names in a string).

    With ``typing``, the imports under ``if TYPE_CHECKING:`` count too.

    A string reference (``"module:attr"``, ``import_module("module")``) is a
    dependency for the direction of the layers; it is resolved lazily, so it is
    not an edge of an import circle.
    """
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if typing else _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            # ``from pkg import sub`` imports the submodule; ``from pkg import name``, the package
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        elif not strings:
            continue
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(LOADERS):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                targets = [arg.value]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = REF.match(node.value.strip())
            if m and m.group(1) in MODULES:  # a "module:attribute" spec
                targets = [m.group(1)]
        for t in targets:
            mod = _resolve(t)
            if mod is not None and mod != name:
                found.add(mod)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}
IMPORTS = {name: imports_of(name, strings=False) for name in MODULES}


def tier(name: str) -> int:
    return max(i for i, t in enumerate(TIERS) if name == t or name.startswith(t + "."))


def core_layer(name: str) -> int | None:
    if tier(name) != 0:
        return None
    head = name.split(".")[1] if "." in name else ""
    return CORE.index(head) if head in CORE else None


def test_every_package_is_read():
    tiers = {tier(m) for m in MODULES}
    assert tiers == set(range(len(TIERS))), tiers
    assert len(MODULES) > 100  # every module of every package, not a sample


def test_no_module_imports_a_higher_tier():
    bad = [
        f"{a} -> {b}"
        for a, deps in GRAPH.items()
        for b in deps
        if tier(b) > tier(a) and not (tier(a) == 4 and tier(b) == 3)
    ]
    bad += [
        f"{a} -> {b}" for a, deps in GRAPH.items() for b in deps if tier(a) == 3 and tier(b) == 4
    ]
    assert not bad, bad


def test_core_layers_go_one_way():
    bad = []
    for a, deps in GRAPH.items():
        la = core_layer(a)
        if la is None or a == "sichuan_env":
            continue
        bad += [f"{a} -> {b}" for b in deps if (core_layer(b) or -1) > la]
    assert not bad, bad


def test_no_import_circle():
    # Tarjan-free: a module is on a circle when it reaches itself; report one circle per module
    def reaches(start: str) -> list[str] | None:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in IMPORTS[node]:
                if nxt == start:
                    return [*trail, start]
                # a package's __init__ re-exporting its submodules is not a circle of its own
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
        return None

    circles = []
    for name in MODULES:
        loop = reaches(name)
        if loop is None:
            continue
        # ``pkg`` -> ``pkg.sub`` -> ``pkg``: a submodule importing from its own package's
        # __init__ is how re-exports work only when the __init__ does not import it back
        circles.append(" -> ".join(loop))
    assert not circles, circles


def test_no_two_modules_import_each_other_not_even_for_type_checking():
    # an ``if TYPE_CHECKING:`` import back is still a circle of the design (engine/game.py and
    # engine/records.py were one: records now reads a hand through its ``Hand`` protocol)
    typed = {name: imports_of(name, strings=False, typing=True) for name in MODULES}
    pairs = sorted(
        f"{a} <-> {b}"
        for a, deps in typed.items()
        for b in deps
        if a < b and a in typed.get(b, set()) and not _reexport(a, b)
    )
    assert not pairs, pairs
    assert "sichuan_env.engine.game" not in typed["sichuan_env.engine.records"]


def _reexport(a: str, b: str) -> bool:
    """A package and its own submodule (``pkg/__init__`` re-exporting ``pkg.sub``)."""
    return b.startswith(a + ".") or a.startswith(b + ".")


def test_the_library_never_names_what_sits_above_it_as_text():
    # docstrings may mention the agents in prose; code strings must not name their modules
    pattern = re.compile(r"\b(sichuan_env\.(agents|train)|agents\.\w|train\.\w|research\.\w)")
    bad = []
    for name, path in MODULES.items():
        if tier(name) != 0:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        bad.extend(
            f"{name}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and pattern.search(node.value)
        )
    assert not bad, bad


def test_entry_points_name_modules_of_the_right_tier():
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = doc["project"]
    refs = dict(project["scripts"])
    for group, table in project.get("entry-points", {}).items():
        refs.update({f"{group}:{k}": v for k, v in table.items()})
    assert refs, "pyproject declares no scripts or entry points"
    for what, ref in refs.items():
        module = ref.partition(":")[0]
        assert module in MODULES, f"{what} -> {ref}: not a module of the library"
        assert tier(module) <= 2, f"{what} -> {ref}: benchmarks and research are not installed"


def test_installed_entry_points_match_pyproject():
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for group, table in doc["project"]["entry-points"].items():
        got = {ep.name: ep.value for ep in entry_points(group=group)}
        for name, value in table.items():
            assert got.get(name) == value, f"reinstall: pip install -e . ({group}:{name})"


@pytest.mark.parametrize(
    "source",
    [
        "import sichuan_env.agents.registry\n",
        "from ..agents import registry\n",
        "x = 'sichuan_env.agents.registry:make_agent'\n",
        "import importlib\nimportlib.import_module('sichuan_env.train.common')\n",
        "def f():\n    from sichuan_env.train.common import setup\n",
    ],
)
def test_the_checks_see_each_kind_of_reference(tmp_path, source, monkeypatch):
    # a core module with an upward reference of each kind is caught (the checks are not vacuous)
    fake = ROOT / "sichuan_env" / "envs" / "_layer_probe.py"
    monkeypatch.setitem(MODULES, "sichuan_env.envs._layer_probe", fake)
    original = Path.read_text
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: source if self == fake else original(self, *a, **k)
    )
    deps = imports_of("sichuan_env.envs._layer_probe")
    assert any(tier(d) > 0 for d in deps), deps


FACADES = [
    "tiles.py",
    "hand.py",
    "rules/config.py",
    "rules/scoring.py",
    "engine/game.py",
    "envs/pettingzoo.py",
    "envs/aec_order.py",
    "envs/aec_views.py",
    "envs/render.py",
    "play.py",
    "replay.py",
]


def test_facades_do_not_import_numba():
    # typed Python facades call kernels; numba itself stays in the compute modules
    for rel in FACADES:
        src = (ROOT / "sichuan_env" / rel).read_text(encoding="utf-8")
        assert "import numba" not in src, rel


MAX_MODULE_LINES = 420
"""The most lines a module of the library (sichuan_env, agents, train) may take."""
LONG_MODULES: set[str] = set()
"""Modules exempt from ``MAX_MODULE_LINES`` for now, by repository path (a module being
shrunk by a change in progress; the test below says when an entry is stale)."""
SPLIT = {
    # envs/pettingzoo.py (575 lines) split at its seams: the AEC env's state machine, the
    # order-enforcing wrapper, the reading half (names, infos, other views, rendering)
    "sichuan_env/envs/pettingzoo.py": 400,
    "sichuan_env/envs/aec_order.py": 400,
    "sichuan_env/envs/aec_views.py": 400,
    # agents/gym/env.py and agents/gym/vector.py share one core: agents/gym/core.py
    "agents/gym/core.py": 400,
}
"""Modules split along their seams, with the most lines each may grow back to."""


def test_library_modules_are_small():
    # a module over the bound is split along a seam (checks vs I/O, kernels vs facade, CLI vs
    # reading), never exempted silently
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for name, path in MODULES.items()
        if tier(name) <= TIERS.index("sichuan_env.train")
    }
    over = sorted(
        f"{p} ({n} lines)"
        for p, n in sizes.items()
        if n > MAX_MODULE_LINES and p not in LONG_MODULES
    )
    assert not over, f"library modules over {MAX_MODULE_LINES} lines: {over}"
    stale = sorted(p for p in LONG_MODULES if sizes.get(p, 0) <= MAX_MODULE_LINES)
    assert not stale, (
        f"no longer over {MAX_MODULE_LINES} lines (or gone): remove from LONG_MODULES {stale}"
    )


@pytest.mark.parametrize("rel", sorted(SPLIT))
def test_split_modules_stay_split(rel):
    path = ROOT / rel
    assert path.is_file(), f"{rel} is gone: update SPLIT"
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= SPLIT[rel], f"{rel} has {n} lines, more than {SPLIT[rel]}: split it again"


def test_the_split_aec_env_keeps_its_public_names():
    # the split moved code, not names: what callers import from envs/pettingzoo still resolves
    from sichuan_env.envs import pettingzoo as pz

    names = ("AGENTS", "ILLEGAL_ACTION_MODES", "RENDER_MODES", "IllegalActionError",
             "LegalActions", "OrderEnforcing", "env", "raw_env")  # fmt: skip
    assert all(hasattr(pz, n) for n in names)
    assert isinstance(pz.env(), pz.OrderEnforcing)


def _statement_runs(path: Path, k: int) -> set[tuple[str, ...]]:
    """Every run of ``k`` consecutive statements of a function body (docstrings left out)."""
    runs: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [
                ast.unparse(st)
                for st in node.body
                if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))
            ]
            runs.update(tuple(body[i : i + k]) for i in range(len(body) - k + 1))
    return runs


def test_the_gym_envs_share_one_core_and_repeat_no_code():
    # SingleSeatEnv and its batched twin keep their settings, spaces, seats and frames in
    # agents/gym/core.py; no run of 3 statements stands in both (their signatures may)
    from sichuan_env.agents.gym.core import SeatEnvCore
    from sichuan_env.agents.gym.env import SingleSeatEnv
    from sichuan_env.agents.gym.vector import SingleSeatVectorEnv

    assert issubclass(SingleSeatEnv, SeatEnvCore) and issubclass(SingleSeatVectorEnv, SeatEnvCore)
    both = _statement_runs(ROOT / "agents/gym/env.py", 3) & _statement_runs(
        ROOT / "agents/gym/vector.py", 3
    )
    assert not both, sorted(both)[:3]
