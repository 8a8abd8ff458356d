"""The search-distillation pictures: they draw a run's files and reject malformed reports."""

import json
import shutil
from pathlib import Path

import pytest

import research.search_distill.plot as plot_distill

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(RESULTS / "metrics.jsonl", run / "metrics.jsonl")
    shutil.copy(RESULTS / "report.json", run / "report.json")
    return run


def test_plot_of_the_shipped_run(tmp_path):
    run, png = _run(tmp_path), tmp_path / "sd.png"
    plot_distill.main([str(run), "--out", str(png)])
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "report",
    [
        {"margins": [{"margin": "x"}]},
        # a duplicate figure without its interval
        {"margins": [{"margin": 1, "deviation_rate": 0.1, "eval_points_per_hand": 0.2}]},
    ],
)
def test_malformed_reports_are_rejected(tmp_path, report):
    run = _run(tmp_path)
    (run / "report.json").write_text(json.dumps(report))
    with pytest.raises(SystemExit):
        plot_distill.main([str(run), "--out", str(tmp_path / "sd.png")])
