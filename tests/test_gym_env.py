"""The Gymnasium single-seat env: registration, env_checker, rewards that add up, masks, errors."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sichuan_env.agents.gym.env import MAX_MAGNITUDE, SingleSeatEnv

import sichuan_env  # noqa: F401  (registers SichuanMahjong-v0)
from sichuan_env import IllegalActionError, RuleConfig


def test_registered_and_passes_the_env_checker():
    assert "SichuanMahjong-v0" in gymnasium.registry
    env = gymnasium.make("SichuanMahjong-v0", opponents=("heuristic", "random", "heuristic"))
    check_env(env.unwrapped, skip_render_check=True)


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
        ({"illegal_action": None}, TypeError),
        ({"opponents": "heuristic"}, TypeError),
        ({"opponents": ("heuristic", 7, "heuristic")}, TypeError),
        ({"opponents": ("heuristic", object(), "heuristic")}, TypeError),
        ({"seat": 4.0}, ValueError),
        ({"seat": "north"}, ValueError),
        ({"obs_version": "1"}, TypeError),
        ({"obs_version": True}, TypeError),
        ({"oracle": 1}, TypeError),
        ({"reward_scale": 10**30}, ValueError),
        ({"reward_scale": 10**400}, ValueError),
        ({"reward_scale": -2e6}, ValueError),
        ({"reward_scale": float("inf")}, ValueError),
        ({"reward_scale": "1"}, TypeError),
        ({"reward_scale": True}, TypeError),
        ({"reward_scale": np.array(1.0)}, TypeError),
        ({"illegal_penalty": 10**30}, ValueError),
        ({"illegal_penalty": -1}, ValueError),
        ({"illegal_penalty": float("nan")}, ValueError),
        ({"illegal_penalty": None}, TypeError),
        ({"fused_opponents": None}, TypeError),
        ({"no_such_argument": 1}, TypeError),
    ],
)
def test_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        gymnasium.make("SichuanMahjong-v0", **kwargs)


def test_numeric_arguments_within_range_are_accepted():
    env = SingleSeatEnv(
        reward_scale=-MAX_MAGNITUDE, illegal_penalty=np.float32(MAX_MAGNITUDE), seat=np.int64(2)
    )
    assert env.reward_scale == -1e6 and env.illegal_penalty == 1e6 and env.seat == 2
    with pytest.raises(ValueError, match=r"reward_scale must be a finite number in \[-1e\+06"):
        SingleSeatEnv(reward_scale=10**30)


def test_render_modes(capsys):
    from sichuan_env.envs.render import RGB_SHAPE

    assert SingleSeatEnv.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    for bad in ("video", 5, ["ansi"]):
        with pytest.raises(ValueError, match="render_mode"):
            sichuan_env_gym(render_mode=bad)
    assert sichuan_env_gym().render() is None  # no render mode: nothing to draw
    env = sichuan_env_gym(render_mode="ansi")
    with pytest.raises(RuntimeError, match="reset"):
        env.render()
    env.reset(seed=0)
    assert "legal:" in env.render()
    env = sichuan_env_gym(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.shape == RGB_SHAPE and img.dtype == np.uint8
    env = sichuan_env_gym(render_mode="human")
    capsys.readouterr()
    _, info = env.reset(seed=0)  # human: every reset and step prints the view
    assert "legal:" in capsys.readouterr().out
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "seat" in capsys.readouterr().out
    assert env.render() is None and "seat" in capsys.readouterr().out
    # gymnasium's checker makes one env per declared render mode and checks what render() returns
    check_env(gymnasium.make("SichuanMahjong-v0", render_mode="rgb_array").unwrapped)


def test_sb3_make_vec_env():
    """SB3's make_vec_env first tries render_mode="rgb_array" (some versions), then plain make."""
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    venv = env_util.make_vec_env("SichuanMahjong-v0", n_envs=2, seed=0)
    obs = venv.reset()
    assert obs.shape == (2, 83, 27)
    masks = np.stack(venv.env_method("action_masks"))
    obs, rewards, _, infos = venv.step(masks.argmax(1))
    assert obs.shape == (2, 83, 27) and rewards.shape == (2,)
    assert not any(i["illegal_action"] for i in infos)
    frames = venv.get_images()
    assert all(f is None or f.ndim == 3 for f in frames)
    venv.close()


def sichuan_env_gym(**kwargs):
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


def _first_legal(info):
    return int(np.flatnonzero(info["action_mask"])[0])


def test_any_integer_scalar_is_an_action():
    """sb3-contrib's model.predict returns array(55): a 0-d integer array is a valid action."""
    env = SingleSeatEnv()
    ref = SingleSeatEnv()
    (o1, i1), (o2, _) = env.reset(seed=4), ref.reset(seed=4)
    kinds = [np.array, np.int32, np.uint8, np.int64, int]
    for k in range(30):
        a = _first_legal(i1)
        o1, r1, d1, _, i1 = env.step(kinds[k % len(kinds)](a))
        o2, r2, d2, _, _ = ref.step(a)
        assert not i1["illegal_action"]
        assert np.array_equal(o1, o2) and (r1, d1) == (r2, d2)
        if d1:
            (o1, i1), _ = env.reset(), ref.reset()


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        (2.5, TypeError), (np.float64(3.0), TypeError), ("3", TypeError), (None, TypeError),
        (True, TypeError), (np.bool_(False), TypeError), (np.array([3]), TypeError),
        (88, IllegalActionError), (-1, IllegalActionError), (10**30, IllegalActionError),
    ],
)  # fmt: skip
def test_non_actions_raise_even_when_penalized(bad, exc):
    env = SingleSeatEnv(illegal_penalty=2.5)
    env.reset(seed=1)
    before = env.game.state.tobytes()
    with pytest.raises(exc):
        env.step(bad)
    assert env.game.state.tobytes() == before


@pytest.mark.parametrize(
    ("bad", "exc", "match"),
    [
        (2.5, TypeError, "integer"),
        ("3", TypeError, "integer"),
        (None, TypeError, "integer"),
        (True, TypeError, "integer"),
        (np.array([3]), TypeError, "integer"),
        (88, IllegalActionError, r"\[0, 88\), got 88"),
        (np.int64(-1), IllegalActionError, "got -1"),
    ],
)
def test_non_actions_raise_clear_errors(bad, exc, match):
    env = SingleSeatEnv(illegal_action="raise")
    env.reset(seed=1)
    before = env.game.state.tobytes()
    with pytest.raises(exc, match=match):
        env.step(bad)
    assert env.game.state.tobytes() == before


def test_illegal_action_messages_print_ints():
    env = SingleSeatEnv(illegal_action="raise")
    _, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(IllegalActionError) as err:
        env.step(np.array(illegal))
    text = str(err.value)
    assert f"action {illegal} (" in text and "array" not in text
    assert str(_first_legal(info)) in text  # the legal ids, as ints


def _hands(env, n, seed=None, actions=None):
    """Observations and rewards of ``n`` steps of the first-legal-action learner."""
    out = []
    obs, info = env.reset(seed=seed) if seed is not None else env.reset()
    for _ in range(n):
        obs, reward, done, _, info = env.step(_first_legal(info))
        out.append((obs.tobytes(), reward, done))
        if done:
            obs, info = env.reset()
    return out


@pytest.mark.parametrize(
    ("seed", "options", "exc"),
    [
        (2**64, None, ValueError),
        (-1, None, ValueError),
        (True, None, TypeError),
        (1.0, None, TypeError),
        ("7", None, TypeError),
        (5, "fast", TypeError),
        (5, [("a", 1)], TypeError),
    ],
)
def test_a_rejected_reset_changes_nothing(seed, options, exc):
    """The seed and options are checked before anything (np_random included) is touched."""
    env, ref = SingleSeatEnv(), SingleSeatEnv()
    _hands(env, 25, seed=11)
    _hands(ref, 25, seed=11)
    mid = env.game.state.tobytes()
    with pytest.raises(exc):
        env.reset(seed=seed, options=options)
    assert env.game.state.tobytes() == mid  # the hand in play is untouched too
    assert _hands(env, 60) == _hands(ref, 60)


def test_rejected_steps_change_nothing():
    env = SingleSeatEnv(illegal_action="raise")
    ref = SingleSeatEnv(illegal_action="raise")
    _, info = env.reset(seed=3)
    ref.reset(seed=3)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    for bad in (illegal, 88, 2.5, "x"):
        with pytest.raises((TypeError, ValueError)):
            env.step(bad)
    assert _hands(env, 40) == _hands(ref, 40)
    assert _hands(env, 40, seed=9) == _hands(ref, 40, seed=9)


def test_options_are_accepted():
    env, ref = SingleSeatEnv(), SingleSeatEnv()
    o1, _ = env.reset(seed=2, options={"anything": 1})
    o2, _ = ref.reset(seed=2)
    assert np.array_equal(o1, o2)


def test_seed_near_the_top_of_the_range():
    """The largest seed reseeds the opponents too (their seeds wrap around)."""
    env = SingleSeatEnv(opponents=("random", "heuristic", "random"))
    a = _hands(env, 20, seed=2**64 - 1)
    assert a == _hands(env, 20, seed=2**64 - 1)


def test_opponents_as_agent_objects():
    """Objects are used as they are (never fused); names and objects mix; the same play."""
    from sichuan_env.agents.registry import make_agent
    from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

    objects = SingleSeatEnv(opponents=(HeuristicAgent(), "value", make_agent("defensive")))
    names = SingleSeatEnv(opponents=("heuristic", "value", "defensive"))
    assert objects._codes is None and names._codes is not None
    assert isinstance(objects.opponents[0], HeuristicAgent)
    assert _hands(objects, 80, seed=6) == _hands(names, 80, seed=6)
    shared = make_agent("random", seed=1)
    env = SingleSeatEnv(opponents=[shared, shared, "heuristic"])
    assert env.opponents[0] is shared and env.opponents[1] is shared
    assert len(_hands(env, 30, seed=0)) == 30


def test_opponent_objects_are_checked():
    class NoAct:
        name = "no-act"
        obs_version = 1

    class BadVersion:
        name = "bad"
        obs_version = 12_345  # never registered (test_obs_registry registers 99 for its tests)

        def act_batch(self, obs, masks):
            return masks.argmax(1)

    with pytest.raises(TypeError, match="act_batch"):
        SingleSeatEnv(opponents=("heuristic", NoAct(), "heuristic"))
    with pytest.raises(ValueError, match="observation version"):
        SingleSeatEnv(opponents=("heuristic", BadVersion(), "heuristic"))
