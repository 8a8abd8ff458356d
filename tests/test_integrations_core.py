"""The AEC env, unmodified, in the RL libraries people use, as those libraries' docs show.

PettingZoo's own conformance tests, TorchRL's ``PettingZooWrapper`` (AEC:
``use_mask=True``) and Tianshou 2.0's ``PettingZooEnv`` with a masked random
multi-agent algorithm and a ``Collector``. Marked ``integrations`` (off by
default): ``pytest -m integrations tests/test_integrations_core.py``. A library
that is not installed skips its test.
"""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test

import sichuan_env

pytestmark = pytest.mark.integrations


@pytest.mark.parametrize("mode", ["raise", "penalize", "terminate"])
def test_pettingzoo_api_test(mode):
    api_test(sichuan_env.env(illegal_action=mode), num_cycles=300, verbose_progress=False)


def test_pettingzoo_render_test():
    render_test(sichuan_env.env)


def test_torchrl_pettingzoo_wrapper():
    pytest.importorskip("torchrl")
    import torch
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    with warnings.catch_warnings():  # TorchRL warns for any PettingZoo but the one it pins
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        env = PettingZooWrapper(env=sichuan_env.env(), use_mask=True, seed=0)
    assert not env.parallel  # an AEC env: one agent acts at a time
    check_env_specs(env, seed=0)
    # the default policy samples from the action spec, which follows the action mask
    td = env.rollout(400, break_when_any_done=True)
    assert td["next", "done"][-1].all() and td.batch_size[0] > 20
    acting = torch.stack([td[a, "mask"][:, 0] for a in env.possible_agents], dim=1)
    assert (acting.sum(dim=1) == 1).all()  # exactly one agent acts at each step
    for a in env.possible_agents:
        chosen = td[a, "action"][:, 0]
        legal = td[a, "action_mask"][:, 0].gather(1, chosen[:, None])[:, 0]
        assert legal[td[a, "mask"][:, 0]].all()  # every action taken was legal
        assert td["next", a, "info", "illegal_action"].sum() == 0
    rewards = torch.stack([td["next", a, "reward"].sum() for a in env.possible_agents])
    assert rewards.sum() == 0  # zero-sum points
    env.close()


def test_tianshou_collector_with_masked_random_policies():
    pytest.importorskip("tianshou")
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def get_env():
        return PettingZooEnv(sichuan_env.env())

    env = get_env()
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[
            MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
            for _ in env.agents
        ],
        env=env,
    )
    envs = DummyVectorEnv([get_env for _ in range(2)])
    envs.seed(0)
    collector = Collector(algorithm, envs)
    collector.reset()
    stats = collector.collect(n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes == 4
    assert (stats.lens > 20).all()
    assert np.asarray(stats.returns).shape == (4, 4)
    assert np.allclose(np.asarray(stats.returns).sum(axis=1), 0)  # zero-sum per hand
