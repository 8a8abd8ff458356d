"""One contract for actions in every env and mode (sichuan_env.envs.action_check).

A wrong type or shape is a TypeError (an out-of-range integer a ValueError) whatever
``illegal_action`` says, and the rejected call changes nothing; penalize / terminate /
raise apply only to integer ids that are not legal now.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from hostile import rejects

import sichuan_env
from sichuan_env import IllegalActionError
from sichuan_env.envs.action_check import ActionTypeError, action_id, action_ids
from sichuan_env.envs.vector import VectorEnv

WRONG_TYPES = ["discard 5p", 2.0, True, None, [2], np.float32(1), np.array([2]), np.bool_(True)]
OUT_OF_RANGE = [88, -1, np.int64(200), 10**30]


@pytest.mark.parametrize("bad", WRONG_TYPES)
def test_the_contract_itself(bad):
    with pytest.raises(TypeError, match="who: an action id is an integer"):
        action_id(bad, "who")
    with pytest.raises(TypeError, match=r"envs \[1\]"):
        action_ids([0, bad, 0], 3)
    assert action_id(np.array(5), "who") == 5 and action_id(np.int8(3), "who") == 3


def test_batches_of_the_wrong_dtype_or_range():
    for arr in (np.zeros(3), np.zeros(3, dtype=bool), np.array(["a"] * 3), np.zeros(3, np.float32)):
        with pytest.raises(TypeError, match="dtype"):
            action_ids(arr, 3)
    with pytest.raises(ValueError, match="shape"):
        action_ids(np.zeros((3, 1), dtype=np.int64), 3)
    with pytest.raises(IllegalActionError, match=r"envs \[0, 2\].*\[88, -1\]"):
        action_ids(np.array([88, 5, -1]), 3)
    skip = np.array([True, False, False])
    assert action_ids([10**30, 5, 6], 3, skip=skip).tolist() == [0, 5, 6]
    with pytest.raises(TypeError):  # types are checked even where the action is ignored
        action_ids(["x", 5, 6], 3, skip=skip)
    assert issubclass(ActionTypeError, TypeError) and issubclass(ActionTypeError, ValueError)


@pytest.mark.parametrize("mode", ["raise", "penalize", "terminate"])
def test_aec_env(mode):
    env = sichuan_env.env(illegal_action=mode)
    env.reset(seed=3)
    for bad in WRONG_TYPES:
        rejects(env, lambda b=bad: env.step(b), TypeError, "player_")
    for bad in OUT_OF_RANGE:
        rejects(env, lambda b=bad: env.step(b), IllegalActionError, "player_")
    mask = env.last()[0]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    if mode == "raise":
        rejects(env, lambda: env.step(illegal), IllegalActionError, "not legal")
    else:
        env.step(illegal)
        agent = env.agent_selection
        assert env.infos[agent]["illegal_action"] and env.rewards[agent] == -1.0
        assert all(env.terminations.values()) == (mode == "terminate")


@pytest.mark.parametrize("mode", ["raise", "penalize"])
def test_gym_single_seat_env(mode):
    env = gymnasium.make("SichuanMahjong-v0", illegal_action=mode).unwrapped
    _, info = env.reset(seed=3)
    for bad in WRONG_TYPES:
        before = env.game.state.tobytes()
        with pytest.raises(TypeError, match=r"SingleSeatEnv\.step"):
            env.step(bad)
        assert env.game.state.tobytes() == before
    for bad in OUT_OF_RANGE:
        with pytest.raises(IllegalActionError, match=r"\[0, 88\)"):
            env.step(bad)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    if mode == "raise":
        with pytest.raises(IllegalActionError, match="not legal"):
            env.step(illegal)
    else:
        assert env.step(illegal)[4]["illegal_action"]


@pytest.mark.parametrize("mode", ["raise", "penalize"])
def test_gym_vector_env(mode):
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=3, illegal_action=mode)
    envs.reset(seed=3)
    good = envs.action_masks().argmax(1)
    before = envs.unwrapped._states.tobytes()
    for bad in WRONG_TYPES:
        with pytest.raises(TypeError, match=r"envs \[1\]"):
            envs.step([int(good[0]), bad, int(good[2])])
    for arr in (good.astype(float), good.astype(np.float32), good.astype(bool)):
        with pytest.raises(TypeError, match="dtype"):
            envs.step(arr)
    with pytest.raises(IllegalActionError, match="out of range"):
        envs.step(np.array([good[0], 88, good[2]]))
    assert envs.unwrapped._states.tobytes() == before
    illegal = good.copy()
    illegal[1] = int(np.flatnonzero(~envs.action_masks()[1])[0])
    if mode == "raise":
        with pytest.raises(IllegalActionError, match="illegal actions in envs"):
            envs.step(illegal)
        assert envs.unwrapped._states.tobytes() == before
    else:
        assert envs.step(illegal)[4]["illegal_action"].tolist() == [False, True, False]


def test_vector_env():
    venv = VectorEnv(3, seed=3)
    _, mask, _ = venv.reset()
    good = mask.argmax(1)
    for bad in WRONG_TYPES:
        rejects(venv, lambda b=bad: venv.step([int(good[0]), b, int(good[2])]), TypeError)
    for arr in (good.astype(float), good.astype(np.float32), good.astype(bool)):
        rejects(venv, lambda a=arr: venv.step(a), TypeError)
    rejects(venv, lambda: venv.step(np.array([good[0], 88, good[2]])), IllegalActionError)
    illegal = good.copy()
    illegal[1] = int(np.flatnonzero(mask[1] == 0)[0])
    rejects(venv, lambda: venv.step(illegal), IllegalActionError, "illegal")
