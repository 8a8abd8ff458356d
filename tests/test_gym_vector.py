"""The batched Gymnasium env (``make_vec("SichuanMahjong-v0")``): API, equivalence, autoreset."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from sichuan_env.agents.gym.env import SingleSeatEnv
from sichuan_env.agents.gym.vector import SingleSeatVectorEnv

import sichuan_env  # noqa: F401 - registers SichuanMahjong-v0 and its vector entry point
from sichuan_env import IllegalActionError, RuleConfig


def make(n, **kwargs):
    return gymnasium.make_vec("SichuanMahjong-v0", num_envs=n, **kwargs)


def first_legal(masks):
    return masks.argmax(axis=1)


def random_legal(rng, masks):
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


def test_make_vec_uses_the_batched_env_and_its_spaces():
    envs = make(3, obs_version=2, oracle=True)
    assert isinstance(envs, SingleSeatVectorEnv) and isinstance(envs, VectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.spec.id == "SichuanMahjong-v0" and envs.num_envs == 3
    single = SingleSeatEnv(obs_version=2, oracle=True)
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.observation_space.shape == (3, 299, 27)
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([88, 88, 88])
    obs, infos = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert set(infos) == {
        "action_mask", "_action_mask", "seat", "_seat", "illegal_action", "_illegal_action"
    }  # fmt: skip
    assert infos["action_mask"].shape == (3, 88) and infos["action_mask"].dtype == bool
    assert infos["seat"].dtype == np.int64 and infos["_seat"].all()
    obs, rewards, terminations, truncations, infos = envs.step(first_legal(envs.action_masks()))
    assert envs.observation_space.contains(obs)
    assert rewards.dtype == np.float64 and rewards.shape == (3,)
    assert terminations.dtype == bool and truncations.dtype == bool and not truncations.any()
    assert (envs.action_masks() == infos["action_mask"]).all()
    envs.close()
    assert envs.closed
    assert repr(envs) == "SingleSeatVectorEnv(SichuanMahjong-v0, num_envs=3)"


CONFIGS = [
    {},
    {"opponents": ("value", "defensive", "heuristic"), "rules": RuleConfig(exchange_three=True)},
    {"seat": 2, "reward_scale": 0.01, "illegal_penalty": 3.0},
    {"obs_version": 2, "oracle": True, "opponents": ("defensive",) * 3},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_same_trajectories_as_single_envs(kwargs):
    """Env i seeded s_i gives exactly what a SingleSeatEnv seeded s_i gives, action for action.

    The single envs are driven by hand with Gymnasium's NEXT_STEP autoreset: the
    step after a terminated one resets that env (its action ignored), reward 0.
    Some actions are illegal (penalized alike) and some hands end (records alike).
    """
    n = 5
    seeds = [3, 1000, 2**64 - 1, 7, 3]
    envs = make(n, **kwargs)
    singles = [SingleSeatEnv(**kwargs) for _ in range(n)]
    obs, infos = envs.reset(seed=seeds)
    for i, env in enumerate(singles):
        o, info = env.reset(seed=seeds[i])
        assert np.array_equal(obs[i], o) and infos["seat"][i] == info["seat"]
        assert np.array_equal(infos["action_mask"][i], info["action_mask"])
    rng = np.random.default_rng(0)
    pending = np.zeros(n, dtype=bool)
    ended = 0
    for t in range(500):
        actions = random_legal(rng, envs.action_masks())
        if t % 5 == 0:
            actions[t % n] = rng.integers(0, 88)  # often illegal
        obs, rewards, terms, truncs, infos = envs.step(actions)
        for i, env in enumerate(singles):
            if pending[i]:
                o, info = env.reset()
                r, d = 0.0, False
            else:
                o, r, d, _, info = env.step(int(actions[i]))
                if d:
                    assert envs.game(i).record() == env.game.record()
                    ended += 1
            assert np.array_equal(obs[i], o), (t, i)
            assert rewards[i] == r and terms[i] == d and not truncs[i]
            assert infos["seat"][i] == info["seat"]
            assert infos["illegal_action"][i] == info["illegal_action"]
            assert np.array_equal(infos["action_mask"][i], info["action_mask"])
        pending = terms.copy()
    assert ended >= 10


def test_same_as_gymnasiums_sync_vector_env():
    """The batched env and SyncVectorEnv over SingleSeatEnv agree on everything, infos included."""
    kwargs = {"opponents": ("heuristic", "value", "heuristic"), "seat": "rotate"}
    fast = make(4, **kwargs)
    slow = make(4, vectorization_mode="sync", **kwargs)
    assert isinstance(slow, SyncVectorEnv)
    assert fast.observation_space == slow.observation_space
    assert fast.action_space == slow.action_space
    assert data_equivalence(fast.reset(seed=21), slow.reset(seed=21), exact=True)
    rng = np.random.default_rng(5)
    for t in range(300):
        actions = random_legal(rng, fast.action_masks())
        if t % 9 == 0:
            actions[t % 4] = 87  # "pass": mostly illegal
        got, want = fast.step(actions), slow.step(actions)
        assert data_equivalence(got, want, exact=True), t
        if t == 150:  # a partial reset through options["reset_mask"], as Gymnasium defines it
            mask = np.array([True, False, False, True])
            got = fast.reset(seed=[5, None, None, 6], options={"reset_mask": mask})
            want = slow.reset(seed=[5, None, None, 6], options={"reset_mask": mask.copy()})
            assert data_equivalence(got, want, exact=True)


def test_autoreset_next_step():
    """The terminal step gives the final observation; the next one resets, ignoring its action."""
    envs = make(4, illegal_action="raise")
    obs, infos = envs.reset(seed=8)
    seat0 = infos["seat"].copy()
    while True:
        obs, _, terms, _, infos = envs.step(first_legal(envs.action_masks()))
        if terms.any():
            break
    i = int(np.flatnonzero(terms)[0])
    game = envs.game(i)
    assert game.is_over() and not infos["action_mask"][i].any()
    final = obs[i].copy()
    assert envs.action_masks()[i].all()  # the next step accepts anything there
    actions = first_legal(envs.action_masks())
    actions[i] = 999  # ignored, even with illegal_action="raise"
    obs2, rewards2, terms2, truncs2, infos2 = envs.step(actions)
    assert rewards2[i] == 0.0 and not terms2[i] and not truncs2[i]
    assert not infos2["illegal_action"][i] and infos2["action_mask"][i].any()
    assert infos2["seat"][i] == (seat0[i] + 1) % 4  # seat="rotate": the next hand, the next seat
    assert not np.array_equal(obs2[i], final)
    assert envs.game(i).to_act() == infos2["seat"][i] and not envs.game(i).is_over()
    with pytest.raises(IllegalActionError):  # once reset, the env checks its actions again
        bad = first_legal(envs.action_masks())
        bad[i] = int(np.flatnonzero(~infos2["action_mask"][i])[0])
        envs.step(bad)


def test_episode_statistics_wrapper_adds_up():
    """Gymnasium's RecordEpisodeStatistics (NEXT_STEP-aware) sums each hand to the final score."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    envs = RecordEpisodeStatistics(make(6, reward_scale=0.5))
    envs.reset(seed=1)
    done = 0
    while done < 12:
        _, _, terms, _, infos = envs.step(first_legal(envs.unwrapped.action_masks()))
        for i in np.flatnonzero(terms):
            score = envs.unwrapped.game(i).scores()[infos["seat"][i]]
            assert infos["episode"]["r"][i] == 0.5 * score
            done += 1


def test_illegal_actions_are_penalized_per_env():
    envs = make(4, illegal_penalty=2.0)
    obs, _ = envs.reset(seed=2)
    masks = envs.action_masks()
    states = [envs.game(i).state.tobytes() for i in range(4)]
    legal = first_legal(masks)
    actions = [int(legal[0]), int(legal[1]), int(np.flatnonzero(~masks[2])[0]), int(legal[3])]
    obs2, rewards, _, _, infos2 = envs.step(actions)
    assert infos2["illegal_action"].tolist() == [False, False, True, False]
    assert rewards[2] == -2.0
    assert np.array_equal(obs[2], obs2[2]) and envs.game(2).state.tobytes() == states[2]
    assert envs.game(0).state.tobytes() != states[0]
    # numpy integer scalars and 0-d arrays are action ids; floats, strings and
    # out-of-range integers are errors even when penalized, and nothing moves
    ok = [np.array(a) for a in first_legal(envs.action_masks())]
    assert not envs.step(ok)[4]["illegal_action"].any()
    before = envs.unwrapped._states.tobytes()
    good = first_legal(envs.action_masks())
    with pytest.raises(TypeError, match="dtype float64"):
        envs.step(good.astype(float))
    with pytest.raises(TypeError, match=r"envs \[1, 3\]"):
        envs.step([int(good[0]), 2.5, int(good[2]), "x"])
    with pytest.raises(IllegalActionError, match=r"envs \[0, 1, 2\].*out of range"):
        envs.step(np.array([88, -1, 2**40, 0], dtype=np.int64))
    assert envs.unwrapped._states.tobytes() == before


def test_raise_mode_rejects_the_whole_batch():
    envs = make(3, illegal_action="raise")
    ref = make(3, illegal_action="raise")
    envs.reset(seed=4)
    ref.reset(seed=4)
    masks = envs.action_masks()
    good = first_legal(masks)
    illegal = good.copy()
    illegal[1] = int(np.flatnonzero(~masks[1])[0])
    states = envs.unwrapped._states.tobytes()
    with pytest.raises(IllegalActionError, match=r"envs \[1\] \(actions \[\d+\]\)"):
        envs.step(illegal)
    with pytest.raises(IllegalActionError, match="envs \\[2\\]"):
        envs.step([good[0], good[1], 88])
    with pytest.raises(TypeError, match="envs \\[0\\]"):
        envs.step([2.5, good[1], good[2]])
    with pytest.raises(ValueError, match="shape"):
        envs.step(good[:2])
    with pytest.raises(ValueError, match="one per env"):
        envs.step([0, 1])
    assert envs.unwrapped._states.tobytes() == states
    for _ in range(60):  # nothing moved: the same trajectory as an env that never saw them
        a = first_legal(envs.action_masks())
        assert data_equivalence(envs.step(a), ref.step(a), exact=True)


@pytest.mark.parametrize(
    ("seed", "options", "exc"),
    [
        (2**64 - 2, None, ValueError),  # env 2 would get 2**64
        (-1, None, ValueError),
        (True, None, TypeError),
        (1.5, None, TypeError),
        ([1, 2], None, ValueError),
        ([1, 2, -3], None, ValueError),
        ([1, "2", 3], None, TypeError),
        ("123", None, TypeError),
        (np.zeros((3, 1), dtype=np.int64), None, ValueError),
        (None, "all", TypeError),
        (None, {"reset_mask": [True, True, True]}, TypeError),
        (None, {"reset_mask": np.ones(3, dtype=np.int8)}, TypeError),
        (None, {"reset_mask": np.ones(2, dtype=bool)}, ValueError),
        (None, {"reset_mask": np.zeros(3, dtype=bool)}, ValueError),
    ],
)
def test_a_rejected_reset_changes_nothing(seed, options, exc):
    envs, ref = make(3), make(3)
    for e in (envs, ref):
        e.reset(seed=30)
        for _ in range(20):
            e.step(first_legal(e.action_masks()))
    states = envs.unwrapped._states.tobytes()
    with pytest.raises(exc):
        envs.reset(seed=seed, options=options)
    assert envs.unwrapped._states.tobytes() == states
    assert data_equivalence(envs.reset(), ref.reset(), exact=True)
    for _ in range(40):
        a = first_legal(envs.action_masks())
        assert data_equivalence(envs.step(a), ref.step(a), exact=True)


def test_seeds_and_streams():
    envs = make(3)
    o1, _ = envs.reset(seed=np.uint64(10))
    o2, _ = envs.reset(seed=[10, 11, 12])
    o3, _ = envs.reset(seed=np.array([10, 11, 12], dtype=np.uint64))
    assert np.array_equal(o1, o2) and np.array_equal(o1, o3)
    a, _ = envs.reset()  # the streams continue: new hands
    assert not np.array_equal(a, o1)
    unseeded = make(2).reset()[0]
    assert unseeded.shape == (2, 83, 27)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num_envs": 0}, ValueError, "num_envs"),
        ({"num_envs": 2**21}, ValueError, "num_envs"),
        ({"num_envs": True}, TypeError, "num_envs"),
        ({"num_envs": 2.0}, TypeError, "num_envs"),
        ({"opponents": ("heuristic", "random", "heuristic")}, ValueError, "vectorization_mode"),
        ({"fused_opponents": False}, ValueError, "vectorization_mode"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
        ({"copy": "yes"}, TypeError, "copy"),
        ({"reward_scale": 10**30}, ValueError, "reward_scale"),
        ({"illegal_penalty": -1}, ValueError, "illegal_penalty"),
        ({"seat": 9}, ValueError, "seat"),
        ({"obs_version": 77}, ValueError, "observation version"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(exc, match=match):
        SingleSeatVectorEnv(**kwargs)


def test_opponent_objects_point_to_sync_mode():
    from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

    with pytest.raises(ValueError, match="vectorization_mode='sync'"):
        make(2, opponents=(HeuristicAgent(), "heuristic", "heuristic"))
    sync = make(2, vectorization_mode="sync", opponents=(HeuristicAgent(), "value", "heuristic"))
    obs, _ = sync.reset(seed=0)
    assert obs.shape == (2, 83, 27)


def test_order_copy_and_render():
    envs = SingleSeatVectorEnv(2, copy=False, render_mode="rgb_array")
    for call in (lambda: envs.step([0, 0]), envs.action_masks, envs.render, lambda: envs.game(0)):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    obs, _ = envs.reset(seed=0)
    obs2 = envs.step(first_legal(envs.action_masks()))[0]
    assert obs is obs2  # copy=False: the env's own buffer
    frames = envs.render()
    assert len(frames) == 2 and frames[0].ndim == 3 and frames[0].dtype == np.uint8
    text = SingleSeatVectorEnv(2, render_mode="ansi")
    text.reset(seed=0)
    assert all("legal:" in f for f in text.render())
    assert SingleSeatVectorEnv(1).render() is None
    with pytest.raises(ValueError, match="env index"):
        envs.game(2)
    with pytest.raises(TypeError, match="env index"):
        envs.game(0.0)
    with pytest.raises(RuntimeError, match="every env"):
        SingleSeatVectorEnv(2).reset(options={"reset_mask": np.array([True, False])})
