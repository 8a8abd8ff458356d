"""Observation versions as a registry: envs dispatch on the version, and can re-encode in another."""

import numba
import numpy as np
import pytest

import sichuan_env
from sichuan_env.encoding import observation as O
from sichuan_env.encoding.registry import ObsVersion, get, register, versions
from sichuan_env.envs.vector import VectorEnv

TEST_VERSION = 99


@numba.njit
def _encode_test(st, me, oracle, rules, out):
    """A tiny test version: own hand (count >= 1..4), the phase one-hot, and (oracle) the next hand."""
    out[:] = 0
    for t in range(27):
        for k in range(4):
            out[k, t] = 1 if st.hands[me, t] > k else 0
    out[4, st.phase] = 1
    if oracle:
        nxt = (me + 1) % 4
        for t in range(27):
            out[5, t] = 1 if st.hands[nxt, t] > 0 else 0


@numba.njit
def _encode_test_at(states, i, me, oracle, rules, out):
    _encode_test(states[i], me, oracle, rules, out)


@numba.njit(parallel=True)
def _encode_test_batch(states, seats, oracle, rules, obs):
    for i in numba.prange(states.shape[0]):
        seats[i] = states[i].to_act
        _encode_test(states[i], states[i].to_act, oracle, rules, obs[i])


register(
    ObsVersion(
        TEST_VERSION,
        blocks=(("hand", 4), ("phase", 1)),
        oracle_blocks=(("next_hand", 1),),
        encode_at=_encode_test_at,
        encode_batch=_encode_test_batch,
    ),
    replace=True,
)


def test_registry_lookup_and_layout():
    assert 1 in versions() and TEST_VERSION in versions()
    assert get(1).shape() == (83, 27) and get(1).shape(oracle=True) == (150, 27)
    assert O.obs_rows(TEST_VERSION) == 5 and O.obs_rows(TEST_VERSION, oracle=True) == 6
    assert O.block_offsets(TEST_VERSION, oracle=True) == {
        "hand": (0, 4),
        "phase": (4, 1),
        "next_hand": (5, 1),
    }
    offsets = O.block_offsets(1, oracle=True)
    assert offsets["hand"] == (O.HAND, 4) and offsets["wall_order"] == (O.WALL_ORDER, 55)


def test_registry_rejects_bad_versions():
    for bad in (0, 100, "1", 1.0, True, None):
        with pytest.raises(ValueError, match="unknown observation version"):
            get(bad)
    spec = get(TEST_VERSION)
    with pytest.raises(ValueError, match="registered already"):
        register(spec)
    with pytest.raises(TypeError, match="ObsVersion"):
        register({"version": 5})
    with pytest.raises(ValueError, match="unique"):
        register(ObsVersion(98, (("a", 1), ("a", 2)), (), spec.encode_at, spec.encode_batch))
    with pytest.raises(ValueError, match="integer >= 1"):
        register(ObsVersion(0, (("a", 1),), (), spec.encode_at, spec.encode_batch))
    assert 98 not in versions() and 0 not in versions()


def test_the_aec_env_dispatches_on_its_version():
    env = sichuan_env.raw_env(obs_version=TEST_VERSION, oracle=True)
    env.reset(seed=3)
    space = env.observation_space("player_0")["observation"]
    assert space.shape == (6, 27)
    obs = env.observe("player_2")["observation"]
    assert space.contains(obs)
    hand = env.game.state["hands"][2]
    assert np.array_equal(obs[:4].sum(axis=0), hand)
    assert obs[4, env.game.state["phase"]] == 1
    # the same table seen in v1: the hand rows agree
    v1 = env.observe_as("player_2", 1)["observation"]
    assert v1.shape == (83, 27) and np.array_equal(v1[O.HAND : O.HAND + 4], obs[:4])
    with pytest.raises(ValueError, match="unknown observation version"):
        env.observe_as("player_2", 7)


def test_vector_env_dispatches_and_re_encodes():
    a = VectorEnv(8, obs_version=TEST_VERSION, seed=5)
    b = VectorEnv(8, obs_version=1, seed=5)
    obs_a, mask_a, seat_a = a.reset()
    obs_b, mask_b, seat_b = b.reset()
    assert obs_a.shape == (8, 5, 27) and obs_b.shape == (8, 83, 27)
    rng = np.random.default_rng(0)
    for _ in range(40):
        actions = (rng.random(mask_a.shape) * mask_a).argmax(axis=1)
        obs_a, mask_a, seat_a, *_ = a.step(actions)
        obs_b, mask_b, seat_b, *_ = b.step(actions)
        assert np.array_equal(mask_a, mask_b) and np.array_equal(seat_a, seat_b)
        assert np.array_equal(a.observe(1), obs_b)
        assert np.array_equal(b.observe(TEST_VERSION), obs_a)
    assert a.observe(TEST_VERSION, oracle=True).shape == (8, 6, 27)
    assert b.observe(oracle=True).shape == (8, 150, 27)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("oracle", [False, True])
def test_encode_many_equals_encode_at_and_its_fallback(version, oracle):
    import dataclasses

    from sichuan_env.rules.config import kernel_rules

    venv = VectorEnv(24, seed=7, obs_version=version)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):  # hands under way: melds, discards, some won seats
        _, mask, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    states, rules = venv.states, kernel_rules(venv.rules)
    spec = get(version)
    assert spec.encode_rows is not None
    idx = rng.integers(0, 24, 60)
    seats = rng.integers(0, 4, 60)
    want = np.zeros((60, *spec.shape(oracle)), np.uint8)
    for j in range(60):
        spec.encode_at(states, int(idx[j]), int(seats[j]), oracle, rules, want[j])
    assert want.any(axis=(1, 2)).all()
    got = np.full_like(want, 7)
    spec.encode_many(states, idx, seats, oracle, rules, got)
    np.testing.assert_array_equal(got, want)
    bare = dataclasses.replace(spec, encode_rows=None)  # a version without the batched writer
    got2 = np.full_like(want, 7)
    bare.encode_many(states, idx, seats, oracle, rules, got2)
    np.testing.assert_array_equal(got2, want)


def test_encode_many_refuses_bad_arguments():
    from sichuan_env.rules.config import kernel_rules

    venv = VectorEnv(4, seed=1)
    venv.reset()
    states, rules, spec = venv.states, kernel_rules(venv.rules), get(1)
    ok = np.zeros((2, *spec.shape()), np.uint8)
    cases = {
        "index out of range": (np.array([0, 4]), np.array([0, 1]), ok),
        "negative index": (np.array([-1, 0]), np.array([0, 1]), ok),
        "seat 4": (np.array([0, 1]), np.array([0, 4]), ok),
        "lengths differ": (np.array([0, 1]), np.array([0]), ok),
        "2-D idx": (np.array([[0, 1]]), np.array([[0, 1]]), ok),
        "wrong out shape": (
            np.array([0, 1]),
            np.array([0, 1]),
            np.zeros((3, *spec.shape()), np.uint8),
        ),
        "wrong out dtype": (
            np.array([0, 1]),
            np.array([0, 1]),
            np.zeros((2, *spec.shape()), np.int8),
        ),
        "oracle rows missing": (np.array([0, 1]), np.array([0, 1]), ok),
    }
    for name, (idx, seats, out) in cases.items():
        with pytest.raises(ValueError):
            spec.encode_many(states, idx, seats, name == "oracle rows missing", rules, out)
