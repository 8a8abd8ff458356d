"""The after-win hybrids on other networks: what they are, and that they play legal, repeatable hands."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.research


def test_the_candidates_search_after_a_win_on_their_networks():
    pytest.importorskip("torch")
    from sichuan_env.agents.belief.guard import GuardedAgent
    from sichuan_env.agents.nn.torch_agent import TorchAgent

    from research.guard_hybrid import agents

    guard = agents.guard_search64_after_win(1)
    plain = agents.valueleaf_search64_after_win(1)
    assert isinstance(guard.net, GuardedAgent) and type(plain.net) is TorchAgent
    for a in (guard, plain):
        assert a.after_win and a.late == -1 and a.search.samples == 64


def test_a_short_match_is_legal_and_repeatable():
    pytest.importorskip("torch")
    from sichuan_env.agents.eval.evaluate import play_duplicate

    from sichuan_env import RuleConfig

    spec = "research.guard_hybrid.agents:guard_search64_after_win"
    lineup = [spec, "heuristic", "heuristic", "heuristic"]
    rules = RuleConfig.preset("xuezhan")
    one = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    two = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    assert len(one) == 8
    assert [r["actions"] for _, _, r in one] == [r["actions"] for _, _, r in two]
