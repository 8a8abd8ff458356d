"""A damaged or stale numba cache never breaks ``import sichuan_env`` nor gives old answers.

Each test works on a copy of the package in a temporary directory (its
``__pycache__`` included, so the copy starts from the machine code already
compiled), damages files there, and imports the copy in a subprocess: the
exit status, the one-line report and the answers are asserted.
``checked.is_win_code`` is the victim: it has an explicit signature, so it is
loaded (or compiled) during ``import sichuan_env`` itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sichuan_env

PACKAGE = Path(sichuan_env.__file__).parent
CODE = "import sichuan_env as s; print(s.__file__); print(s.is_win('11m'), s.shanten('1m'))"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the package, caches included, importable from ``tmp_path``."""
    sichuan_env.is_win("11m")  # make sure the kernel is cached in the source tree
    shutil.copytree(PACKAGE, tmp_path / "sichuan_env", ignore=shutil.ignore_patterns("*.pyc"))
    return tmp_path


def _run(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-c", CODE],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, f"exit status {out.returncode}:\n{out.stderr[-3000:]}"
    lines = out.stdout.split("\n")
    assert lines[0] == str(root / "sichuan_env" / "__init__.py")  # the copy, not the checkout
    assert lines[1] == "True 0"
    return out


def _reports(err: str) -> list[str]:
    return [line for line in err.splitlines() if "sichuan_env:" in line]


def _victim(root: Path, suffix: str) -> list[Path]:
    found = sorted(
        (root / "sichuan_env" / "kernels" / "__pycache__").glob(f"checked.is_win_code-*{suffix}")
    )
    assert found, f"no cache file *{suffix} for is_win_code in the copy"
    return found


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


def _flip_machine_code(path: Path) -> None:
    data = bytearray(path.read_bytes())
    at = data.find(b"\x7fELF")
    assert at > 0, "no object code in the data file"
    for k in range(at + 64, min(len(data), at + 4064), 7):
        data[k] ^= 0x5A  # valid pickle, garbled machine code: once a SIGABRT in LLVM
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("suffix", "damage"),
    [(".sha.nbi", _truncate), (".sha.1.nbc", _truncate), (".sha.1.nbc", _flip_machine_code)],
    ids=["truncated index", "truncated data", "garbled machine code"],
)
def test_damaged_cache_is_reported_removed_and_rebuilt(copy, suffix, damage):
    first = _run(copy)
    assert _reports(first.stderr) == []
    for path in _victim(copy, suffix):
        damage(path)
    second = _run(copy)
    (line,) = _reports(second.stderr)
    assert "unreadable numba cache for is_win_code removed" in line and "recompiling" in line
    third = _run(copy)  # the recompiled kernel was cached again, and is trusted
    assert _reports(third.stderr) == []


def test_plain_numba_cache_files_are_ignored(copy):
    pycache = copy / "sichuan_env" / "kernels" / "__pycache__"
    for path in _victim(copy, ".sha.nbi"):
        (pycache / path.name.replace(".sha.nbi", ".nbi")).write_bytes(b"\x80\x04garbage")
    out = _run(copy)
    assert _reports(out.stderr) == []


def _index_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in _victim(root, ".sha.nbi"))


def test_a_changed_dependency_invalidates_the_cache(copy):
    _run(copy)
    before = _index_bytes(copy)
    with open(copy / "sichuan_env" / "play.py", "a") as fh:
        fh.write("\n# an unrelated module changed\n")
    _run(copy)
    assert _index_bytes(copy) == before  # not a dependency of is_win_code: cache kept
    with open(copy / "sichuan_env" / "kernels" / "agari.py", "a") as fh:
        fh.write("\n# a module is_win_code calls into changed\n")
    _run(copy)
    assert _index_bytes(copy) != before  # recompiled under a new source stamp


def test_kernels_outside_the_package_folder_are_stamped_with_their_dependencies():
    """``sichuan_env.agents`` may live in another folder (``agents/`` of a checkout): its kernels
    still get the source stamp, which covers the modules they call into there."""
    from sichuan_env.agents.search import agent, determinize, rollout

    from sichuan_env import _jit

    stamp = _jit._source_stamp(agent.search_rows.py_func)
    assert stamp is not None and stamp[0] == "sha256-imports"
    covered = set(_jit._file_info)
    assert {Path(rollout.__file__), Path(determinize.__file__)} <= covered
