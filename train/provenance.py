"""Where a checkpoint came from: the project's commit and the command that ran.

``git_commit`` records this checkout's commit (``-dirty`` when its tree has changes),
or, outside a checkout, the installed version; ``command_line`` the command that
started the process. ``sichuan_env.train.common`` re-exports both.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def git_commit(package_dir: Path | None = None) -> str:
    """The project's own commit (``-dirty`` when its tree has changes), for checkpoints.

    git runs in the package's own folder (``package_dir``, default this file's), not in
    the current directory, and its answer counts only when that folder is this
    project's checkout (the repository's top level holds ``pyproject.toml`` naming
    ``sichuan-env`` and the folder is its ``train/``): a run started elsewhere
    still records the commit, and a wheel installed inside a user's own repository
    does not record theirs. Otherwise the package is either this project's source tree
    (``package_dir`` is the ``train/`` of a folder whose ``pyproject.toml`` names
    ``sichuan-env``: an editable install) whose commit git could not give, recorded as
    ``unknown (git unavailable; sichuan-env 0.1.0 editable checkout)`` (or ``git
    could not tell``), never as a version its code may differ from; or an installed
    wheel, ``sichuan-env==<version>``; or ``unknown``.
    """
    here = Path(__file__).resolve().parent if package_dir is None else Path(package_dir).resolve()
    failures: list[str] = []
    commit = _checkout_commit(here, failures)
    if commit is not None:
        return commit
    try:
        from importlib.metadata import version

        installed: str | None = version("sichuan-env")
    except Exception:  # noqa: BLE001 - no metadata (a bare source tree)
        installed = None
    if _is_source_tree(here):
        why = "git unavailable" if "unavailable" in failures else "git could not tell"
        what = f"sichuan-env {installed} editable checkout" if installed else "source checkout"
        return f"unknown ({why}; {what})"
    return f"sichuan-env=={installed}" if installed else "unknown"


def _is_source_tree(here: Path) -> bool:
    """Whether ``here`` is the ``train/`` folder of this project's source tree (not a wheel)."""
    try:
        text = (here.parent / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return here.name == "train" and 'name = "sichuan-env"' in text


def _checkout_commit(here: Path, failures: list[str] | None = None) -> str | None:
    """The commit of the checkout whose ``train/`` is ``here``, else None.

    ``failures`` gets ``"unavailable"`` when git could not run at all (not installed,
    no ``PATH``, a time-out).
    """

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["git", "-C", str(here), *args], capture_output=True,
                                  text=True, check=False, timeout=30)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            if failures is not None:
                failures.append("unavailable")
            return None

    top = git("rev-parse", "--show-toplevel")
    if top is None or top.returncode or not top.stdout.strip():
        return None
    root = Path(top.stdout.strip()).resolve()
    try:
        named = 'name = "sichuan-env"' in (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        named = False
    if not named or here != root / "train":
        return None
    rev, dirty = git("rev-parse", "HEAD"), git("status", "--porcelain")
    if rev is None or rev.returncode or dirty is None:
        return None
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def command_line(module: str | None = None, argv: list[str] | None = None) -> str:
    """The command that started this process (``python -m <module> ...``), for checkpoint configs.

    Without ``module``, the name of the script that ran (``sys.argv[0]``'s stem).
    ``argv``: the arguments ``main(argv)`` was called with, when a driver called
    it (``sichuan_env.train.policy.exit``); the process's own otherwise.
    """
    if module is None:
        module = Path(sys.argv[0]).stem if sys.argv else "?"
    return " ".join(["python -m", module, *(sys.argv[1:] if argv is None else argv)])
