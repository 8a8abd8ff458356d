"""VectorEnv: rewards, auto-reset, records, agreement with the AEC env and the engine."""

import numpy as np
import pytest

from sichuan_env import Game, IllegalActionError, RuleConfig
from sichuan_env.encoding.observation import encode_v1
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.rules.config import kernel_rules


def _random_actions(rng, mask):
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def test_step_rewards_records_and_observations():
    rules = RuleConfig(exchange_three=True)
    venv = VectorEnv(16, rules=rules, seed=3)
    obs, mask, seat = venv.reset()
    assert obs.shape == (16, 83, 27) and mask.shape == (16, 88) and seat.shape == (16,)
    rng = np.random.default_rng(0)
    totals = np.zeros((16, 4), np.int64)
    checked = 0
    for _ in range(600):
        obs, mask, seat, rewards, done, info = venv.step(_random_actions(rng, mask))
        assert (rewards.sum(axis=1) == 0).all()
        totals += rewards
        for i in np.flatnonzero(done):
            record = venv.record(int(i))
            game = Game.from_record(record)
            assert game.result()["scores"] == list(totals[i]) == list(info["final_scores"][i])
            totals[i] = 0
            checked += 1
        # the observation is the engine's encoding for the seat to act
        i = int(rng.integers(16))
        expect = np.zeros((83, 27), np.uint8)
        encode_v1(venv.states[i], int(seat[i]), False, kernel_rules(rules), expect)
        assert np.array_equal(expect, obs[i])
        assert np.array_equal(np.flatnonzero(mask[i]), venv.game(i).legal_ids())
    assert checked > 5


def test_same_seed_same_run_and_duplicate_seeds():
    a, b = VectorEnv(8, seed=11), VectorEnv(8, seed=11)
    oa, ma, _ = a.reset()
    ob, mb, _ = b.reset()
    assert np.array_equal(oa, ob) and np.array_equal(ma, mb)
    c = VectorEnv(4)
    obs, _, _ = c.reset(seeds=np.array([5, 5, 5, 5]))
    assert all(np.array_equal(obs[0], obs[k]) for k in range(4))
    assert c.game(0).record()["wall"] == Game(seed=5).record()["wall"]


def test_illegal_actions_and_bad_arguments():
    venv = VectorEnv(4, seed=0)
    _, mask, _ = venv.reset()
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in mask])
    with pytest.raises(IllegalActionError, match="slots"):
        venv.step(bad)
    with pytest.raises(ValueError):
        venv.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError):
        VectorEnv(0)
    with pytest.raises(ValueError, match="no hand has ended"):
        venv.record(0)
