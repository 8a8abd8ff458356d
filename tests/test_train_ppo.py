"""PPO: GAE over seat-trajectories (hand-built), reward crediting, one update, resume."""

import argparse
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet, aux_features
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.policy import ppo

from sichuan_env.envs.vector import VectorEnv


def test_gae_on_a_hand_built_example():
    # slot 0: seat A decides at k=0 and k=2, seat B at k=1 and k=3, then the hand ends
    # (both trajectories terminate); seat C's decision k=4 is still open (bootstrapped).
    rewards = np.array([0.0, 1.0, -1.0, 2.0, 0.1], np.float32)
    values = np.array([0.5, 0.2, -0.5, 1.0, 0.2], np.float32)
    dones = np.array([False, False, True, True, False])
    next_idx = np.array([2, 3, -1, -1, -1], np.int64)
    boot = np.array([0, 0, 0, 0, 0.3], np.float32)
    adv = np.zeros(5, np.float32)
    ret = np.zeros(5, np.float32)
    ppo.gae(rewards, values, dones, next_idx, boot, np.float32(1.0), np.float32(0.5), adv, ret)
    # k=3: 2 - 1 = 1;  k=2: -1 + 0.5 = -0.5;  k=1: 1 + 1.0 - 0.2 = 1.8, + 0.5 * 1 = 2.3
    # k=0: 0 - 0.5 - 0.5 = -1, + 0.5 * -0.5 = -1.25;  k=4: 0.1 + 0.3 - 0.2 = 0.2
    np.testing.assert_allclose(adv, [-1.25, 2.3, -0.5, 1.0, 0.2], rtol=1e-6)
    np.testing.assert_allclose(ret, [-0.75, 2.5, -1.0, 2.0, 0.4], rtol=1e-6)
    ppo.gae(rewards, values, dones, next_idx, boot, np.float32(0.5), np.float32(1.0), adv, ret)
    # gamma 0.5: k=3: 1;  k=2: -0.5;  k=1: 1 + 0.5 - 0.2 = 1.3, + 0.5 * 1 = 1.8
    # k=0: 0 - 0.25 - 0.5 = -0.75, + 0.5 * -0.5 = -1.0;  k=4: 0.1 + 0.15 - 0.2 = 0.05
    np.testing.assert_allclose(adv, [-1.0, 1.8, -0.5, 1.0, 0.05], rtol=1e-5)


def _collector(envs=8, pool=()):
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1))
    venv = VectorEnv(envs, seed=1)
    return ppo.Collector(net, venv, list(pool), 0.0, 0.0, 0.5, seed=0), net


def test_rewards_between_decisions_go_to_the_seat_s_last_decision():
    coll, _ = _collector(envs=2)
    buf = ppo.Buffer(16, 83, 0)
    coll._buf_rewards, coll._buf_dones = buf.rewards, buf.dones
    coll.last[:] = [[0, 1, -1, 2], [3, 4, 5, 6]]  # slot 0, seat 2 has no decision yet
    rewards = np.array([[4, -2, 0, -2], [1, 1, 1, -3]], np.int64)
    coll._credit(rewards, np.array([False, False]), np.arange(2))
    np.testing.assert_allclose(buf.rewards[:7], [2, -1, -1, 0.5, 0.5, 0.5, -1.5])
    rewards = np.array([[-8, 8, 0, 0], [0, 0, 0, 0]], np.int64)  # slot 0's hand ends
    coll._credit(rewards, np.array([True, False]), np.arange(2))
    np.testing.assert_allclose(buf.rewards[:3], [-2, 3, -1])
    assert buf.dones[:3].all() and not buf.dones[3:7].any()
    assert (coll.last[0] == -1).all() and (coll.last[1] == [3, 4, 5, 6]).all()


def _args(**kw):
    base = {
        "gamma": 1.0, "lam": 0.95, "epochs": 2, "minibatch": 256, "clip": 0.2, "ent_coef": 0.01,
        "vf_coef": 0.5, "kl_coef": 0.1, "max_grad_norm": 0.5, "bf16": False,
    }  # fmt: skip
    return argparse.Namespace(**{**base, **kw})


def test_one_update_on_64_envs_changes_the_parameters_with_finite_losses():
    from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=64, layers=2, oracle_critic=True, aux=True))
    ref = PolicyNet(PolicyConfig(hidden=64, layers=2, aux=True))
    venv = VectorEnv(64, seed=2, oracle=True)
    coll = ppo.Collector(net, venv, [("heuristic", HeuristicAgent())], 0.5, 1.0, 0.125, seed=0)
    buf = ppo.Buffer(64 * 200, 83, 150, AUX_SIZE)
    coll.collect(200, buf)
    n = buf.n
    assert 2000 < n < 64 * 200  # forced decisions and the heuristic's seats are not stored
    assert buf.masks[np.arange(n), buf.actions[:n]].all()  # every stored action was legal
    assert (buf.masks[:n].sum(1) > 1).all()
    assert buf.dones[:n].any() and (buf.rewards[:n] != 0).any()
    assert coll.hand_points["heuristic"]  # pool hands were played and scored
    np.testing.assert_array_equal(buf.aux[:n], aux_features(buf.obs[:n]))  # stored features
    before = {k: p.detach().clone() for k, p in net.named_parameters()}
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    stats = ppo.ppo_update(net, opt, buf, _args(), ref, True, np.random.default_rng(0))
    assert all(np.isfinite(v) for v in stats.values()), stats
    assert stats["kl_ref"] > 0 and stats["entropy"] > 0
    changed = {k for k, p in net.named_parameters() if not torch.equal(before[k], p)}
    # the oracle critic gives the values: the public value head is not trained
    assert changed == {k for k in before if not k.startswith("value.")}


def test_a_run_resumes_where_it_stopped(tmp_path):
    run = tmp_path / "run"
    common = ["--run", str(run), "--envs", "16", "--steps", "8", "--hidden", "32", "--layers", "1"]
    common += ["--threads", "1", "--quiet", "--eval-every", "2", "--eval-walls", "2"]
    ppo.main([*common, "--iterations", "2", "--pool-frac", "0.5", "--oracle-critic", "--aux"])
    net1, doc1 = load_network(run / "last.pt")
    assert doc1["iteration"] == 2 and doc1["method"] == "ppo"
    ppo.main([*common, "--iterations", "3", "--resume"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert "eval_points_per_hand" in rows[1] and (run / "best.pt").is_file()
    net2, doc2 = load_network(run / "last.pt")
    assert doc2["iteration"] == 3 and net2.config.oracle_critic and net2.config.aux
    assert any(not torch.equal(a, b) for a, b in zip(net1.parameters(), net2.parameters(), strict=True))  # fmt: skip
    with pytest.raises(SystemExit):
        ppo.main([*common, "--iterations", "4", "--resume", "--init", str(run / "last.pt")])


class _StateReader:
    """A pool agent that reads the engine state: checks each state against its mask, plays the
    first legal action."""

    name = "state-reader"
    obs_version = 1
    reads_state = True

    def __init__(self):
        self.rows = 0

    def act_states(self, states, masks, rules=None):
        from sichuan_env.engine.step import legal_mask_at
        from sichuan_env.kernels.tables import get_tables

        flags, r = get_tables()["FLAGS"], rules.as_array()
        for k in range(len(states)):
            m = np.zeros(masks.shape[1], np.int8)
            legal_mask_at(states, k, r, flags, m)
            assert np.array_equal(m, masks[k])  # the state is the one the mask is of
        self.rows += len(states)
        return masks.argmax(axis=1)


def test_a_pool_agent_that_reads_the_state_gets_the_states():
    from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

    reader = _StateReader()
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1))
    venv = VectorEnv(16, seed=3)
    pool = [("heuristic", HeuristicAgent()), ("state-reader", reader)]
    coll = ppo.Collector(net, venv, pool, 1.0, 0.0, 0.125, seed=0)  # every opponent: the reader
    coll.collect(40, ppo.Buffer(16 * 40, 83, 0))
    assert reader.rows > 300


def test_the_search_joins_the_pool_from_the_command_line(tmp_path, monkeypatch):
    from sichuan_env.agents.search.agent import SearchAgent

    calls = []
    act = SearchAgent.act_states
    monkeypatch.setattr(
        SearchAgent, "act_states", lambda self, *a: calls.append(1) or act(self, *a)
    )
    run = tmp_path / "run"
    argv = ["--run", str(run), "--envs", "8", "--steps", "8", "--hidden", "32", "--layers", "1",
            "--threads", "1", "--quiet", "--eval-every", "0", "--iterations", "1",
            "--pool-frac", "1.0", "--pool-heuristic", "0.0", "--pool-agent", "search"]  # fmt: skip
    ppo.main(argv)
    assert (run / "last.pt").is_file() and calls  # the search played its seats
    with pytest.raises(SystemExit):
        ppo.main([*argv[:-1], "no-such-agent", "--run", str(tmp_path / "other")])


def test_logit_scale_multiplies_the_logits_and_keeps_the_greedy_action():
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1, prior=True))
    with torch.no_grad():
        net.prior_gain.fill_(0.3)
        net.policy.weight.normal_()
    venv = VectorEnv(8, seed=5)
    obs, mask, _ = venv.reset()
    o, m = torch.from_numpy(obs[:, :83]), torch.from_numpy(mask)
    before = net(o, mask=m)[0]
    ppo.scale_logits(net, 10.0)
    after = net(o, mask=m)[0]
    torch.testing.assert_close(after, 10.0 * before, rtol=1e-5, atol=1e-5)
    legal = m.bool()
    assert torch.equal(
        after.masked_fill(~legal, -1e9).argmax(1), before.masked_fill(~legal, -1e9).argmax(1)
    )
    with pytest.raises(ValueError, match="scale"):
        ppo.scale_logits(net, 0.0)


def test_a_resumed_run_keeps_its_init_policy_in_the_pool(tmp_path, monkeypatch):
    common = ["--envs", "8", "--steps", "4", "--hidden", "32", "--layers", "1", "--threads", "1",
              "--quiet", "--eval-every", "0", "--pool-frac", "1.0"]  # fmt: skip
    ppo.main(["--run", str(tmp_path / "a"), *common, "--iterations", "1"])
    start = tmp_path / "a" / "last.pt"
    ppo.main(["--run", str(tmp_path / "b"), *common, "--iterations", "1", "--init", str(start)])
    pools = []
    real = ppo.Collector
    monkeypatch.setattr(ppo, "Collector", lambda net, venv, pool, *a, **k: pools.append([n for n, _ in pool]) or real(net, venv, pool, *a, **k))  # fmt: skip
    ppo.main(["--run", str(tmp_path / "b"), *common, "--iterations", "2", "--resume"])
    assert pools == [["heuristic", "init"]]
    _, doc = load_network(tmp_path / "b" / "last.pt")
    assert doc["init"] == str(start) and doc["iteration"] == 2
