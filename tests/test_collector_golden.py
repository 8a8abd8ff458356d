"""The PPO collector on the CPU gives exactly the rollouts of the collector before the device
path (commit fb745e2): same actions, log-probabilities, values, rewards and links."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from sichuan_env.train.policy import rollout

HERE = Path(__file__).parent / "data" / "collector"


def _maker():
    spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cpu_rollouts_equal_the_golden_ones():
    maker = _maker()
    got = maker.rollouts(rollout)
    want = np.load(HERE / "golden.npz")
    assert sorted(got) == sorted(want.files)
    assert len(want["actions0"]) > 100 and want["dones1"].any()  # real decisions, ended hands
    for key in want.files:
        assert got[key].shape == want[key].shape, key
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_the_collector_times_every_part():
    assert set(rollout.STAT_KEYS) >= {"t_env", "t_opp", "t_encode", "t_forward", "t_copy", "t_book"}


def test_device_sampling_stores_legal_actions_and_their_log_probabilities():
    import torch
    from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet, masked_logits

    from sichuan_env.envs.vector import VectorEnv

    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(aux=True)).eval()
    venv = VectorEnv(12, seed=2)
    coll = rollout.Collector(net, venv, [], 0.0, 0.0, 0.1, seed=3, device_sampling=True)
    buf = rollout.Buffer(12 * 40, net.config.public_rows, 0, aux=AUX_SIZE)
    coll.collect(40, buf)
    n = buf.n
    assert n > 200
    masks = torch.from_numpy(buf.masks[:n])
    assert (masks.gather(1, torch.from_numpy(buf.actions[:n])[:, None]) == 1).all()
    with torch.no_grad():
        obs = torch.from_numpy(buf.obs[:n])
        logits, value = net(obs, torch.from_numpy(buf.aux[:n]), masks, None)
        logp = torch.log_softmax(masked_logits(logits, masks), 1)
    want = logp.gather(1, torch.from_numpy(buf.actions[:n])[:, None]).squeeze(1).numpy()
    np.testing.assert_allclose(buf.logp[:n], want, atol=1e-5)
    np.testing.assert_allclose(buf.values[:n], value.numpy(), atol=1e-5)
    # the samples follow the policy: the mean log-probability of the sampled actions is
    # close to minus the policy's entropy at those states
    entropy = -(logp.exp() * logp.masked_fill(masks == 0, 0)).sum(1).mean().item()
    assert abs(float(buf.logp[:n].mean()) + entropy) < 0.15
