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


def _reference_gather(obs, mask, rows, n_rows, out_obs, out_mask, dist, aux, out_aux):
    """``gather_step`` as three numpy / facade calls (the collector before the fused pass)."""
    from sichuan_env.agents.nn.features import aux_features

    out_obs[:] = obs[rows, :n_rows]
    out_mask[:] = mask[rows]
    if aux:
        out_aux[:] = aux_features(out_obs)


def _reference_rows(mask, words, seat, learner_seat, actions, learner, rows):
    """``step_rows`` byte by byte in numpy."""
    legal = (mask != 0).sum(1)
    actions[:] = np.where(legal > 0, (mask != 0).argmax(1), 0)
    mine = (learner_seat < 0) | (learner_seat == seat)
    learner[:] = mine
    free = np.flatnonzero(mine & (legal > 1))
    rows[: free.size] = free
    return free.size


def _collect(monkeypatch, reference: bool, aux_in_buffer: bool = True) -> dict:
    import torch
    from sichuan_env.agents import make_agent
    from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet

    from sichuan_env.envs.vector import VectorEnv

    if reference:
        monkeypatch.setattr(rollout, "gather_step", _reference_gather)
        monkeypatch.setattr(rollout, "step_rows", _reference_rows)
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(aux=True)).eval()
    venv = VectorEnv(16, seed=5)
    pool = [("heuristic", make_agent("heuristic", seed=1))]
    coll = rollout.Collector(net, venv, pool, 0.5, 1.0, 0.1, seed=9)
    buf = rollout.Buffer(16 * 60, net.config.public_rows, 0, aux=AUX_SIZE if aux_in_buffer else 0)
    out = {}
    for it in range(2):
        coll.collect(60, buf)
        for f in ("obs", "masks", "aux", "actions", "logp", "values", "rewards", "dones",
                  "next_idx", "boot"):  # fmt: skip
            if getattr(buf, f) is not None:
                out[f"{f}{it}"] = getattr(buf, f)[: buf.n].copy()
    monkeypatch.undo()
    return out


def test_the_fused_gather_gives_the_separate_gathers_rollouts(monkeypatch):
    """The public-view path (no oracle rows): one parallel pass for observations, masks and
    features, and the word-wise mask scan, against numpy gathers, ``aux_features`` and a
    byte-wise scan: the same rollouts bit for bit."""
    from sichuan_env.agents.nn.features import aux_features

    got = _collect(monkeypatch, reference=False)
    want = _collect(monkeypatch, reference=True)
    assert sorted(got) == sorted(want)
    assert len(want["actions0"]) > 300 and want["dones1"].any()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    # the features in the buffer are those of the stored observations, own turns among them
    np.testing.assert_array_equal(got["aux1"], aux_features(got["obs1"]))
    assert (got["aux1"][:, :216] != 0).any(1).sum() > 50
    # a buffer without a features array: the network sees the same features all the same
    bare = _collect(monkeypatch, reference=False, aux_in_buffer=False)
    assert "aux1" not in bare
    for key in ("actions1", "logp1", "values1"):  # the sampled actions alone hardly react
        np.testing.assert_array_equal(bare[key], got[key], err_msg=key)


def test_step_rows_counts_legal_actions_eight_at_a_time():
    from sichuan_env.train.policy.rollout_book import mask_words, step_rows

    rng = np.random.default_rng(3)
    cases = {"none": 0, "one": 0, "many": 0}
    for width in (88, 85):  # 85: not a multiple of 8, the byte path
        for _ in range(50):
            n = 40
            mask = (rng.random((n, width)) < rng.choice([0.0, 0.02, 0.2])).astype(np.int8)
            mask[rng.random(mask.shape) < 0.01] = -1  # any nonzero byte is legal
            seat = rng.integers(0, 4, n).astype(np.int8)
            learner_seat = rng.integers(-1, 4, n)
            got = [np.zeros(n, np.int64), np.zeros(n, np.bool_), np.zeros(n, np.int64)]
            ref = [np.zeros(n, np.int64), np.zeros(n, np.bool_), np.zeros(n, np.int64)]
            words = mask_words(mask)
            assert (words.shape[0] == n) == (width % 8 == 0)
            k = step_rows(mask, words, seat, learner_seat, *got)
            k_ref = _reference_rows(mask, words, seat, learner_seat, *ref)
            assert k == k_ref
            np.testing.assert_array_equal(got[0], ref[0])
            np.testing.assert_array_equal(got[1], ref[1])
            np.testing.assert_array_equal(got[2][:k], ref[2][:k])
            legal = (mask != 0).sum(1)
            cases["none"] += int((legal == 0).sum())
            cases["one"] += int((legal == 1).sum())
            cases["many"] += int((legal > 1).sum())
    assert min(cases.values()) > 20, cases
