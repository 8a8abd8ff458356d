"""The screen's candidates are what the README says they are, and play a legal, repeatable match."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.research


def test_the_candidates_average_the_networks_the_readme_names():
    pytest.importorskip("torch")
    from sichuan_env.agents.belief.guard import GuardedAgent
    from sichuan_env.agents.nn.ensemble import ENSEMBLE6

    from research.ensemble import agents

    assert [m.name for m in agents.ens6(0).members] == list(ENSEMBLE6)
    assert [m.name for m in agents.ens3(0).members] == ["exit_valueleaf", "oracle_r2", "oracle_r3"]
    for guarded, n in ((agents.ens6_guard(0), 6), (agents.ens3_guard(0), 3)):
        assert isinstance(guarded, GuardedAgent) and len(guarded.base.members) == n
        assert (guarded.threshold, guarded.slack, guarded.keep) == (0.1, 0, 0.9)
    hybrid = agents.ens6guard_search64_after_win(0)
    assert hybrid.after_win and hybrid.search.samples == 64
    assert isinstance(hybrid.net, GuardedAgent) and hybrid.net.base.name == "ensemble6"
    more = agents.ens6guard_search128_after_win(0)
    assert more.after_win and more.search.samples == 128 and more.net.base.name == "ensemble6"


def test_the_guard_grid_is_the_ensemble_under_each_setting_and_resolves_by_name():
    pytest.importorskip("torch")
    from sichuan_env.agents.registry import make_agent

    from research.ensemble import agents

    assert len(agents.GUARD_GRID) == 8 and (0.1, 0.9, 0) not in agents.GUARD_GRID.values()
    for tag, (t, k, s) in agents.GUARD_GRID.items():
        guarded = make_agent(f"research.ensemble.agents:ens6_guard_{tag}", 0)
        assert (guarded.threshold, guarded.keep, guarded.slack) == (t, k, s)
        assert guarded.base.name == "ensemble6"
    shipped = agents.ens6_guard_setting(0)
    assert (shipped.threshold, shipped.keep, shipped.slack) == (0.1, 0.9, 0)


def test_the_student_is_read_from_its_run_or_refused(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import shutil

    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    from research.ensemble import agents

    monkeypatch.setenv("SICHUAN_ENSEMBLE_STUDENT", str(tmp_path / "best.pt"))
    with pytest.raises(ValueError, match="distill makes it"):
        agents.student_guard(0)
    for ext in (".pt", ".json"):
        shutil.copy(SHIPPED_DIR / f"oracle_r3{ext}", tmp_path / f"best{ext}")
    student = agents.student_guard(0)
    shipped = agents.load_ensemble(["oracle_r3", "oracle_r2"]).members[0]
    assert student.base.meta["sha256"] == shipped.meta["sha256"]


def test_a_short_match_is_legal_and_repeatable():
    pytest.importorskip("torch")
    from sichuan_env.agents.eval.evaluate import play_duplicate

    from sichuan_env import RuleConfig

    lineup = ["research.ensemble.agents:ens3_guard", "heuristic", "heuristic", "heuristic"]
    rules = RuleConfig.preset("xuezhan")
    one = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    two = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    assert len(one) == 8
    assert [r["actions"] for _, _, r in one] == [r["actions"] for _, _, r in two]
