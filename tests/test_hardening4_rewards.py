"""Every step reward of a hand, summed, is the hand's score change in its record.

A class of bug found in another mahjong env: rewards never cleared between steps, or a
payout counted twice (at the win and again at the settlement). Here the PettingZoo AEC
env's rewards, read the two ways PettingZoo users read them (``env.last()`` at each of an
agent's turns, and ``env.rewards`` after every step), and ``VectorEnv``'s per-step
rewards, summed per seat over a hand, must equal the record's ``result.scores``, for
seeded hands of rule-based and random agents under several presets.
"""

import numpy as np
import pytest
from sichuan_env.agents import HeuristicAgent, RandomAgent

import sichuan_env
from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv

PRESETS = ("xuezhan", "xuezhan_full", "first_win")


def _agents(seed):
    """Heuristic agents in seats 0 and 2, random ones in 1 and 3."""
    return [HeuristicAgent(), RandomAgent(seed), HeuristicAgent(), RandomAgent(seed + 1)]


@pytest.mark.parametrize("preset", PRESETS)
def test_aec_rewards_sum_to_the_records_scores(preset):
    rules = RuleConfig.preset(preset)
    seen_nonzero = False
    for seed in range(20):
        env = sichuan_env.env(rules=rules)
        env.reset(seed=seed)
        agents = _agents(seed)
        from_last = dict.fromkeys(env.possible_agents, 0.0)  # what env.last() hands each agent
        from_rewards = dict.fromkeys(env.possible_agents, 0.0)  # env.rewards after every step
        for name in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            from_last[name] += reward
            if terminated or truncated:
                action = None
            else:
                seat = env.possible_agents.index(name)
                action = agents[seat].act(obs["observation"], obs["action_mask"])
            env.step(action)
            for agent, r in env.rewards.items():
                from_rewards[agent] += r
        scores = env.unwrapped.game.record()["result"]["scores"]
        want = {a: float(s) for a, s in zip(env.possible_agents, scores, strict=True)}
        assert from_last == want, (preset, seed, from_last, scores)
        assert from_rewards == want, (preset, seed, from_rewards, scores)
        seen_nonzero |= any(scores)
    assert seen_nonzero  # the hands moved points: the sums were put to the test


@pytest.mark.parametrize("preset", PRESETS)
def test_vector_env_rewards_sum_to_the_records_scores(preset):
    n, hands_per_slot = 16, 3
    venv = VectorEnv(n, rules=RuleConfig.preset(preset), seed=11)
    heuristic, rand = HeuristicAgent(), RandomAgent(3)
    obs, mask, seat = venv.reset()
    sums = np.zeros((n, 4), dtype=np.int64)  # this hand's rewards so far, per slot and seat
    ended = np.zeros(n, dtype=np.int64)
    checked, nonzero = 0, 0
    for _ in range(100_000):
        if (ended >= hands_per_slot).all():
            break
        actions = np.where(seat % 2 == 0, heuristic.act_batch(obs, mask), rand.act_batch(obs, mask))
        obs, mask, seat, rewards, done, info = venv.step(actions)
        sums += rewards
        for i in np.flatnonzero(done):
            scores = venv.record(int(i))["result"]["scores"]
            assert sums[i].tolist() == list(scores), (preset, int(i), sums[i], scores)
            assert info["final_scores"][i].tolist() == list(scores)
            sums[i] = 0  # the slot deals its next hand: its rewards start from nothing
            ended[i] += 1
            checked += 1
            nonzero += any(scores)
    else:
        pytest.fail(f"hands did not end: {ended}")
    assert checked >= n * hands_per_slot and nonzero
