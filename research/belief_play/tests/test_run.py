"""The belief-play experiment: guarded rows pair with the unguarded policy wall by wall."""

import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents.belief.guard import GuardedAgent
from sichuan_env.agents.belief.model import BeliefModel

from research.belief_play.run import experiment, main
from sichuan_env import RuleConfig


def test_bad_far_setting_is_a_usage_error():
    with pytest.raises(SystemExit):
        main(["--walls", "2", "--far", "0.1,0"])


def test_guarding_another_policy_pairs_walls():
    model = BeliefModel.load("belief")
    res = experiment(3, [1.0, 0.0], [0], seed=2, rules=RuleConfig(), model=model, base="distill")
    ref, never, always = res["rows"]
    assert ref["agent"] == "distill" and never["agent"] == "distill+guard(t=1,s=0)"
    # a guard that never fires is the base policy: the same points on every wall, gain exactly 0
    assert never["changed_discards"] == 0.0 and never["gain"] == 0.0 and never["gain_ci95"] == 0.0
    assert never["points_per_hand"] == ref["points_per_hand"]
    assert always["changed_discards"] > 0  # threshold 0 guards every discard it can
    assert always["gain"] == pytest.approx(always["points_per_hand"] - ref["points_per_hand"])
    with pytest.raises(TypeError, match="observation v1"):
        GuardedAgent(model, base=GuardedAgent(model))
