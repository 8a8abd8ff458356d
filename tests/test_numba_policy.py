"""A network's greedy action in numba (``sichuan_env.agents.nn.numba_policy``) is PyTorch's:
the logits agree, the actions agree, and networks numba cannot play are refused."""

import numpy as np
import pytest
import torch
from sichuan_env.agents.nn.numba_policy import export, net_action, net_logits, scratch
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent

from sichuan_env._jit import njit
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables

T = get_tables()


@njit
def _actions(states, weights, rules, flags, dist, bufs, out):
    obs, mask, aux, h0, h1, logits = bufs
    for i in range(states.shape[0]):
        out[i] = net_action(states[i], weights, rules, flags, obs, mask, dist, aux, h0, h1, logits)


def _states(n_steps=40, envs=32, seed=0):
    venv = VectorEnv(envs, seed=seed)
    obs, mask, _ = venv.reset()
    from sichuan_env.agents.nn.features import heuristic_choices

    states, obs_l, mask_l = [], [], []
    for _ in range(n_steps):
        states.append(venv.states)
        obs_l.append(obs[:, :83].copy())
        mask_l.append(mask.copy())
        obs, mask, *_ = venv.step(heuristic_choices(obs[:, :83], mask))
    return np.concatenate(states), np.concatenate(obs_l), np.concatenate(mask_l), venv.rules


@pytest.mark.parametrize("name", ["distill", "ppo"])
def test_numba_actions_are_the_agents(name):
    agent = TorchAgent.load(name)
    states, obs, masks, rules = _states()
    w = export(agent.net)
    out = np.zeros(len(states), np.int64)
    _actions(
        np.ascontiguousarray(states), w, rules.as_array(), T["FLAGS"], T["DIST"], scratch(w), out
    )
    want = agent.act_batch(obs, masks)
    assert len(states) > 1000 and (out == want).mean() > 0.995  # float32 sums in another order


def test_numba_logits_match_torch():
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=64, layers=2, aux=True, prior=True)).eval()
    with torch.no_grad():
        net.policy.weight.normal_()
    _, obs, masks, _ = _states(n_steps=8, envs=16, seed=1)
    w = export(net)
    *_, h0, h1, lg = scratch(w)
    from sichuan_env.agents.nn.features import aux_features

    auxes = aux_features(obs)
    with torch.no_grad():
        ref = net.logits(torch.from_numpy(obs), None, prior=torch.full((len(obs),), -1)).numpy()
    for i in range(0, len(obs), 7):
        net_logits(obs[i], auxes[i], w, masks[i], h0, h1, lg)
        legal = masks[i] == 1
        np.testing.assert_allclose(lg[legal], ref[i][legal], rtol=1e-4, atol=1e-4)
        assert np.isneginf(lg[~legal]).all()


def test_networks_numba_cannot_play_are_refused():
    with pytest.raises(ValueError, match="MLP"):
        export(PolicyNet(PolicyConfig(arch="conv", hidden=16, layers=1)))
