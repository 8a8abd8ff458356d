"""The command-line tools run clean under ``python -W error``: no warning from the project's code,
and each says where it wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "tests" / "data" / "golden").glob("*.json"))


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-W", "error", *args], capture_output=True, text=True, cwd=cwd,
        timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_the_tools_run_under_w_error_and_say_where_they_wrote(tmp_path):
    match = tmp_path / "match"
    out = _run("-m", "sichuan_env.agents.eval", "--walls", "2", "--quiet", "--records",
               str(match), "--json", str(tmp_path / "m.json"), cwd=tmp_path).stdout  # fmt: skip
    assert f"wrote {tmp_path / 'm.json'}" in out and str(match / "records.jsonl") in out
    pages = tmp_path / "pages"
    out = _run("-m", "sichuan_env.viewer", str(match / "records.jsonl"), "-o", str(pages),
               "--limit", "2", cwd=tmp_path).stdout  # fmt: skip
    assert f"wrote {pages / 'index.html'} and 2 of 2 pages" in out
    ladder = tmp_path / "ladder"
    out = _run("-m", "sichuan_env.agents.eval.ladder", "--agents", "random", "heuristic",
               "--walls", "2", "--boot", "20", "--quiet", "--out", str(ladder),
               cwd=tmp_path).stdout  # fmt: skip
    assert f"wrote {ladder / 'ladder.json'}" in out
    _run("-m", "sichuan_env.replay", str(GOLDEN[0]), "--all", cwd=tmp_path)
    _run("-m", "sichuan_env", "--hands", "100", cwd=tmp_path)
