"""Checkpoints record the project's own commit: git runs where the package is, not in the cwd."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("torch")
from sichuan_env.train import common

ROOT = Path(__file__).resolve().parents[1]
needs_git = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="a git checkout"
)


@needs_git
def test_the_commit_is_the_checkouts_wherever_the_run_starts(tmp_path, monkeypatch):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    monkeypatch.chdir(tmp_path)  # not a repository: the old git_commit() said "unknown"
    assert common.git_commit().removesuffix("-dirty") == head


@needs_git
def test_a_users_own_repository_is_not_recorded(tmp_path):
    user = tmp_path / "their-project"
    (user / "train").mkdir(parents=True)
    (user / "pyproject.toml").write_text('[project]\nname = "theirs"\n')
    subprocess.run(["git", "init", "-q", str(user)], check=True)
    subprocess.run(["git", "-C", str(user), "-c", "user.name=u", "-c", "user.email=u@x",
                    "commit", "-q", "--allow-empty", "-m", "theirs"], check=True)  # fmt: skip
    got = common.git_commit(user / "train")  # as if the package were installed in their repo
    assert got.startswith("sichuan-env==") or got == "unknown"
