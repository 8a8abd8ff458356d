"""The README works as written: every Python snippet runs on its own, the Quickstart is two
commands, and CI runs the README's test command."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = 'pip install -e ".[dev,scale]" && python -m pytest'


def blocks(text: str, lang: str) -> list[str]:
    """The fenced code blocks of ``text`` in language ``lang``, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


PYTHON = blocks(README, "python")


@pytest.mark.parametrize("k", range(len(PYTHON)), ids=[f"snippet{k}" for k in range(len(PYTHON))])
def test_every_python_snippet_runs_on_its_own(k, tmp_path):
    if 'make_agent("distill"' in PYTHON[k] or "import torch" in PYTHON[k]:
        pytest.importorskip("torch")
    proc = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", PYTHON[k]],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, f"README snippet {k} failed:\n{PYTHON[k]}\n{proc.stderr[-3000:]}"


def test_there_are_snippets_to_run():
    assert len(PYTHON) >= 4


def test_the_quickstart_is_two_commands_near_the_top():
    assert README.index("\n## Quickstart\n") < README.index("\n## Install\n")
    (block,) = blocks(section(README, "Quickstart"), "bash")
    first, second = block.strip().splitlines()  # exactly two commands
    assert first.startswith('pip install -e ".[train]" && sichuan-eval ')
    assert "--lineup distill heuristic heuristic heuristic" in first
    assert second == TEST_COMMAND


def test_the_quickstart_match_runs(tmp_path):
    pytest.importorskip("torch")
    (block,) = blocks(section(README, "Quickstart"), "bash")
    match = block.splitlines()[0].split(" && ", 1)[1]
    argv = shlex.split(match)
    assert argv[0] == "sichuan-eval"
    proc = subprocess.run(
        [sys.executable, "-m", "sichuan_env.agents.eval", *argv[1:], "--quiet"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "duplicate match: 200 walls" in proc.stdout and "distill" in proc.stdout


def test_ci_runs_the_readme_test_command():
    (block, *_) = blocks(section(README, "Tests"), "bash")
    assert block.strip() == TEST_COMMAND  # the README's test command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert any(line.strip().startswith(TEST_COMMAND) for line in ci.splitlines()), (
        ".ci/run must run the README's test command"
    )
    guide = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert TEST_COMMAND in guide


def test_readme_and_getting_started_describe_ci_the_same_way():
    def described(text: str) -> str:
        at = text.index("`.ci/run` (CI)")
        return " ".join(text[at : text.index(".", text.index("strict docs build", at)) + 1].split())

    guide = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert described(README) == described(guide)


def test_ci_builds_in_fresh_venvs_without_the_banner():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv --clear .ci-venv" in ci and "python3 -m venv --clear .ci-rllib" in ci
    assert "export NO_MKDOCS_2_WARNING=1" in ci
