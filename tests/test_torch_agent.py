"""TorchAgent: masked choices, probabilities, checkpoint round trip, hostile checkpoints, the envs."""

import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import Agent, make_agent
from sichuan_env.agents.checkpoint import digest
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.match_stats import summarize
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet, count_parameters, masked_logits
from sichuan_env.agents.nn.torch_agent import (
    TorchAgent,
    config_path,
    export_acting,
    load_network,
    read_config,
    save_checkpoint,
)

import sichuan_env
from sichuan_env import RuleConfig
from sichuan_env.envs.vector import VectorEnv

META = {"rules": RuleConfig().to_dict(), "method": "test", "command": "pytest", "commit": "x"}


def _net(seed=0, **kw):
    torch.manual_seed(seed)
    cfg = PolicyConfig(hidden=32, layers=2, **kw)
    net = PolicyNet(cfg)
    with torch.no_grad():  # a sharp policy, so that masking matters
        net.policy.weight.mul_(300.0)
    return net


def _save(tmp_path, net, name="a"):
    return save_checkpoint(tmp_path / f"{name}.pt", net, {**META, "wall_clock_s": 1.0})


def test_masked_choices_are_always_legal():
    rng = np.random.default_rng(0)
    venv = VectorEnv(128, seed=3)
    obs, _, _ = venv.reset()
    masks = (rng.random((128, 88)) < rng.random((128, 1)) ** 3).astype(np.int8)
    masks[np.arange(128), rng.integers(0, 88, 128)] = 1
    assert (masks.sum(1) == 1).any() and (masks.sum(1) > 5).any()  # both kinds of rows occur
    for greedy in (True, False):
        agent = TorchAgent(_net(), greedy=greedy, seed=1)
        for _ in range(5):
            acts = agent.act_batch(obs, masks)
            assert acts.dtype == np.int64 and masks[np.arange(128), acts].all()
        assert all(masks[i, agent.act(obs[i], masks[i])] for i in range(10))
    # the unmasked favourite is illegal in most rows: masking really changed the choice
    favourite = _net().logits(torch.from_numpy(obs)).argmax(1).numpy()
    assert (masks[np.arange(128), favourite] == 0).sum() > 50


def test_all_zero_mask_is_a_clear_error():
    agent = TorchAgent(_net())
    obs = np.zeros((2, 83, 27), np.uint8)
    masks = np.ones((2, 88), np.int8)
    masks[1] = 0
    with pytest.raises(ValueError, match="no legal action"):
        agent.act_batch(obs, masks)
    with pytest.raises(ValueError, match="no legal action"):
        masked_logits(torch.zeros(2, 88), torch.from_numpy(masks))
    with pytest.raises(ValueError, match="no legal action"):
        agent.action_probs(obs[0], masks[1])


def test_action_probs_sum_to_one_and_vanish_where_illegal():
    agent = TorchAgent(_net())
    mask = np.zeros(88, np.int8)
    mask[[3, 5, 86]] = 1
    p = agent.action_probs(np.zeros((83, 27), np.uint8), mask)
    assert p.shape == (88,) and abs(p.sum() - 1) < 1e-9
    assert (p[mask == 0] == 0).all() and (p[mask == 1] > 0).any()


def test_sampling_is_seeded():
    venv = VectorEnv(64, seed=5)
    obs, mask, _ = venv.reset()
    net = _net()
    with torch.no_grad():
        net.policy.weight.mul_(1 / 300.0)  # a soft policy, so that samples differ
    a = TorchAgent(net, greedy=False, seed=7).act_batch(obs, mask)
    b = TorchAgent(net, greedy=False, seed=7).act_batch(obs, mask)
    c = TorchAgent(net, greedy=False, seed=8).act_batch(obs, mask)
    assert (a == b).all() and (a != c).any()


def test_checkpoint_round_trip(tmp_path):
    net = _net(oracle_critic=True)
    path = _save(tmp_path, net)
    doc = read_config(path)
    for key in ("arch", "obs_version", "rules", "command", "commit", "wall_clock_s", "sha256"):
        assert key in doc
    loaded, _ = load_network(path)
    x = torch.randint(0, 2, (8, 150, 27), dtype=torch.uint8)
    with torch.no_grad():
        for a, b in zip(net(x), loaded(x), strict=True):
            assert torch.equal(a, b)
        assert torch.equal(net.oracle_value(x), loaded.oracle_value(x))
    agent = make_agent(str(path), seed=0)
    assert isinstance(agent, Agent) and isinstance(agent, TorchAgent)
    small, _ = load_network(export_acting(path, tmp_path / "acting.pt"))
    assert small.critic is None and read_config(tmp_path / "acting.pt")["method"] == "test"
    with torch.no_grad():
        assert torch.equal(small(x)[0], net(x)[0])
    assert count_parameters(net) < count_parameters(net, acting_only=False)


def _rewrite(path, doc):
    config_path(path).write_text(json.dumps(doc), encoding="utf-8")


def _rehash(path, doc):
    """Write ``doc`` with the sha256 of the weights and ``doc`` (a consistent, doctored pair)."""
    _rewrite(path, {**doc, "sha256": digest(path, doc)})


def test_hostile_checkpoints_are_clear_errors(tmp_path):
    path = _save(tmp_path, _net())
    good = json.loads(config_path(path).read_text())
    cases = {
        "misses the key 'sha256'": {k: v for k, v in good.items() if k != "sha256"},
        "wrong type": {**good, "obs_version": "1"},
        "format": {**good, "format": "pickle"},
        "unknown architecture fields": {**good, "arch": {**good["arch"], "x": 1}},
        "hidden must be in": {**good, "arch": {**good["arch"], "hidden": 10**6}},
        "do not match the sha256": {**good, "sha256": "0" * 64},
    }
    for message, doc in cases.items():
        _rewrite(path, doc)
        with pytest.raises(ValueError, match=message):
            TorchAgent.load(path)
    # a consistent pair whose architecture does not fit the tensors
    for hidden in (16, 64):
        _rehash(path, {**good, "arch": {**good["arch"], "hidden": hidden}})
        with pytest.raises(ValueError, match="should be"):
            TorchAgent.load(path)
    # the config is hashed too: editing it alone (a metric, the rules) is caught
    _rewrite(path, {**good, "method": "edited"})
    with pytest.raises(ValueError, match="do not match the sha256"):
        TorchAgent.load(path)
    # NaN weights with a matching hash (someone edited both files)
    state = _net().state_dict()
    state["policy.bias"][0] = float("nan")
    torch.save(state, path)
    _rehash(path, good)
    with pytest.raises(ValueError, match="non-finite"):
        TorchAgent.load(path)
    # not JSON; not a torch file; a pickle of something else is refused by weights_only
    config_path(path).write_text("{nope", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        TorchAgent.load(path)
    path.write_bytes(b"garbage")
    _rehash(path, good)
    with pytest.raises(ValueError, match="cannot be read"):
        TorchAgent.load(path)
    with pytest.raises(ValueError, match="no shipped checkpoint"):
        TorchAgent.load("nonexistent")


def test_import_agents_does_not_import_torch():
    code = "import sys, agents; assert 'torch' not in sys.modules; print(agents.available())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'bc'" in out.stdout and "'ppo'" in out.stdout


def test_torch_agent_in_the_aec_env_vector_env_and_evaluate(tmp_path):
    agent = TorchAgent(_net(), seed=0)
    env = sichuan_env.env()
    env.reset(seed=0)
    steps = 0
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        done = terminated or truncated
        env.step(None if done else agent.act(obs["observation"], obs["action_mask"]))
        steps += 1
    assert steps > 20 and env.unwrapped.game.is_over()
    venv = VectorEnv(32, seed=0)
    obs, mask, _ = venv.reset()
    ended = 0
    for _ in range(300):
        obs, mask, _, _, done, _ = venv.step(agent.act_batch(obs, mask))
        ended += int(done.sum())
    assert ended > 0
    path = _save(tmp_path, _net(), "e")
    lineup = [str(path), "heuristic", "heuristic", "heuristic"]
    records = play_duplicate(lineup, 2, RuleConfig(), progress=False)
    s = summarize(lineup, records, 2)
    assert s[str(path)]["seat_hands"] == 8


def test_aux_features_rank_discards_as_the_heuristic_does():
    from sichuan_env.agents import HeuristicAgent
    from sichuan_env.agents.nn.features import AUX_PER_TILE, SH_BINS, aux_features

    venv = VectorEnv(256, seed=4)
    obs, mask, _ = venv.reset()
    h = HeuristicAgent()
    checked = 0
    for _ in range(120):
        acts = h.act_batch(obs, mask)
        feats = aux_features(obs)
        for i in np.flatnonzero((acts < 27) & (mask[:, 27:].sum(1) == 0)):
            legal = np.flatnonzero(mask[i, :27])
            per = feats[i, : 27 * AUX_PER_TILE].reshape(27, AUX_PER_TILE)
            sh = per[legal, :SH_BINS].argmax(1)
            uk = per[legal, SH_BINS]
            best = legal[(sh == sh.min())]
            assert acts[i] in best  # the heuristic's discard has the lowest shanten bin
            top = best[uk[sh == sh.min()] == uk[sh == sh.min()].max()]
            assert acts[i] in top or per[acts[i], SH_BINS] == 1.0  # ... and the most ukeire
            checked += 1
        obs, mask, _, _, _, _ = venv.step(acts)
    assert checked > 1000
