"""The Gymnasium single-seat env: registration, env_checker, rewards that add up, masks, errors."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sichuan_env  # registers SichuanMahjong-v0
from sichuan_env import IllegalActionError, RuleConfig


def test_registered_and_passes_the_env_checker():
    assert "SichuanMahjong-v0" in gymnasium.registry
    env = gymnasium.make("SichuanMahjong-v0", opponents=("heuristic", "random", "heuristic"))
    check_env(env.unwrapped, skip_render_check=True)
    assert sichuan_env.__name__ == "sichuan_env"


@pytest.mark.parametrize("seat", [0, 2, "rotate"])
def test_rewards_add_up_to_the_learners_score(seat):
    env = gymnasium.make("SichuanMahjong-v0", seat=seat, rules=RuleConfig(exchange_three=True))
    rng = np.random.default_rng(0)
    seats, hands, nonzero = set(), 0, 0
    obs, info = env.reset(seed=3)
    total = 0.0
    while hands < 12:
        mask = env.unwrapped.action_masks()
        assert mask.any() and np.array_equal(mask, info["action_mask"])
        assert env.unwrapped.game.to_act() == info["seat"]
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs) and not truncated
        total += reward
        nonzero += reward != 0
        if terminated:
            game = env.unwrapped.game
            assert game.is_over() and total == game.scores()[info["seat"]]
            assert not env.unwrapped.action_masks().any()
            seats.add(info["seat"])
            hands += 1
            total = 0.0
            obs, info = env.reset()
    assert nonzero > 0
    assert seats == ({0, 1, 2, 3} if seat == "rotate" else {seat})


def test_illegal_actions_change_nothing():
    env = gymnasium.make("SichuanMahjong-v0")
    obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    before = env.unwrapped.game.state.tobytes()
    obs2, reward, terminated, _, info2 = env.step(illegal)
    assert info2["illegal_action"] and reward == -1.0 and not terminated
    assert np.array_equal(obs, obs2) and env.unwrapped.game.state.tobytes() == before
    strict = gymnasium.make("SichuanMahjong-v0", illegal_action="raise")
    _, info = strict.reset(seed=1)
    with pytest.raises(IllegalActionError):
        strict.step(int(np.flatnonzero(~info["action_mask"])[0]))


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"opponents": ("heuristic",) * 2}, ValueError),
        ({"opponents": ("heuristic", "nobody", "random")}, ValueError),
        ({"seat": 4}, ValueError),
        ({"seat": True}, ValueError),
        ({"obs_version": 77}, ValueError),
        ({"rules": "xuezhan"}, TypeError),
        ({"reward_scale": float("nan")}, ValueError),
        ({"illegal_action": "ignore"}, ValueError),
    ],
)
def test_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        gymnasium.make("SichuanMahjong-v0", **kwargs)


def test_render_modes():
    with pytest.raises(ValueError, match="render_mode"):
        sichuan_env_gym(render_mode="human")
    env = sichuan_env_gym(render_mode="ansi")
    env.reset(seed=0)
    assert "legal:" in env.render()


def sichuan_env_gym(**kwargs):
    from sichuan_env.agents.gym_env import SingleSeatEnv

    return SingleSeatEnv(**kwargs)


def test_order_and_versions():
    env = gymnasium.make("SichuanMahjong-v0", obs_version=2, oracle=True).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (299, 27)


@pytest.mark.parametrize("opponents", [("heuristic",) * 3, ("value", "defensive", "heuristic")])
def test_fused_opponents_play_exactly_as_the_agent_objects(opponents):
    """The numba opponents (sichuan_env.agents.rule_based.fused) give the same hands, rewards and records as the Python agents."""
    fast = gymnasium.make(
        "SichuanMahjong-v0", opponents=opponents, rules=RuleConfig(exchange_three=True)
    )
    slow = gymnasium.make(
        "SichuanMahjong-v0",
        opponents=opponents,
        rules=RuleConfig(exchange_three=True),
        fused_opponents=False,
    )
    assert fast.unwrapped._codes is not None and slow.unwrapped._codes is None
    rng = np.random.default_rng(1)
    (o1, i1), (o2, i2) = fast.reset(seed=5), slow.reset(seed=5)
    hands = steps = 0
    while hands < 8:
        assert np.array_equal(o1, o2) and np.array_equal(i1["action_mask"], i2["action_mask"])
        a = int(rng.choice(np.flatnonzero(i1["action_mask"])))
        o1, r1, d1, _, i1 = fast.step(a)
        o2, r2, d2, _, i2 = slow.step(a)
        steps += 1
        assert (r1, d1) == (r2, d2)
        if d1:
            assert fast.unwrapped.game.record() == slow.unwrapped.game.record()
            hands += 1
            (o1, i1), (o2, i2) = fast.reset(), slow.reset()
    assert steps > 8 * 5


def test_fused_opponents_argument_is_checked():
    with pytest.raises(TypeError, match="fused_opponents"):
        gymnasium.make("SichuanMahjong-v0", fused_opponents="yes")
    # an opponent that numba cannot play falls back to the agent objects
    assert (
        gymnasium.make(
            "SichuanMahjong-v0", opponents=("heuristic", "random", "heuristic")
        ).unwrapped._codes
        is None
    )
