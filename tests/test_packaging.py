"""The wheel: one top-level package, no research or benchmarks, and a user's own ``agents/`` is safe.

The slow half (``-m wheel``) builds the wheel, installs it into a fresh venv
(dependencies borrowed from the running interpreter's site-packages, the
project itself only from the wheel) and runs the console scripts and the
Gymnasium id from inside a user project that has its own ``agents``,
``train`` and ``benchmarks`` packages.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = {
    "sichuan_env": "sichuan_env",
    "sichuan_env.agents": "agents",
    "sichuan_env.train": "train",
}


def _declared() -> set[str]:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(doc["tool"]["setuptools"]["packages"])


def _on_disk() -> set[str]:
    found = set()
    for name, folder in INSTALLED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    return found


def test_the_declared_packages_are_the_folders():
    # pyproject lists the packages by hand (package-dir maps agents/ and train/ into the
    # namespace); a new subpackage that is not listed would silently miss the wheel
    assert _declared() == _on_disk()
    assert not (ROOT / "agents" / "checkpoints" / "__init__.py").exists()  # data only


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        timeout=600,
    )
    (found,) = out.glob("sichuan_env-*.whl")
    return found


@pytest.mark.wheel
def test_the_wheel_holds_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"sichuan_env"}
    assert not any(
        n.startswith(("sichuan_env/research", "research/", "benchmarks/")) for n in names
    )
    for needed in [
        "sichuan_env/agents/checkpoints/distill.pt",
        "sichuan_env/agents/checkpoints/belief.json",
        "sichuan_env/agents/registry.py",
        "sichuan_env/train/policy/ppo.py",
        "sichuan_env/viewer/page.js",
        "sichuan_env/py.typed",
    ]:
        assert needed in names, needed
    assert not any(n.endswith("__pycache__/") or ".nbi" in n for n in names)


@pytest.mark.wheel
def test_a_user_project_with_its_own_agents_package(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    # dependencies from the running interpreter (no .pth of it is processed: no editable finder)
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=600,
    )
    user = tmp_path / "project"
    for pkg in ("agents", "train", "benchmarks"):
        (user / pkg).mkdir(parents=True)
        (user / pkg / "__init__.py").write_text(f"MINE = {pkg!r}\n")
    run_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run(
            args,
            cwd=user,
            env=run_env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    code = (
        "import sys, gymnasium, sichuan_env, sichuan_env.agents as A, agents, train, benchmarks\n"
        "assert agents.MINE == 'agents' and train.MINE == 'train', 'user packages shadowed'\n"
        "assert 'site-packages' in sichuan_env.__file__ and 'site-packages' in A.__file__\n"
        "env = gymnasium.make('SichuanMahjong-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "obs, r, term, trunc, info = env.step(int(info['action_mask'].nonzero()[0][0]))\n"
        "from sichuan_env.agents import make_agent\n"
        "print(make_agent('distill', 0).name, make_agent('heuristic', 0).name)\n"
    )
    got = run(str(py), "-c", code)
    assert got.returncode == 0, got.stderr[-3000:]
    assert "distill heuristic" in got.stdout
    ev = run(
        str(env_dir / "bin" / "sichuan-eval"), "--walls", "1", "--quiet",
        "--lineup", "heuristic", "random", "random", "random",
    )  # fmt: skip
    assert ev.returncode == 0, ev.stderr[-3000:]
    assert "heuristic" in ev.stdout
    quit_at_once = run(str(env_dir / "bin" / "sichuan-play"), "--seed", "1", stdin="q\n")
    assert quit_at_once.returncode in (0, 1), quit_at_once.stderr[-3000:]
    assert "Traceback" not in quit_at_once.stderr
