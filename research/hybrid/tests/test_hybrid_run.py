"""The hybrid experiment's driver: cases, resume, refusal, the summary and the plot."""

import json

import numpy as np
import pytest

from research.hybrid import run

pytestmark = pytest.mark.research


def test_a_tiny_run_resumes_pairs_with_the_network_and_refuses_other_settings(tmp_path, capsys):
    out = tmp_path / "h"
    assert run.main(["--walls", "2", "--seed", "3", "--cases", "distill", "--out", str(out)]) == 0
    assert len((out / "cases.jsonl").read_text().splitlines()) == 1
    with pytest.raises(SystemExit):  # an existing folder is resumed, never replaced
        run.main(["--walls", "2", "--seed", "3", "--cases", "distill", "--out", str(out)])
    args = ["--walls", "2", "--seed", "3", "--cases", "distill", "hybrid-always", "--out", str(out)]
    assert run.main([*args, "--resume"]) == 0
    lines = (out / "cases.jsonl").read_text().splitlines()
    assert [json.loads(x)["label"] for x in lines] == ["distill", "hybrid-always"]  # one new
    summary = json.loads((out / "summary.json").read_text())
    rows = {r["label"]: r for r in summary["cases"]}
    hybrid = rows["hybrid-always"]
    assert hybrid["search_rate"] > 0 and hybrid["ms_per_decision"] > 0
    a, b = (np.asarray(json.loads(x)["adjusted"]) for x in lines)
    assert np.isclose(hybrid["minus_distill"][0], (b - a).mean())
    assert (out / "points_vs_cost.png").stat().st_size > 1000
    # a second case every case is paired with: played here or on disk, else refused
    assert run.main([*args, "--resume", "--base", "hybrid-always"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = {r["label"]: r for r in summary["cases"]}
    assert summary["base"] == "hybrid-always"
    assert np.isclose(rows["distill"]["minus_hybrid-always"][0], (a - b).mean())
    with pytest.raises(SystemExit):
        run.main([*args, "--resume", "--base", "hybrid-won"])
    assert "--base hybrid-won is neither played here" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run.main(["--walls", "3", "--seed", "3", "--out", str(out), "--resume"])
    assert "was played with --walls 2" in capsys.readouterr().err


def test_latency_times_every_decision_of_the_agent_one_at_a_time():
    from research.hybrid import latency

    for spec in (
        "distill-guard",
        "distill-search-after-win",
        "hybrid-won-self",
    ):  # v2; states; a case
        ms = latency.latencies(spec, 1, 0)
        assert len(ms) > 5 and (ms > 0).all()
