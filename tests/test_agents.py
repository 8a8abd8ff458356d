"""Baseline agents: legal choices, the heuristic's rules of thumb, and a duplicate match."""

import numpy as np

import sichuan_env
from agents import HeuristicAgent, RandomAgent
from agents.evaluate import main as evaluate_main
from sichuan_env.envs.vector import VectorEnv


def test_agents_always_choose_legal_actions():
    venv = VectorEnv(64, seed=1)
    obs, mask, _ = venv.reset()
    h, r = HeuristicAgent(), RandomAgent(0)
    for _ in range(200):
        for agent in (h, r):
            acts = agent.act_batch(obs, mask)
            assert mask[np.arange(64), acts].all()
        single = [h.act(obs[i], mask[i]) for i in range(4)]
        assert all(mask[i, a] for i, a in enumerate(single))
        obs, mask, _, _, _, _ = venv.step(h.act_batch(obs, mask))


def test_heuristic_rules_of_thumb():
    env = sichuan_env.raw_env()
    h = HeuristicAgent()
    env.reset(seed=7)
    game = env.unwrapped.game
    # 定缺: the suit with the fewest tiles
    seat = game.to_act()
    hand = game.state["hands"][seat]
    shortest = int(np.argmin([hand[0:9].sum(), hand[9:18].sum(), hand[18:27].sum()]))
    obs = env.observe(env.agent_selection)
    assert h.act(obs["observation"], obs["action_mask"]) == 54 + shortest
    # play on with the heuristic everywhere: void tiles go first, wins are always taken
    while not game.is_over():
        obs = env.observe(env.agent_selection)
        a = h.act(obs["observation"], obs["action_mask"])
        if obs["action_mask"][86]:
            assert a == 86
        env.step(a)


def test_heuristic_beats_random_in_a_duplicate_match(tmp_path):
    doc = evaluate_main(
        ["--walls", "40", "--seed", "1", "--quiet", "--json", str(tmp_path / "eval.json")]
    )
    h, r = doc["agents"]["heuristic"], doc["agents"]["random"]
    assert h["points_per_hand"] - h["ci95"] > r["points_per_hand"] + r["ci95"]
    assert h["win_rate"] > 0.5 > r["win_rate"]
    assert (tmp_path / "eval.json").exists()
