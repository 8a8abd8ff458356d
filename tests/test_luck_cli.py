"""The luck adjustment in the tools: sichuan-eval's adjusted columns and --target-ci, the ladder."""

import json

import numpy as np
import pytest
from sichuan_env.agents.eval.cli import main as evaluate_main
from sichuan_env.agents.eval.ladder import main as ladder_main
from sichuan_env.agents.eval.luck import load_for

from sichuan_env import RuleConfig

pytest.importorskip("torch")
RULES = RuleConfig.preset("xuezhan")


def test_the_shipped_value_model_covers_the_default_preset_only():
    model, why = load_for(RULES)
    assert model is not None, why
    other, why = load_for(RuleConfig.preset("first_win"))
    assert other is None and "plain" in why


def test_eval_reports_adjusted_estimates_and_per_wall_samples(tmp_path):
    out = tmp_path / "eval.json"
    doc = evaluate_main(["--walls", "12", "--seed", "3", "--json", str(out), "--quiet"])
    assert doc["adjusted"] is True and len(doc["value_model"]["sha256"]) == 64
    on_disk = json.loads(out.read_text())
    for name, row in doc["agents"].items():
        assert {"points_per_hand_adjusted", "ci95_adjusted"} <= row.keys()
        samples = on_disk["per_wall"][name]
        assert len(samples["plain"]) == len(samples["adjusted"]) == 12
        # the plain per-wall samples average to the plain estimate
        assert np.mean(samples["plain"]) == pytest.approx(row["points_per_hand"], abs=1e-3)
        assert np.mean(samples["adjusted"]) == pytest.approx(
            row["points_per_hand_adjusted"], abs=1e-3
        )
    # a zero-sum game: the seats' adjusted points cancel wall by wall as the plain ones do
    names = list(doc["agents"])
    adj = np.array([on_disk["per_wall"][n]["adjusted"] for n in names])
    plain = np.array([on_disk["per_wall"][n]["plain"] for n in names])
    assert not np.allclose(adj, plain)  # the corrections did something


def test_no_adjust_gives_plain_estimates_only(tmp_path):
    doc = evaluate_main(["--walls", "4", "--seed", "3", "--no-adjust", "--quiet",
                         "--json", str(tmp_path / "e.json")])  # fmt: skip
    assert doc["adjusted"] is False and doc["value_model"] is None
    assert all(row.get("points_per_hand_adjusted") is None for row in doc["agents"].values())


def test_an_unusable_value_model_is_an_error(tmp_path):
    bad = tmp_path / "v.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit) as exc:
        evaluate_main(["--walls", "4", "--value-model", str(bad), "--quiet"])
    assert exc.value.code not in (0, None)  # a message: printed on stderr, exit status 1
    assert "--value-model" in str(exc.value.code)


def test_target_ci_stops_at_the_first_block_that_reaches_it(tmp_path):
    args = ["--lineup", "heuristic", "random", "random", "random", "--seed", "5",
            "--block-walls", "8", "--quiet"]  # fmt: skip
    loose = evaluate_main([*args, "--walls", "200", "--target-ci", "50"])
    assert loose["walls"] == 8 and loose["walls_cap"] == 200 and loose["target_ci"] == 50
    capped = evaluate_main([*args, "--walls", "16", "--target-ci", "0.0001"])
    assert capped["walls"] == 16  # never reached: the cap stops it
    mid = evaluate_main([*args, "--walls", "200", "--target-ci", "0.9"])
    widest = max(row["ci95_adjusted"] for row in mid["agents"].values())
    assert widest <= 0.9 and 8 < mid["walls"] < 200 and mid["walls"] % 8 == 0
    with pytest.raises(SystemExit):
        evaluate_main([*args, "--target-ci", "0.1", "--ray", "local"])


def test_the_ladder_fits_adjusted_per_wall_results(tmp_path):
    out = tmp_path / "ladder"
    doc = ladder_main(["--agents", "heuristic", "random", "--walls", "6", "--seed", "2",
                       "--out", str(out), "--quiet"])  # fmt: skip
    assert doc["adjusted"] is True and doc["value_model"]
    pair = json.loads(next((out / "pairs").glob("*.json")).read_text())
    assert len(pair["points"]) == len(pair["points_adjusted"]) == 6
    plain = ladder_main(["--agents", "heuristic", "random", "--walls", "6", "--seed", "2",
                         "--out", str(tmp_path / "plain"), "--quiet", "--no-adjust"])  # fmt: skip
    assert plain["adjusted"] is False
