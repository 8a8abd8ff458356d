"""Every docstring of the API reference parses: griffe, which renders it, warns about none.

``mkdocs build --strict`` aborts on the first docstring griffe cannot read (several
names in one ``Args:`` entry, an entry without ``name: description``); this test finds
them all in the fast tier, without building the site.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")  # griffelib: the dev extra (and mkdocstrings) install it

ROOT = Path(__file__).resolve().parents[1]


def _load_package_dir() -> type:
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from package_dir import PackageDir
    finally:
        sys.path.pop(0)
    return PackageDir


@contextmanager
def griffe_log() -> Iterator[list[str]]:
    """The warnings griffe logs inside the block."""
    found: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    log = logging.getLogger("griffe")
    handler, level = Collect(level=logging.WARNING), log.level
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    try:
        yield found
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def griffe_warnings() -> list[str]:
    """The warnings griffe logs while loading sichuan_env (agents/ and train/ grafted, as
    mkdocs.yml does) and parsing every docstring in the google style."""
    with griffe_log() as found:
        loader = griffe.GriffeLoader(
            extensions=griffe.load_extensions(_load_package_dir()()),
            search_paths=[str(ROOT)],
            docstring_parser="google",
        )
        seen: set[int] = set()
        todo = [loader.load("sichuan_env")]
        while todo:
            obj = todo.pop()
            if obj.is_alias or id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.parse("google")
            todo.extend(m for m in obj.members.values() if not m.is_alias)
    assert len(seen) > 500, f"griffe found only {len(seen)} objects: the loader saw too little"
    return found


def test_griffe_reads_every_docstring():
    problems = griffe_warnings()
    assert not problems, "docstrings griffe cannot read (one name per Args entry):\n" + "\n".join(
        problems
    )


def test_the_check_catches_several_names_in_one_entry(tmp_path):
    bad = tmp_path / "badpkg"
    bad.mkdir()
    (bad / "__init__.py").write_text(
        'def f(a: int, b: int) -> None:\n    """F.\n\n    Args:\n'
        '        a, b: two names in one entry.\n    """\n'
    )
    with griffe_log() as found:
        mod = griffe.load("badpkg", search_paths=[str(tmp_path)], docstring_parser="google")
        mod["f"].docstring.parse("google")
    assert any("'a, b'" in m for m in found), found


def test_the_docs_tools_are_bounded_to_proven_ranges():
    import tomllib
    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    docs = {Requirement(r).name: Requirement(r) for r in extras["optional-dependencies"]["docs"]}
    for name, first_unproven in [
        ("mkdocs", "2"), ("mkdocs-material", "10"), ("mkdocstrings", "2"),
        ("mkdocstrings-python", "3"), ("griffelib", "3"),
    ]:  # fmt: skip
        assert name in docs, f"the docs extra does not list {name}"
        assert not docs[name].specifier.contains(first_unproven), f"{name} allows {first_unproven}"
