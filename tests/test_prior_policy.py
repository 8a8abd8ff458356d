"""Prior networks (the heuristic's choice added to the logits) and bfloat16 PPO."""

import argparse

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents.nn.policy import (
    PolicyConfig,
    PolicyNet,
    heuristic_choices,
    masked_logits,
)
from sichuan_env.agents.nn.torch_agent import TorchAgent, load_network, save_checkpoint
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.train.policy import bc, ppo

from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv

META = {"rules": RuleConfig().to_dict(), "method": "test", "command": "pytest", "commit": "x"}


def _states(n=64, steps=60, seed=3):
    """Observations and masks of real decisions (a heuristic plays every seat)."""
    venv = VectorEnv(n, seed=seed)
    obs, mask, _ = venv.reset()
    heur = HeuristicAgent()
    rows_o, rows_m = [], []
    for _ in range(steps):
        rows_o.append(obs.copy())
        rows_m.append(mask.copy())
        obs, mask, _, _, _, _ = venv.step(heur.act_batch(obs, mask))
    o, m = np.concatenate(rows_o), np.concatenate(rows_m)
    free = m.sum(1) > 1
    return o[free], m[free]


def _prior_net(gain=0.0, **kw):
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1, aux=True, prior=True, **kw))
    with torch.no_grad():
        net.prior_gain.fill_(gain)
    return net


def test_heuristic_choices_are_the_heuristic_s_actions():
    obs, masks = _states()
    assert len(obs) > 1000
    np.testing.assert_array_equal(heuristic_choices(obs, masks), HeuristicAgent().act_batch(obs, masks))  # fmt: skip
    masks0 = masks[:3].copy()
    masks0[1] = 0
    assert heuristic_choices(obs[:3], masks0)[1] == -1  # no legal action: no choice
    with pytest.raises(ValueError, match="must be"):
        heuristic_choices(obs[:3], masks[:2])


def test_a_large_prior_gain_plays_exactly_the_heuristic():
    obs, masks = _states()
    agent = TorchAgent(_prior_net(gain=1000.0), seed=0)
    np.testing.assert_array_equal(agent.act_batch(obs, masks), HeuristicAgent().act_batch(obs, masks))  # fmt: skip
    # gain 0: the logits are the plain network's, which differ from the heuristic somewhere
    plain = TorchAgent(_prior_net(gain=0.0), seed=0).act_batch(obs, masks)
    assert (plain != HeuristicAgent().act_batch(obs, masks)).any()
    assert masks[np.arange(len(masks)), plain].all()


def test_the_prior_needs_the_mask_or_the_choices():
    obs, masks = _states(n=8, steps=20)
    net = _prior_net(gain=2.0)
    o, m = torch.from_numpy(obs), torch.from_numpy(masks)
    with pytest.raises(ValueError, match="pass mask"):
        net.logits(o)
    with torch.no_grad():
        by_mask = net.logits(o, mask=m)
        by_prior = net.logits(o, prior=net.prior_of(o, m))
        value = net.state_value(o)
    assert torch.equal(by_mask, by_prior)
    assert torch.equal(value, net(o, mask=m)[1])  # the value does not read the prior
    hot = torch.zeros_like(by_mask)
    hot[torch.arange(len(o)), net.prior_of(o, m)] = 2.0
    torch.testing.assert_close(by_mask - hot, net.policy(net._features(o, None)))


def test_prior_config_is_validated_and_round_trips(tmp_path):
    with pytest.raises(ValueError, match="obs_version must be 1"):
        PolicyConfig(prior=True, obs_version=2)
    with pytest.raises(ValueError, match="must be a bool"):
        PolicyConfig(prior=1)
    old = PolicyConfig().to_dict()
    del old["prior"]  # checkpoints written before the field: no prior
    assert PolicyConfig.from_dict(old).prior is False
    net = _prior_net(gain=3.5, oracle_critic=True)
    path = save_checkpoint(tmp_path / "p.pt", net, {**META, "wall_clock_s": 1.0})
    loaded, _ = load_network(path)
    assert loaded.config.prior and loaded.prior_gain.item() == 3.5
    obs, masks = _states(n=4, steps=20)
    o, m = torch.from_numpy(obs), torch.from_numpy(masks)
    with torch.no_grad():
        assert torch.equal(net.logits(o, mask=m), loaded.logits(o, mask=m))


def test_ppo_init_adds_a_prior_to_a_plain_checkpoint(tmp_path):
    torch.manual_seed(0)
    plain = PolicyNet(PolicyConfig(hidden=32, layers=1, aux=True))
    path = save_checkpoint(tmp_path / "plain.pt", plain, {**META, "wall_clock_s": 1.0})
    args = ppo.build_parser().parse_args(["--init", str(path), "--prior", "--oracle-critic"])
    net = ppo.initial_net(args)
    assert net.config.prior and net.config.oracle_critic and net.prior_gain.item() == 0.0
    assert torch.equal(net.policy.weight, plain.policy.weight)
    args = ppo.build_parser().parse_args(["--init", str(path), "--prior", "--prior-gain", "2.5"])
    assert ppo.initial_net(args).prior_gain.item() == 2.5
    with pytest.raises(ValueError, match="no prior"):
        ppo.initial_net(ppo.build_parser().parse_args(["--init", str(path), "--prior-gain", "2"]))


def test_ppo_kl_reference_gain_is_set_and_checked(tmp_path):
    net = _prior_net(gain=7.0)
    path = save_checkpoint(tmp_path / "p.pt", net, {**META, "wall_clock_s": 1.0})
    plain = save_checkpoint(tmp_path / "q.pt", PolicyNet(PolicyConfig(hidden=32, layers=1)), {**META, "wall_clock_s": 1.0})  # fmt: skip
    run = ["--run", str(tmp_path / "run"), "--envs", "8", "--steps", "4", "--iterations", "1"]
    run += ["--threads", "1", "--quiet", "--eval-every", "0", "--init", str(path)]
    ppo.main([*run, "--kl-ref", str(path), "--kl-ref-gain", "3"])
    rows = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(rows) == 1
    with pytest.raises(SystemExit):  # a reference without a prior
        ppo.main([*run, "--kl-ref", str(plain), "--kl-ref-gain", "3"])
    with pytest.raises(SystemExit):  # a gain without a reference
        ppo.main([*run, "--kl-ref-gain", "3"])


def test_bc_through_the_prior_gain_alone_reaches_the_heuristic_on_new_hands():
    obs, masks = _states(n=32, steps=60, seed=5)
    new_obs, new_masks = _states(n=32, steps=60, seed=9)  # held out: other deals
    heur = HeuristicAgent()
    train = (obs, masks, heur.act_batch(obs, masks))
    held = (new_obs, new_masks, heur.act_batch(new_obs, new_masks))
    net = _prior_net(gain=0.0)
    for name, q in net.named_parameters():
        q.requires_grad_(name == "prior_gain")  # only the gradient through the prior can help
    opt = torch.optim.Adam([net.prior_gain], lr=0.1)
    _, acc0 = bc.evaluate(net, held)
    bc.fit_chunk(net, opt, train, 128, 4, np.random.default_rng(0))
    _, acc = bc.evaluate(net, held)
    assert acc0 < 0.5 and acc > 0.99 and net.prior_gain.item() > 2.0, (acc0, acc)


def _args(**kw):
    base = {
        "gamma": 1.0, "lam": 0.95, "epochs": 2, "minibatch": 256, "clip": 0.2, "ent_coef": 0.01,
        "vf_coef": 0.5, "kl_coef": 0.1, "max_grad_norm": 0.5, "bf16": False,
    }  # fmt: skip
    return argparse.Namespace(**{**base, **kw})


@pytest.mark.parametrize("bf16", [False, True])
def test_ppo_update_of_a_prior_net_stores_the_choices_and_trains_the_gain(bf16):
    net = _prior_net(gain=1.0, oracle_critic=True)
    ref = _prior_net(gain=5.0)
    venv = VectorEnv(32, seed=2, oracle=True)
    coll = ppo.Collector(net, venv, [("heuristic", HeuristicAgent())], 0.5, 1.0, 0.125, seed=0, bf16=bf16)  # fmt: skip
    buf = ppo.Buffer(32 * 100, 83, 150, net.aux_of(torch.zeros(1, 83, 27, dtype=torch.uint8)).shape[1])  # fmt: skip
    coll.collect(100, buf)
    n = buf.n
    assert n > 500
    np.testing.assert_array_equal(buf.prior[:n], heuristic_choices(buf.obs[:n], buf.masks[:n]))
    assert np.isfinite(buf.logp[:n]).all() and np.isfinite(buf.values[:n]).all()
    assert buf.masks[np.arange(n), buf.actions[:n]].all()
    before = net.prior_gain.item()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    stats = ppo.ppo_update(net, opt, buf, _args(bf16=bf16), ref, True, np.random.default_rng(0))
    assert all(np.isfinite(v) for v in stats.values()), stats
    assert stats["kl_ref"] > 0 and net.prior_gain.item() != before
    with torch.no_grad():  # the prior's logits stay masked: never an illegal action
        o, m = torch.from_numpy(buf.obs[:n]), torch.from_numpy(buf.masks[:n])
        choice = masked_logits(net.logits(o, mask=m), m).argmax(1).numpy()
    assert buf.masks[np.arange(n), choice].all()
