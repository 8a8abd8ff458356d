"""The belief-search experiment: a tiny run writes its table and JSON, a larger --walls with
--resume extends it block by block, and other settings are refused."""

import json

import numpy as np
import pytest

from research.belief_search import run

pytestmark = pytest.mark.research


def test_a_tiny_run_resumes_extends_and_refuses_other_settings(tmp_path, capsys):
    out = tmp_path / "bs.json"
    common = [
        "--block",
        "1",
        "--samples",
        "4",
        "--draws",
        "4",
        "--ready-draws",
        "2",
        "--out",
        str(out),
    ]
    assert run.main(["--walls", "2", *common]) == 0
    doc = json.loads(out.read_text())
    s = doc["summary"]
    assert s["walls"] == 2 and s["hands"] == 8 and s["decisions"] > 20
    lo, hi = -50, 50
    assert lo < s["points"][0] < hi and all(np.isfinite(s["adv_ready"]))
    assert 0 <= s["dev_style_rate"] <= 1
    log = out.with_suffix(".blocks.jsonl")
    first = log.read_text().splitlines()
    assert len(first) == 2
    with pytest.raises(SystemExit):  # the log exists: --resume or another --out
        run.main(["--walls", "2", *common])
    assert run.main(["--walls", "3", "--resume", *common]) == 0  # extends: one more block
    lines = log.read_text().splitlines()
    assert lines[:2] == first and len(lines) == 3
    assert json.loads(out.read_text())["summary"]["walls"] == 3
    with pytest.raises(SystemExit):
        run.main(["--walls", "3", "--resume", *common[:-2], "--seed", "9", "--out", str(out)])
    assert "gain over the closest-to-ready search" in capsys.readouterr().out


def test_summaries_average_the_four_seats_of_a_wall():
    rows = np.zeros((8, len(run.COLUMNS)))
    rows[:, 0] = [4, -4, 0, 0, 2, 2, 2, 2]  # points
    rows[:, 1] = 10
    rows[:4, 2] = 5  # wall 0 differs from the ready search on 5 decisions a seat
    rows[:, 5] = [1, 1, 1, 1, 3, 3, 3, 3]
    s = run.summarize(rows, 2)
    assert s["points"][0] == pytest.approx(1.0) and s["adv_ready"][0] == pytest.approx(2.0)
    assert s["dev_ready_rate"] == pytest.approx(20 / 80)
