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


def test_actions_as_lists_of_integer_scalars():
    """Per-slot actions may be an integer array or a list of ints / numpy ints / 0-d arrays."""
    rng = np.random.default_rng(2)
    ref, venv = VectorEnv(3, seed=4), VectorEnv(3, seed=4)
    _, mask, _ = ref.reset()
    venv.reset()
    for k in range(30):
        a = _random_actions(rng, mask)
        forms = [
            a.tolist(),
            [np.array(x) for x in a],
            tuple(np.uint8(x) for x in a),
            a.astype(np.int8),
        ]
        got = venv.step(forms[k % len(forms)])
        _, mask, _, _, _, _ = ref.step(a)
        assert np.array_equal(got[1], mask)
    assert np.array_equal(venv.states, ref.states)


@pytest.mark.parametrize(
    ("actions", "exc", "match"),
    [
        (np.array(5), ValueError, r"shape \(3,\)"),  # 0-d: one action for three slots
        (5, ValueError, r"shape \(3,\)"),
        (np.zeros((3, 1), np.int64), ValueError, r"got shape \(3, 1\)"),
        ([5, 5], ValueError, "one per slot"),
        ([5, True, 5], TypeError, r"actions\[1\]"),
        ([5, 5.0, 5], TypeError, r"actions\[1\]"),
        ([5, None, 5], TypeError, r"actions\[1\]"),
        (["5", 5, 5], TypeError, r"actions\[0\]"),
        ([5, 5, np.array([5])], TypeError, r"actions\[2\]"),
        ([5, 5, 2**70], IllegalActionError, r"actions\[2\]"),
        ([5, 88, 5], IllegalActionError, r"actions\[1\]: action id must be in \[0, 88\)"),
        (np.array([True, False, True]), TypeError, "dtype bool"),
        (np.array([1.0, 2.0, 3.0]), TypeError, "dtype float64"),
        (np.array([1, 88, 2]), IllegalActionError, r"out of range .* slots \[1\]"),
    ],
)
def test_bad_action_batches_move_nothing(actions, exc, match):
    venv = VectorEnv(3, seed=0)
    venv.reset()
    before = venv.states.tobytes()
    with pytest.raises(exc, match=match):
        venv.step(actions)
    assert venv.states.tobytes() == before
