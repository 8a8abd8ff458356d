"""Anchor rows of search distillation (``sichuan_env.train.policy.distill_anchor``): the
decisions before any win, labelled with a network's own gains, and their place in
``search_distill --anchor-before-win``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sichuan_env.train.policy.distill_anchor as da
import sichuan_env.train.policy.distill_objective as obj
import sichuan_env.train.policy.search_distill as sd
import sichuan_env.train.policy.search_labels as sl
import torch
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import save_checkpoint
from sichuan_env.agents.registry import make_agent
from sichuan_env.train.policy.bc import teacher_stream

from sichuan_env import RuleConfig
from sichuan_env.encoding.v1 import WON
from sichuan_env.envs.vector import VectorEnv


def _won(obs: np.ndarray) -> np.ndarray:
    """Rows whose observation shows some seat as won (the v1 ``won@rel`` planes)."""
    return obs[:, WON : WON + 8].reshape(len(obs), -1).any(axis=1)


def _net(seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1, aux=True, prior=True))
    with torch.no_grad():  # logits spread over a few points, as a trained network's gains are
        net.policy.weight.mul_(200.0)
    return net.eval()


def _chunk(select=None, steps: int = 120):
    stream = teacher_stream(make_agent("heuristic", seed=3), VectorEnv(16, seed=3), steps, select)
    return next(stream)


def test_select_keeps_only_the_decisions_before_a_win():
    obs, mask, act = _chunk()
    assert _won(obs).any() and (~_won(obs)).any()  # both phases occur in 120 steps of 16 hands
    obs_b, mask_b, act_b = _chunk(da.before_any_win)
    assert not _won(obs_b).any()
    # the same hands are played: the selected rows are exactly the unselected ones before a win
    pre = ~_won(obs)
    assert np.array_equal(obs_b, obs[pre]) and np.array_equal(act_b, act[pre])
    assert np.array_equal(mask_b, mask[pre])


def test_gain_targets_are_the_networks_own_gains():
    obs, mask, _ = _chunk(da.before_any_win)
    obs = np.ascontiguousarray(obs[:, : da.OBS_ROWS])
    net, floor = _net(), 1.0
    cands, gain, base = da.gain_targets(net, obs, mask, floor, batch=37)  # batches of odd size
    h = heuristic_choices(obs, mask)
    assert (base == 0).all() and np.array_equal(cands[:, 0], h) and (gain[:, 0] == 0).all()
    with torch.no_grad():
        o = torch.from_numpy(obs)
        lg = obj.raw_logits(net, o, net.aux_of(o)).numpy()
    diff = lg - lg[np.arange(len(h)), h][:, None]
    for i in range(len(obs)):
        c = cands[i][cands[i] >= 0]
        assert len(set(c.tolist())) == len(c) and (mask[i, c] == 1).all()
        np.testing.assert_allclose(gain[i, : len(c)], diff[i, c], atol=1e-5)
        assert (np.diff(gain[i, 1 : len(c)]) <= 1e-6).all()  # best first after the heuristic's
        rest = np.setdiff1d(np.flatnonzero(mask[i]), c)
        if len(c) < da.MAX_CANDIDATES:  # every legal action above -floor is a candidate
            assert (diff[i, rest] <= -floor + 1e-5).all()
    n_c = (cands >= 0).sum(1)
    assert (n_c > 1).any() and (n_c < mask.sum(1)).any()  # some gains kept, some left to the hinge
    # the network that labelled the rows fits them exactly: both parts of the loss are zero
    rows = da._rows(obs, mask, cands, gain, base)
    data = obj.prepare(rows, net)
    with torch.no_grad():
        _, reg, hinge = obj.distill_loss(net, *obj.tensors(data, np.arange(len(obs))), floor, 1.0)
    assert float(reg) < 1e-9 and float(hinge) < 1e-9
    # and another network does not
    with torch.no_grad():
        _, reg2, _ = obj.distill_loss(_net(1), *obj.tensors(data, np.arange(len(obs))), floor, 1.0)
    assert float(reg2) > 0.1


def test_before_win_rows_shape_and_split():
    rows = da.before_win_rows(_net(), 300, seed=5, floor=1.0, envs=16)
    assert len(rows["obs"]) == 300 and not _won(rows["obs"]).any()
    assert (rows["hand"] == -1).all()  # never held out
    assert rows["cands"].dtype == np.int16 and rows["gain"].dtype == np.float32


def test_search_distill_anchor_before_win_is_recorded_and_kept_on_resume(tmp_path):
    lab = tmp_path / "lab"
    sl.main(["--out", str(lab), "--hands", "20", "--shard-hands", "10", "--samples", "2",
             "--draws", "1", "--threads", "1"])  # fmt: skip
    meta = {"rules": RuleConfig().to_dict(), "method": "test", "command": "test",
            "commit": "test", "wall_clock_s": 0.0}  # fmt: skip
    save_checkpoint(tmp_path / "init.pt", _net(), meta)
    run = tmp_path / "run"
    common = ["--labels", str(lab), "--run", str(run), "--anchor-decisions", "300",
              "--threads", "1", "--val-mod", "4", "--margins", "0.5", "--select-walls", "0"]  # fmt: skip
    sd.main([*common, "--init", str(tmp_path / "init.pt"), "--epochs", "1",
             "--anchor-before-win", "400"])  # fmt: skip
    assert json.loads((run / "last.json").read_text())["anchor_before_win"] == 400
    with pytest.raises(SystemExit):  # another anchor on resume: refused
        sd.main([*common, "--resume", "--epochs", "2", "--anchor-before-win", "100"])
    sd.main([*common, "--resume", "--epochs", "2", "--anchor-before-win", "400"])
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [1, 2]
