"""Registered where the ecosystem looks: PettingZoo's and Gymnasium's registries, their checkers."""

from __future__ import annotations

import gymnasium
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import sichuan_env
from sichuan_env import plugins, raw_env


@pytest.mark.skipif(not hasattr(pettingzoo, "register"), reason="PettingZoo < 1.27: no registry")
def test_pettingzoo_registry_makes_the_env_and_api_test_passes():
    assert plugins.PETTINGZOO_ID in pettingzoo.aec_registry
    env = pettingzoo.make("aec", "SichuanMahjong-v0", illegal_action="penalize")
    assert isinstance(env.unwrapped, raw_env) and env.unwrapped.illegal_action == "penalize"
    assert type(env) is type(sichuan_env.env())  # the same wrapper as sichuan_env.env()
    api_test(env, num_cycles=60, verbose_progress=False)


def test_registering_twice_or_without_a_registry_is_quiet(monkeypatch, recwarn):
    assert plugins.register_pettingzoo() == []  # registered on import already: no override
    assert plugins.register_gymnasium() == []
    monkeypatch.delattr(pettingzoo, "register", raising=False)  # an older PettingZoo
    assert plugins.register_pettingzoo() == []
    assert callable(sichuan_env.env)
    assert not [w for w in recwarn if "Overriding" in str(w.message)]


def test_gymnasium_registry_makes_both_envs_and_check_env_passes():
    spec = gymnasium.spec("SichuanMahjong-v0")
    assert spec.vector_entry_point == "sichuan_env.agents.gym.vector:SingleSeatVectorEnv"
    env = gymnasium.make("SichuanMahjong-v0")
    check_env(env.unwrapped, skip_render_check=True)
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=2)
    assert type(envs.unwrapped).__name__ == "SingleSeatVectorEnv"  # one numba call, not a Sync
    obs, _ = envs.reset(seed=0)
    assert obs in envs.observation_space
    envs.step(envs.action_masks().argmax(1))
