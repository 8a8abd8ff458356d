"""Behaviour cloning: a synthetic task is learnt; a short run of the heuristic works end to end."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.train.policy import bc

from sichuan_env.encoding import observation as O


def _synthetic(n, rng):
    """The target discards the tile marked in the first hand row; other actions are also legal."""
    target = rng.integers(0, 27, n)
    obs = (rng.random((n, 83, 27)) < 0.1).astype(np.uint8)
    obs[:, O.HAND] = 0
    obs[np.arange(n), O.HAND, target] = 1
    masks = (rng.random((n, 88)) < 0.3).astype(np.int8)
    masks[np.arange(n), target] = 1
    return obs, masks, target.astype(np.int64)


def test_bc_learns_a_synthetic_task():
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=64, layers=2))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    val = _synthetic(2000, rng)
    _, before = bc.evaluate(net, val)
    for _ in range(20):
        bc.fit_chunk(net, opt, _synthetic(2000, rng), 256, 1, rng)
    _, acc = bc.evaluate(net, val)
    assert before < 0.3 and acc > 0.95, (before, acc)


def test_bc_of_the_heuristic_runs_end_to_end_and_resumes(tmp_path, capsys):
    run = tmp_path / "bc"
    args = ["--run", str(run), "--envs", "32", "--chunk-steps", "16", "--chunks", "2"]
    args += ["--hidden", "32", "--layers", "1", "--val-decisions", "500", "--threads", "1"]
    args += ["--quiet", "--lr", "3e-3", "--aux"]
    bc.main([*args, "--epochs", "3"])
    said = capsys.readouterr().out
    assert f"wrote {run}/ (" in said and "best.pt" in said and "metrics.jsonl" in said
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    # plumbing only: that behaviour cloning learns is test_bc_learns_a_synthetic_task's job
    assert all(0.0 <= r["val_acc"] <= 1.0 and np.isfinite(r["val_loss"]) for r in rows)
    bc.main([*args, "--epochs", "4", "--resume"])
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2, 3, 4]
    agent = TorchAgent.load(run / "best.pt")
    assert agent.meta["method"] == "bc" and agent.meta["teacher"] == "heuristic"
    assert agent.net.config.aux
    obs = np.zeros((83, 27), np.uint8)
    mask = np.zeros(88, np.int8)
    mask[[1, 2]] = 1
    assert agent.act(obs, mask) in (1, 2)


def test_expert_iteration_distils_a_search_teacher_into_a_trained_policy(tmp_path):
    """--teacher search (reads the engine state) with --init: starts from the checkpoint's weights."""
    init = tmp_path / "init"
    args = ["--envs", "8", "--chunk-steps", "4", "--chunks", "1", "--val-decisions", "40"]
    args += ["--threads", "1", "--quiet", "--hidden", "32", "--layers", "1"]
    bc.main([*args, "--run", str(init), "--epochs", "1"])
    start = TorchAgent.load(init / "last.pt").net.state_dict()
    run = tmp_path / "expert"
    ex = [
        "--run",
        str(run),
        "--teacher",
        "search",
        "--search-samples",
        "2",
        "--init",
        str(init / "last.pt"),
    ]
    bc.main([*args[:-4], *ex, "--epochs", "1", "--lr", "1e-2"])
    agent = TorchAgent.load(run / "last.pt")
    assert agent.meta["teacher"] == "search" and agent.meta["init"] == str(init / "last.pt")
    after = agent.net.state_dict()
    assert after.keys() == start.keys()  # the same architecture as the checkpoint
    assert any(not torch.equal(after[k], start[k]) for k in after)  # and it was trained
    with pytest.raises(SystemExit):
        bc.main([*args, *ex, "--resume"])  # --init and --resume exclude each other
    with pytest.raises(SystemExit):
        bc.main(
            [*args, "--run", str(tmp_path / "x"), "--search-samples", "4"]
        )  # not a search teacher


class _Fixed(torch.nn.Module):
    """A stand-in network whose logits are a given table (one row per decision)."""

    def __init__(self, table):
        super().__init__()
        self.table = torch.nn.Parameter(torch.tensor(table, dtype=torch.float32))

    def logits(self, obs, aux=None, mask=None, prior=None):
        return self.table * 1.0


def test_the_hinge_loss_is_the_teachers_shortfall_over_legal_actions_only():
    """Row 0 leads by more than the margin (0); row 1 trails by 0.3 (0.3 + 0.1); row 2 leads by 0.05
    (0.1 - 0.05); an illegal action's larger logit is ignored (row 3: 0)."""
    table = np.full((4, 88), -5.0)
    table[0, [3, 4]] = [1.0, 0.5]
    table[1, [3, 4]] = [1.0, 1.3]
    table[2, [3, 4]] = [1.05, 1.0]
    table[3, [3, 4, 9]] = [1.0, 0.2, 7.0]
    masks = np.zeros((4, 88), np.int8)
    masks[:, [3, 4, 5]] = 1
    net = _Fixed(table)
    obs = torch.zeros((4, 83, 27), dtype=torch.uint8)
    teacher = torch.full((4,), 3)
    loss, acc = bc.bc_loss(net, obs, torch.from_numpy(masks), teacher, margin=0.1)
    assert loss.item() == pytest.approx((0.0 + 0.4 + 0.05 + 0.0) / 4, abs=1e-6)
    assert acc.item() == pytest.approx(0.75)
    loss.backward()
    g = net.table.grad
    assert g[0].abs().sum() == 0 and g[3].abs().sum() == 0  # rows that clear the margin: no push
    assert g[1, 3] < 0 < g[1, 4] and g[1, 5] == 0  # the teacher's logit up, the best other down
    ce, _ = bc.bc_loss(net, obs, torch.from_numpy(masks), teacher)  # the default: cross-entropy
    assert ce.item() > 0.1


def test_the_hinge_leaves_a_network_that_already_agrees_by_the_margin_unchanged():
    rng = np.random.default_rng(1)
    torch.manual_seed(1)
    net = PolicyNet(PolicyConfig(hidden=32, layers=1))
    obs, masks, _ = _synthetic(300, rng)
    with torch.no_grad():
        lg = net.logits(torch.from_numpy(obs), None, torch.from_numpy(masks))
    own = bc.masked_logits(lg, torch.from_numpy(masks)).argmax(1).numpy()  # its own choices
    start = {k: v.clone() for k, v in net.state_dict().items()}
    opt = torch.optim.SGD(net.parameters(), lr=0.1)  # SGD: no update without a gradient
    loss, acc, _ = bc.fit_chunk(net, opt, (obs, masks, own), 64, 1, rng, margin=1e-6)
    assert acc == pytest.approx(1.0) and loss < 1e-6
    assert all(torch.equal(v, start[k]) for k, v in net.state_dict().items())
    bc.fit_chunk(net, opt, (obs, masks, own), 64, 1, rng)  # the cross-entropy moves it
    assert any(not torch.equal(v, start[k]) for k, v in net.state_dict().items())


def test_a_margin_that_is_not_positive_is_refused(tmp_path):
    for bad in ("0", "-0.1", "nan"):
        with pytest.raises(SystemExit) as exc:
            bc.main(["--run", str(tmp_path / "x"), "--margin", bad])
        assert exc.value.code == 2
    assert not (tmp_path / "x").exists()
