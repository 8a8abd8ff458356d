"""``EnsembleAgent``: the mean of its networks' logits, legal and repeatable play, refusals;
``ensemble6`` and ``ensemble6-guard`` (``strongest-net``) load the shipped networks."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import registry
from sichuan_env.agents.belief.guard import GuardedAgent
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.nn.ensemble import ENSEMBLE6, EnsembleAgent, load_ensemble
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet, heuristic_choices
from sichuan_env.agents.nn.torch_agent import TorchAgent

from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv


def _states(n: int = 128, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Observations (v1) and masks of ``n`` decisions of random play."""
    env = VectorEnv(8, RuleConfig.preset("xuezhan"), obs_version=1, seed=seed)
    o, m, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while sum(len(x) for x in obs) < n:
        obs.append(o.copy())
        masks.append(m.copy())
        o, m, *_ = env.step(np.array([rng.choice(np.flatnonzero(r)) for r in m]))
    return np.concatenate(obs)[:n], np.concatenate(masks)[:n]


@pytest.fixture(scope="module")
def pair() -> tuple[TorchAgent, TorchAgent]:
    return TorchAgent.load("distill", 0), TorchAgent.load("exit_valueleaf", 0)


def test_the_ensemble_plays_the_argmax_of_its_members_mean_logits(pair):
    obs, masks = _states()
    a, b = pair
    legal = torch.from_numpy(masks) != 0
    want = torch.where(legal, (a._logits(obs, masks) + b._logits(obs, masks)) / 2, -torch.inf)
    ens = EnsembleAgent([a, b])
    got = ens.mean_logits(obs, masks)
    assert not got.requires_grad
    assert torch.equal(torch.isinf(got), ~legal)
    assert torch.equal(got[legal], want[legal])  # the members' own logits, shared inputs or not
    acts = ens.act_batch(obs, masks)
    assert np.array_equal(acts, want.argmax(dim=1).numpy())
    small = [TorchAgent(x.net, batch_size=48) for x in (a, b)]  # three batches of 48 rows
    assert torch.equal(EnsembleAgent(small).mean_logits(obs, masks)[legal], want[legal])
    assert (masks[np.arange(len(acts)), acts] == 1).all()
    pa, pb = a.act_batch(obs, masks), b.act_batch(obs, masks)
    assert (pa != pb).any()  # the members disagree here, so the mean is a real choice
    assert np.array_equal(EnsembleAgent([a, a]).act_batch(obs, masks), pa)
    assert ens.act(obs[0], masks[0]) == acts[0]


def test_members_of_other_architectures_get_the_inputs_each_reads():
    """Members with and without ``aux`` and ``prior``: each gets what its own agent computes."""
    obs, masks = _states(96, seed=9)
    nets = []
    for i, (aux, prior) in enumerate(((True, False), (False, True), (False, False), (True, True))):
        torch.manual_seed(i)
        net = PolicyNet(PolicyConfig(aux=aux, prior=prior, hidden=32, layers=2))
        if net.prior_gain is not None:
            with torch.no_grad():
                net.prior_gain.fill_(0.7)  # a prior that moves the logits (not vacuous)
        nets.append(TorchAgent(net, batch_size=40))
    assert (heuristic_choices(obs, masks) >= 0).any()  # the prior members' prior is in play
    legal = torch.from_numpy(masks) != 0
    own = sum(n._logits(obs, masks).masked_fill(~legal, 0.0) for n in nets) / len(nets)
    got = EnsembleAgent(nets).mean_logits(obs, masks)
    assert torch.equal(got[legal], own[legal]) and torch.isinf(got[~legal]).all()


def test_bad_members_are_refused(pair):
    a, _ = pair
    other = TorchAgent(PolicyNet(PolicyConfig(obs_version=2)))
    for members, err, match in (([a], ValueError, "at least two"),
                                ([], ValueError, "at least two"),
                                ([a, "distill"], ValueError, "TorchAgents"),
                                ("distill", TypeError, "sequence"),
                                ([a, other], ValueError, "different observation versions"),
                                ([a, TorchAgent(a.net, batch_size=8)], ValueError,
                                 "batch_size")):  # fmt: skip
        with pytest.raises(err, match=match):
            EnsembleAgent(members)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no-such"):
        load_ensemble(["distill", "no-such-checkpoint"])
    with pytest.raises(ValueError, match="sequence of checkpoints"):  # not its characters
        load_ensemble("distill")


def test_bad_input_is_refused_and_changes_nothing(pair):
    ens = EnsembleAgent(list(pair))
    obs, masks = _states(4)
    keep = obs.copy(), masks.copy()
    with pytest.raises(ValueError):
        ens.act_batch(obs[:, :-1], masks)
    with pytest.raises(ValueError, match="no legal action"):
        ens.act_batch(obs, np.zeros_like(masks))
    assert np.array_equal(obs, keep[0]) and np.array_equal(masks, keep[1])


def test_strongest_net_is_the_guarded_ensemble_of_the_six_shipped_networks():
    assert registry.aliases()["strongest-net"] == "ensemble6-guard"
    agent = registry.make_agent("strongest-net", seed=1)
    assert isinstance(agent, GuardedAgent) and agent.threshold == 0.1 and agent.keep == 0.9
    ens = agent.base
    assert isinstance(ens, EnsembleAgent) and ens.name == "ensemble6"
    assert [m.name for m in ens.members] == list(ENSEMBLE6)
    shas = {m.meta["sha256"] for m in ens.members}
    assert len(shas) == 6  # six different networks
    plain = registry.make_agent("ensemble6", seed=1)
    assert [m.meta["sha256"] for m in plain.members] == [m.meta["sha256"] for m in ens.members]


def test_a_match_of_the_guarded_ensemble_is_legal_and_repeatable():
    lineup = ["strongest-net", "heuristic", "ensemble6", "heuristic"]
    rules = RuleConfig.preset("xuezhan")
    one = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    two = play_duplicate(lineup, 2, rules, seed=3, progress=False)
    assert len(one) == 8
    assert [r["actions"] for _, _, r in one] == [r["actions"] for _, _, r in two]


def test_strongest_is_the_after_win_search_on_the_guarded_ensemble():
    from sichuan_env.agents.search.hybrid import HybridAgent

    assert registry.aliases()["strongest"] == "ensemble6-guard-search64-after-win"
    agent = registry.make_agent("strongest", seed=1)
    assert isinstance(agent, HybridAgent) and agent.after_win and agent.late == -1
    assert agent.search.samples == 64 and agent.search.z == 1.0 and agent.rollouts == "style"
    assert isinstance(agent.net, GuardedAgent) and agent.net.base.name == "ensemble6"
    assert (agent.net.threshold, agent.net.slack, agent.net.keep) == (0.1, 0, 0.9)
    lineup = ["strongest", "heuristic", "heuristic", "heuristic"]
    rules = RuleConfig.preset("xuezhan")
    runs = []
    for made in (agent, registry.make_agent("ensemble6-guard-search64-after-win", seed=1)):
        runs.append(play_duplicate(lineup, 1, rules, seed=5, progress=False, agents={
            "strongest": made, "heuristic": registry.make_agent("heuristic")}))  # fmt: skip
        assert made.stats()["searched"] > 0  # a seat won and the search answered
    assert len(runs[0]) == 4 and all(sum(r["result"]["scores"]) == 0 for _, _, r in runs[0])
    assert [r["actions"] for _, _, r in runs[0]] == [r["actions"] for _, _, r in runs[1]]
