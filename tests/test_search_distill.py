"""Search advantage labels (``sichuan_env.train.policy.search_labels``) and their distillation (``sichuan_env.train.policy.search_distill``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sichuan_env.train.policy.distill_objective as obj
import sichuan_env.train.policy.search_distill as sd
import sichuan_env.train.policy.search_labels as sl
import torch
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent, save_checkpoint

from sichuan_env import RuleConfig


@pytest.fixture(scope="module")
def rows():
    return sl.label_hands(3, 0, 6, samples=4, draws=2, gap=1, p_label=0.5)


def test_labels_are_consistent_and_deterministic(rows):
    sl.check_labels(rows)
    n_c = (rows["cands"] >= 0).sum(1)
    assert len(rows["obs"]) > 20 and (n_c >= 2).sum() > 10 and (n_c == 1).any()
    base_act = rows["cands"][np.arange(len(n_c)), rows["base"]]
    assert (heuristic_choices(rows["obs"], rows["mask"]) == base_act).all()
    assert (rows["gain"][np.arange(len(n_c)), rows["base"]] == 0).all()
    assert (rows["se"] >= 0).all() and (rows["gain"][n_c >= 2] != 0).any()
    again = sl.label_hands(3, 0, 6, samples=4, draws=2, gap=1, p_label=0.5)
    for k in sl.FIELDS:
        np.testing.assert_array_equal(rows[k], again[k])
    # hands are independent of their batch: hand 4 alone gives the same rows
    alone = sl.label_hands(3, 4, 1, samples=4, draws=2, gap=1, p_label=0.5)
    np.testing.assert_array_equal(alone["gain"], rows["gain"][rows["hand"] == 4])


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("cands", 88, "outside"),
        ("base", 31, "base index"),
        ("gain", np.nan, "non-finite"),
        ("seat", 4, "seat"),
    ],
)
def test_check_labels_rejects_bad_rows(rows, field, value, match):
    bad = {k: v.copy() for k, v in rows.items()}
    bad[field][0] = value
    with pytest.raises(ValueError, match=match):
        sl.check_labels(bad)


def test_check_labels_rejects_illegal_candidates_and_dtypes(rows):
    bad = {k: v.copy() for k, v in rows.items()}
    c = int(bad["cands"][0, 0])
    bad["mask"][0, c] = 0
    with pytest.raises(ValueError, match="not legal"):
        sl.check_labels(bad)
    bad = dict(rows, gain=rows["gain"].astype(np.float64))
    with pytest.raises(ValueError, match="gain"):
        sl.check_labels(bad)


def test_cli_writes_resumable_shards(tmp_path):
    out = tmp_path / "lab"
    args = ["--out", str(out), "--hands", "3", "--shard-hands", "2", "--samples", "2",
            "--draws", "1", "--threads", "1"]  # fmt: skip
    assert sl.main(args)["shards"] == 2
    first = sl.load_labels(out)
    assert set(first["hand"]) <= {0, 1, 2} and len(first["obs"]) > 0
    with pytest.raises(SystemExit):  # existing labels need --resume
        sl.main(args)
    (out / "shard-00001.npz").unlink()
    assert sl.main([*args, "--resume"])["new_rows"] > 0
    for k, v in sl.load_labels(out).items():
        np.testing.assert_array_equal(v, first[k])
    with pytest.raises(SystemExit):  # other settings
        sl.main([*args[:-2], "--threads", "1", "--samples", "3", "--resume"])
    with pytest.raises(ValueError, match="no label shards"):
        sl.load_labels(tmp_path)
    # an unrenamed temporary shard is not read; a damaged shard is a ValueError
    (out / "tmp-shard-00009.npz").write_bytes((out / "shard-00000.npz").read_bytes())
    assert len(sl.load_labels(out)["obs"]) == len(first["obs"])
    (out / "shard-00002.npz").write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ValueError, match="not a label shard"):
        sl.load_labels(out)
    (out / "shard-00002.npz").unlink()
    # extending a run whose last shard was partial makes that shard again, whole
    sl.main([*args[:3], "5", *args[4:], "--resume"])
    assert sorted(set(sl.load_labels(out)["hand"].tolist())) == [0, 1, 2, 3, 4]
    (out / "meta.json").write_text("[1]")
    with pytest.raises(SystemExit):
        sl.main([*args, "--resume"])


def test_dense_targets_hand_built():
    cands = np.full((2, 32), -1, np.int16)
    cands[0, :3] = [5, 7, 60]
    cands[1, :1] = [86]
    gain = np.zeros((2, 32), np.float32)
    gain[0, :3] = [0.0, 1.5, -2.0]
    is_c, g, base = obj.dense_targets(cands, gain, np.array([0, 0], np.int8))
    assert is_c[0].sum() == 3 and is_c[0, [5, 7, 60]].all() and is_c[1, 86] and is_c[1].sum() == 1
    assert g[0, 7] == 1.5 and g[0, 60] == -2.0 and g[0].sum() == -0.5
    assert base.tolist() == [5, 86]


def test_margin_table_bookkeeping(monkeypatch):
    # two hands; the policy picks column 1 everywhere; per seat-hand: sums / (4 seats x p_label 0.5)
    gain_d = np.zeros((3, 88), np.float32)
    gain_d[:, 1] = [1.0, 2.0, -1.0]
    is_c = np.zeros((3, 88), bool)
    is_c[:, [0, 1]] = True
    val = {"hand": np.array([4, 4, 9]), "gain_d": gain_d, "is_c": is_c,
           "base_act": np.zeros(3, np.int64)}  # fmt: skip
    monkeypatch.setattr(obj, "choices", lambda net, data, m: np.ones(3, np.int64))
    (row,) = obj.margin_table(None, val, 0.5, margins=(0.3,))
    assert row["gain_per_hand"] == pytest.approx((1.5 + -0.5) / 2)
    assert row["deviation_rate"] == 1.0 and row["off_candidate"] == 0
    assert row["ci95"] == pytest.approx(1.96 * np.std([1.5, -0.5], ddof=1) / np.sqrt(2))
    assert "gain_over_init" not in row
    # paired with a reference that plays column 1 at row 0 and column 0 elsewhere: row 0 adds 0
    gain_d[:, 0] = [7.0, 0.5, 0.25]
    (row,) = obj.margin_table(None, val, 0.5, margins=(0.3,), ref_choice=np.array([1, 0, 0]))
    assert row["gain_per_hand"] == pytest.approx(0.5)  # unchanged: the network's own gains
    assert row["gain_over_init"] == pytest.approx(((2.0 - 0.5) + (-1.0 - 0.25)) / 2 / 2)
    half = 1.96 * np.std([1.5 / 2, -1.25 / 2], ddof=1) / np.sqrt(2)
    assert row["gain_over_init_ci95"] == pytest.approx(half)
    assert row["init_agreement"] == pytest.approx(1 / 3)


def test_init_choices_is_the_init_network_s_own_play(rows, tmp_path, capsys):
    """The reference of ``gain_over_init`` plays as the network does, at its stored margin."""
    torch.manual_seed(3)
    net = PolicyNet(PolicyConfig(hidden=8, layers=1, aux=True, prior=True))
    with torch.no_grad():
        net.prior_gain.fill_(0.7)
    meta = {"rules": RuleConfig().to_dict(), "method": "test", "command": "test",
            "commit": "x", "wall_clock_s": 0.0}  # fmt: skip
    save_checkpoint(tmp_path / "p.pt", net, meta)
    val = obj.prepare(rows, net)
    got = obj.init_choices(str(tmp_path / "p.pt"), val)
    net.eval()
    assert np.array_equal(got, obj.choices(net, val, 0.7))
    # a random network's gains are small: at its margin of 0.7 it plays the heuristic, at 0 not
    assert (got == val["base_act"]).all() and (obj.choices(net, val, 0.0) != got).any()
    assert (val["mask"][np.arange(len(got)), got] == 1).all()
    assert obj.init_choices(str(tmp_path / "none.pt"), val) is None
    assert "no gain over the init network" in capsys.readouterr().err


def test_regression_learns_where_to_leave_the_heuristic(rows):
    """Synthetic gains: candidate 1 gains 3 points, others lose 1: the fit deviates at margin 1, not at 10."""
    torch.manual_seed(0)
    r = {k: v.copy() for k, v in rows.items()}
    multi = (r["cands"] >= 0).sum(1) >= 2
    r = {k: v[multi] for k, v in r.items()}
    r["base"][:] = 0
    r["cands"][:, 0] = heuristic_choices(r["obs"], r["mask"])
    r = {k: v[(r["cands"][:, 1:] != r["cands"][:, :1]).all(1) | (r["cands"][:, 1:] < 0).all(1)] for k, v in r.items()}  # fmt: skip
    r["gain"][:] = np.where(r["cands"] >= 0, -1.0, 0.0)
    r["gain"][:, 0] = 0.0
    r["gain"][:, 1] = 3.0
    net = PolicyNet(PolicyConfig(hidden=64, layers=2, aux=True, prior=True))
    data = obj.prepare(r, net)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    idx = np.arange(len(r["obs"]))
    for _ in range(300):
        loss, _, _ = obj.distill_loss(net, *obj.tensors(data, idx), 1.0, 1.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    target = r["cands"][:, 1].astype(np.int64)
    assert (obj.choices(net, data, 1.0) == target).mean() > 0.95
    assert (obj.choices(net, data, 10.0) == data["base_act"]).all()
    picked = obj.choices(net, data, 0.0)
    assert (r["mask"][np.arange(len(picked)), picked] == 1).all()


def test_prepare_rejects_rows_that_do_not_belong_together(rows):
    bad = {k: v.copy() for k, v in rows.items()}
    two = np.flatnonzero((bad["cands"] >= 0).sum(1) >= 2)[0]
    bad["base"][two] = 1 - bad["base"][two]
    net = PolicyNet(PolicyConfig(hidden=16, layers=1, prior=True))
    with pytest.raises(ValueError, match="heuristic action"):
        obj.prepare(bad, net)


def _labels_and_init(tmp_path, hands: int, shard_hands: int):
    """A tiny label set and a fresh prior network's checkpoint: the distillation's inputs."""
    lab = tmp_path / "lab"
    sl.main(["--out", str(lab), "--hands", str(hands), "--shard-hands", str(shard_hands),
             "--samples", "2", "--draws", "1", "--threads", "1"])  # fmt: skip
    init = PolicyNet(PolicyConfig(hidden=32, layers=1, aux=True, prior=True))
    meta = {"rules": RuleConfig().to_dict(), "method": "test", "command": "test",
            "commit": "test", "wall_clock_s": 0.0}  # fmt: skip
    save_checkpoint(tmp_path / "init.pt", init, meta)
    return lab


def test_distill_cli_end_to_end_and_resume(tmp_path):
    lab = _labels_and_init(tmp_path, 20, 10)
    run = tmp_path / "run"
    common = ["--labels", str(lab), "--run", str(run), "--anchor-decisions", "500",
              "--threads", "1", "--val-mod", "4", "--margins", "0.5", "1", "--select-walls", "2"]  # fmt: skip
    report = sd.main([*common, "--init", str(tmp_path / "init.pt"), "--epochs", "1"])
    assert report["chosen"]["margin"] in (0.5, 1.0) and len(report["margins"]) == 2
    dup = [r["eval_adjusted"] for r in report["margins"]]  # chosen by the advantage sum
    assert (
        report["chosen"]["eval_adjusted"] == max(dup) and report["select_estimator"] == "advantage"
    )
    agent = TorchAgent.load(run / "distilled.pt")
    assert float(agent.net.prior_gain.detach()) == report["chosen"]["margin"]
    assert json.loads((run / "report.json").read_text())["chosen"] == report["chosen"]
    # the held-out gain over --init's own play (the init plays at its margin 0: not the heuristic)
    assert all(math.isfinite(r["gain_over_init"]) for r in report["margins"])
    assert all(0.0 <= r["init_agreement"] <= 1.0 for r in report["margins"])
    epochs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert all(math.isfinite(e["val_gain_over_init"]) for e in epochs) and epochs
    sd.main([*common, "--resume", "--epochs", "2"])
    lines = (run / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [1, 2]
    with pytest.raises(SystemExit):  # neither --init nor --resume
        sd.main(common)
    with pytest.raises(SystemExit):  # not a label directory
        sd.main(["--labels", str(tmp_path), "--run", str(run), "--resume"])
    with pytest.raises(SystemExit):  # resuming with another held-out split
        sd.main([*common[:-7], "--val-mod", "5", "--resume", "--epochs", "3"])
    with pytest.raises(SystemExit):  # nothing to resume
        sd.main([*common[:2], "--run", str(tmp_path / "empty"), "--resume"])
    with pytest.raises(SystemExit):
        sd.main([*common, "--init", str(tmp_path / "init.pt"), "--margins", "nan"])


def test_evaluate_vs_heuristic_adds_the_advantage_sum_to_the_same_match():
    """The estimate leaves the match's own figures alone and adds an adjusted one; a network
    that leaves the heuristic (random weights, margin 0) gets one that differs from plain."""
    from sichuan_env.train.common import evaluate_vs_heuristic

    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1, aux=True, prior=True))
    with torch.no_grad():
        net.prior_gain.fill_(0.0)
    plain = evaluate_vs_heuristic(net, 4, RuleConfig(), seed=3)
    both = evaluate_vs_heuristic(net, 4, RuleConfig(), seed=3, estimator="advantage")
    assert set(plain) == {"eval_points_per_hand", "eval_ci95", "eval_win_rate", "eval_deal_in_rate"}
    assert {k: both[k] for k in plain} == plain
    assert np.isfinite(both["eval_adjusted"]) and both["eval_adjusted_ci95"] > 0
    assert both["eval_adjusted"] != plain["eval_points_per_hand"]
    with pytest.raises(ValueError, match="estimator"):
        evaluate_vs_heuristic(net, 4, RuleConfig(), estimator="luck")


def test_distill_cli_selects_by_plain_points_on_request(tmp_path):
    lab = _labels_and_init(tmp_path, 8, 8)
    report = sd.main(["--labels", str(lab), "--run", str(tmp_path / "run"), "--init",
                      str(tmp_path / "init.pt"), "--epochs", "1", "--anchor-decisions", "500",
                      "--threads", "1", "--val-mod", "4", "--margins", "0.5", "1",
                      "--select-walls", "2", "--select-estimator", "plain"])  # fmt: skip
    dup = [r["eval_points_per_hand"] for r in report["margins"]]
    assert report["chosen"]["eval_points_per_hand"] == max(dup)
    assert report["select_estimator"] == "plain"
    assert not any("eval_adjusted" in r for r in report["margins"])


@pytest.mark.parametrize("name", ["distill", "exit"])
def test_shipped_distill_agent_leaves_the_heuristic_rarely_and_legally(name):
    from sichuan_env.agents import make_agent

    from sichuan_env.envs.vector import VectorEnv

    agent = make_agent(name, seed=0)
    assert agent.net.config.prior and agent.meta["method"] == "search_distill"
    assert float(agent.net.prior_gain.detach()) == pytest.approx(agent.meta["margin"])
    venv = VectorEnv(64, seed=0)
    obs, mask, _ = venv.reset()
    same = total = 0
    for _ in range(60):
        h = heuristic_choices(obs[:, :83], mask)
        a = agent.act_batch(obs, mask)
        assert (mask[np.arange(len(a)), a] == 1).all()
        multi = mask.sum(1) > 1
        same += int((a == h)[multi].sum())
        total += int(multi.sum())
        obs, mask, *_ = venv.step(h)
    assert total > 1000 and 0.9 < same / total < 1.0  # it deviates, and only rarely


def test_softmax_objective_puts_logit_differences_at_the_gains():
    """The cross-entropy to softmax(gain / T) is minimised where l[a] - l[h] = gain (T in points)."""

    class Free(torch.nn.Module):  # free logits, one row each
        def __init__(self, rows):
            super().__init__()
            self.l = torch.nn.Parameter(torch.zeros(rows, 88))

        def logits(self, obs, aux, prior=None):
            return self.l

    net = Free(2)
    mask = torch.zeros(2, 88, dtype=torch.int8)
    mask[:, :3] = 1
    is_c = torch.zeros(2, 88, dtype=torch.bool)
    is_c[0, :2] = True
    is_c[1, 0] = True  # a single candidate: no cross-entropy
    gain = torch.zeros(2, 88)
    gain[0, 1] = 1.5
    base = torch.zeros(2, dtype=torch.long)
    obs = torch.zeros(2, 83, 27, dtype=torch.uint8)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    for _ in range(600):
        loss, _, _ = obj.softmax_loss(net, obs, None, mask, is_c, gain, base, 1.0, 1.0, 2.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    lg = net.l.detach()[0]
    assert float(lg[1] - lg[0]) == pytest.approx(1.5, abs=0.05)
    assert float(lg[2] - lg[0]) <= -0.95  # the non-candidate is held a point below
    assert float(net.l.detach()[1, 1] - net.l.detach()[1, 0]) <= -0.95
    single = obj.softmax_loss(
        Free(1), obs[1:], None, mask[1:], is_c[1:], gain[1:], base[1:], 1.0, 0.0
    )
    assert float(single[1].detach()) == 0.0 and set(obj.OBJECTIVES) == {"regression", "softmax"}
