"""Agents under hostile input: bad arrays are rejected at the facade, and whatever the
observation says, the kernel answers an action the mask allows (never a crash, never -1).

Inputs that used to segfault run in a subprocess first, so a regression fails one test
instead of killing the whole run.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sichuan_env.agents import BaseAgent, HeuristicAgent, RandomAgent
from sichuan_env.agents.rule_based.heuristic import OBS_MIN_ROWS, decide

from sichuan_env.encoding import observation as O
from sichuan_env.engine.actions import ACTION_SPACE, KONG, PONG, SELF_KONG
from sichuan_env.kernels.tables import get_tables

ROWS = O.obs_rows(1, False)
ORACLE_ROWS = O.obs_rows(1, True)
AGENTS = {"heuristic": HeuristicAgent, "random": lambda: RandomAgent(0)}


def _obs(n=None, rows=ROWS, dtype=np.uint8):
    shape = (rows, 27) if n is None else (n, rows, 27)
    return np.zeros(shape, dtype=dtype)


def _mask(*legal, n=None, dtype=np.int8):
    m = np.zeros(ACTION_SPACE, dtype=dtype)
    m[list(legal)] = 1
    return m if n is None else np.tile(m, (n, 1))


def test_the_reported_segfault_is_gone_in_a_subprocess():
    code = textwrap.dedent(
        """
        import numpy as np
        from sichuan_env.agents import HeuristicAgent
        h = HeuristicAgent()
        out = []
        out.append(h.act(np.zeros((83, 27), np.uint8), np.eye(88, dtype=np.int8)[84]))
        out.append(h.act(np.zeros((83, 27), np.uint8), np.eye(88, dtype=np.int8)[85]))
        out.append(int(h.act_batch(np.zeros((2, 83, 27), np.uint8), np.eye(88, dtype=np.int8)[[0, 60]])[1]))
        print(out)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[84, 85, 60]"


SINGLE_CASES = [
    # (obs, mask, words the ValueError must contain)
    (_obs(), np.zeros(ACTION_SPACE, np.int8), ["mask", "no legal action"]),
    (_obs(), np.ones(87, np.int8), ["mask", "shape", "(88,)"]),
    (_obs(), np.ones(89, np.int8), ["mask", "shape"]),
    (_obs(), np.ones((1, 88), np.int8), ["mask", "shape"]),
    (_obs(), np.ones(88, np.float32), ["mask", "dtype"]),
    (_obs(), np.full(88, 2, np.int64), ["mask", "0 or 1"]),
    (_obs(), np.full(88, -1, np.int8), ["mask", "0 or 1"]),
    (_obs(), "hu", ["mask", "numpy array"]),
    (_obs(), None, ["mask", "numpy array"]),
    (_obs(rows=80), _mask(0), ["obs", "shape", "83"]),
    (_obs(rows=84), _mask(0), ["obs", "shape"]),
    (np.zeros((83, 26), np.uint8), _mask(0), ["obs", "shape"]),
    (_obs(n=1), _mask(0), ["obs", "shape"]),
    (_obs(dtype=np.float64), _mask(0), ["obs", "dtype"]),
    (np.full((83, 27), 2, np.uint8), _mask(0), ["obs", "0 or 1"]),
    (np.full((83, 27), -1, np.int16), _mask(0), ["obs", "0 or 1"]),
    (None, _mask(0), ["obs", "numpy array"]),
]


@pytest.mark.parametrize("name", sorted(AGENTS))
@pytest.mark.parametrize("case", range(len(SINGLE_CASES)))
def test_act_rejects_bad_arrays_and_changes_nothing(name, case):
    agent = AGENTS[name]()
    obs, mask, words = SINGLE_CASES[case]
    copies = [None if x is None else np.array(x, copy=True) for x in (obs, mask)]
    rng_before = agent.rng.bit_generator.state if name == "random" else None
    with pytest.raises(ValueError) as err:
        agent.act(obs, mask)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    for before, after in zip(copies, (obs, mask), strict=True):
        if before is not None and isinstance(after, np.ndarray):
            assert np.array_equal(before, after)
    if name == "random":
        assert agent.rng.bit_generator.state == rng_before


BATCH_CASES = [
    (_obs(n=3), np.array([_mask(1), _mask(), _mask(2)]), ["masks row 1", "no legal action"]),
    (_obs(n=3), _mask(0, n=2), ["3 rows", "2"]),
    (_obs(n=2), _mask(0), ["masks", "shape", "(N, 88)"]),
    (_obs(), _mask(0, n=1), ["obs", "shape", "(N, 83, 27)"]),
    (_obs(n=2), np.array([_mask(0), _mask(0, dtype=np.int8) * 3]), ["masks", "row 1", "0 or 1"]),
    (
        np.stack([_obs(), np.full((83, 27), 7, np.uint8)]),
        _mask(0, n=2),
        ["obs", "row 1", "0 or 1"],
    ),
]


@pytest.mark.parametrize("name", sorted(AGENTS))
@pytest.mark.parametrize("case", range(len(BATCH_CASES)))
def test_act_batch_rejects_bad_arrays_naming_the_row(name, case):
    agent = AGENTS[name]()
    obs, masks, words = BATCH_CASES[case]
    copies = (obs.copy(), masks.copy())
    with pytest.raises(ValueError) as err:
        agent.act_batch(obs, masks)
    for word in words:
        assert word in str(err.value), (word, str(err.value))
    assert np.array_equal(copies[0], obs) and np.array_equal(copies[1], masks)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_other_legal_inputs_are_accepted(name):
    agent = AGENTS[name]()
    # bool and wider integer dtypes, the oracle view, lists, an empty batch
    assert agent.act(_obs(dtype=np.bool_), _mask(3, dtype=np.bool_)) == 3
    assert agent.act(_obs(rows=ORACLE_ROWS, dtype=np.int64), _mask(5, dtype=np.int32)) == 5
    assert agent.act(_obs().tolist(), _mask(7).tolist()) == 7
    empty = agent.act_batch(_obs(n=0), _mask(0, n=0))
    assert empty.shape == (0,) and empty.dtype == np.int64


def test_random_agent_seeds():
    a, b = RandomAgent(5), RandomAgent(5)
    obs, masks = _obs(n=50), _mask(*range(0, 88, 3), n=50)
    assert np.array_equal(a.act_batch(obs, masks), b.act_batch(obs, masks))
    a.reset(9)
    b.reset(9)
    assert [a.act(obs[0], masks[0]) for _ in range(20)] == [
        b.act(obs[0], masks[0]) for _ in range(20)
    ]
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError, match="seed"):
            RandomAgent(bad)
        with pytest.raises(ValueError, match="seed"):
            a.reset(bad)


def test_kernel_is_safe_without_the_facade():
    # decide itself: short planes, a short mask and an all-zero mask give -1, never a read
    # out of bounds; huge plane values still give legal actions
    dist = get_tables()["DIST"]
    assert decide(np.zeros((OBS_MIN_ROWS - 1, 27), np.uint8), _mask(0), dist) == -1
    assert decide(_obs(), np.ones(5, np.int8), dist) == -1
    assert decide(_obs(), _mask(), dist) == -1
    full = np.full((ROWS, 27), 255, np.uint8)
    for a in (PONG, KONG, SELF_KONG + 4, 0, 26):
        assert decide(full, _mask(a), dist) == a
        assert decide(_obs(), _mask(a), dist) == a


def _random_pair(rng, density, n_legal, rows):
    obs = (rng.random((rows, 27)) < density).astype(np.uint8)
    mask = np.zeros(ACTION_SPACE, np.int8)
    mask[rng.choice(ACTION_SPACE, size=n_legal, replace=False)] = 1
    return obs, mask


def test_fuzz_in_a_subprocess():
    # a thousand random pairs per agent, single and batched, where a crash cannot kill pytest
    code = textwrap.dedent(
        """
        import numpy as np
        from sichuan_env.agents import HeuristicAgent, RandomAgent
        rng = np.random.default_rng(0)
        for agent in (HeuristicAgent(), RandomAgent(1)):
            obs = (rng.random((1000, 83, 27)) < rng.random((1000, 1, 1))).astype(np.uint8)
            masks = (rng.random((1000, 88)) < rng.random((1000, 1)) ** 3).astype(np.int8)
            masks[np.arange(1000), rng.integers(0, 88, 1000)] = 1
            acts = agent.act_batch(obs, masks)
            assert masks[np.arange(1000), acts].all()
            for i in range(200):
                assert masks[i, agent.act(obs[i], masks[i])]
        print("ok")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@settings(max_examples=300)
@given(
    seed=st.integers(0, 2**32 - 1),
    density=st.sampled_from([0.0, 0.02, 0.1, 0.5, 0.9, 1.0]),
    n_legal=st.integers(1, ACTION_SPACE),
    oracle=st.booleans(),
    name=st.sampled_from(sorted(AGENTS)),
)
def test_fuzz_any_planes_any_mask_gives_a_legal_action(seed, density, n_legal, oracle, name):
    rng = np.random.default_rng(seed)
    rows = ORACLE_ROWS if oracle else ROWS
    obs, mask = _random_pair(rng, density, min(n_legal, rng.integers(1, 6)), rows)
    agent = AGENTS[name]()
    a = agent.act(obs, mask)
    assert type(a) is int and 0 <= a < ACTION_SPACE and mask[a] == 1
    obs2, mask2 = _random_pair(rng, density, n_legal, rows)
    acts = agent.act_batch(np.stack([obs, obs2]), np.stack([mask, mask2]))
    assert mask[acts[0]] == 1 and mask2[acts[1]] == 1


def test_a_buggy_agent_cannot_hand_out_an_illegal_action():
    class OffByOne(BaseAgent):
        name = "off-by-one"

        def _act_batch(self, obs, masks):
            return masks.argmax(axis=1) + 1

    class WrongShape(BaseAgent):
        name = "wrong-shape"

        def _act_batch(self, obs, masks):
            return np.zeros((len(masks), 2), np.int64)

    with pytest.raises(RuntimeError, match="chose action 4"):
        OffByOne().act(_obs(), _mask(3))
    with pytest.raises(RuntimeError, match="row 1"):
        OffByOne().act_batch(_obs(n=2), np.array([_mask(3, 4), _mask(87)]))
    with pytest.raises(RuntimeError, match="shape"):
        WrongShape().act_batch(_obs(n=2), _mask(0, n=2))
    assert OffByOne().act_batch(_obs(n=1), _mask(3, 4)[None]).tolist() == [4]


def test_wrong_types_are_type_errors_too():
    h = HeuristicAgent()
    for obs, mask in ((None, _mask(0)), (_obs(), "hu"), (_obs(dtype=np.float32), _mask(0))):
        with pytest.raises(TypeError):
            h.act(obs, mask)
    with pytest.raises(TypeError):
        RandomAgent("3")
