"""The opponent population: legal answers always, and styles that differ as documented."""

import numpy as np
import pytest
from sichuan_env.agents import make_agent
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.rule_based.population import (
    STYLES,
    DefensiveAgent,
    ValueAgent,
    population_table,
)

from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv


@pytest.mark.parametrize("name", ["value", "defensive"])
def test_registered_and_always_legal(name):
    agent = make_agent(name)
    assert agent.obs_version == 1 and agent.name == name
    venv = VectorEnv(64, seed=5)
    obs, mask, _ = venv.reset()
    for _ in range(300):
        actions = agent.act_batch(obs, mask)  # BaseAgent raises if an answer were illegal
        assert mask[np.arange(64), actions].all()
        obs, mask, *_ = venv.step(actions)
    rng = np.random.default_rng(0)
    for _ in range(200):  # inconsistent (observation, mask) pairs still get a legal answer
        o = (rng.random((83, 27)) < 0.2).astype(np.uint8)
        m = (rng.random(88) < 0.1).astype(np.int8)
        m[rng.integers(88)] = 1
        assert m[agent.act(o, m)] == 1


def _wins(lineup, walls=40):
    records = play_duplicate(lineup, walls, RuleConfig(), seed=1, progress=False)
    by_agent = {}
    for _, rot, record in records:
        for w in record["result"]["wins"]:
            by_agent.setdefault(lineup[(w["seat"] + rot) % 4], []).append(w["base"])
    return by_agent


def test_value_style_wins_with_bigger_patterns():
    wins = _wins(["value", "heuristic", "heuristic", "heuristic"])
    big = ("qingyise", "duidui", "qing_duidui")

    def share(name):
        return np.mean([b in big for b in wins[name]])

    assert len(wins["value"]) > 30
    assert share("value") > share("heuristic") + 0.1


def test_defensive_style_folds():
    table = population_table(walls=20, seed=2)
    d = table["defensive_vs_heuristics"]
    assert d["defensive"]["win_rate"] < d["heuristic"]["win_rate"]
    assert d["defensive"]["not_tenpai_rate"] > d["heuristic"]["not_tenpai_rate"]
    assert set(table["together"]) == set(STYLES)


def test_styles_are_distinct_agents():
    assert ValueAgent().style != DefensiveAgent().style
