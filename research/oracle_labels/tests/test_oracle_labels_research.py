"""research/oracle_labels: the held-out gain over the init network, recomputed after a fit."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.research


def test_gain_over_init_agrees_with_the_fit_s_own_report(tmp_path):
    """The script and ``search_distill`` split the same held-out hands and score them alike."""
    pytest.importorskip("torch")
    import torch
    from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
    from sichuan_env.agents.nn.torch_agent import save_checkpoint
    from sichuan_env.train.policy import search_distill, search_labels

    from research.oracle_labels import gain_over_init
    from sichuan_env import RuleConfig

    lab = tmp_path / "lab"
    search_labels.main(["--out", str(lab), "--hands", "16", "--shard-hands", "8", "--samples",
                        "2", "--draws", "1", "--threads", "1"])  # fmt: skip
    torch.manual_seed(1)
    init = PolicyNet(PolicyConfig(hidden=16, layers=1, aux=True, prior=True))
    meta = {"rules": RuleConfig().to_dict(), "method": "test", "command": "test",
            "commit": "test", "wall_clock_s": 0.0}  # fmt: skip
    save_checkpoint(tmp_path / "init.pt", init, meta)
    run = tmp_path / "fit"
    report = search_distill.main(["--labels", str(lab), "--run", str(run), "--init",
                                  str(tmp_path / "init.pt"), "--epochs", "1", "--threads", "1",
                                  "--anchor-decisions", "200", "--val-mod", "3", "--margins",
                                  "0.05", "0.5", "--select-walls", "0"])  # fmt: skip
    out = tmp_path / "g.json"
    doc = gain_over_init.main([str(run), "--margins", "0.05", "0.5", "--out", str(out)])
    assert json.loads(out.read_text()) == doc and doc["held_out_rows"] > 0
    with pytest.raises(SystemExit) as info:  # an existing --out is refused, and kept
        gain_over_init.main([str(run), "--out", str(out)])
    assert info.value.code == 2 and json.loads(out.read_text()) == doc
    for mine, theirs in zip(doc["margins"], report["margins"], strict=True):
        assert mine["margin"] == theirs["margin"]
        for key in ("gain_per_hand", "gain_over_init", "gain_over_init_ci95", "init_agreement"):
            assert mine[key] == pytest.approx(theirs[key]), key


def test_a_branch_refits_the_last_round_on_its_own_labels_and_leaves_the_source_alone(tmp_path):
    """``branch`` keeps round 1 whole and round 2's labels; resumed, round 2 fits on those only."""
    pytest.importorskip("torch")
    import sichuan_env.train.policy.exit as ex
    from sichuan_env.agents.nn.torch_agent import read_config

    from research.oracle_labels import branch

    tiny = ["--hands", "8", "--samples", "2", "--epochs", "1", "--select-walls", "4",
            "--eval-walls", "4", "--anchor-decisions", "500", "--margins", "0.3", "--threads", "1"]  # fmt: skip
    src, dst = tmp_path / "src", tmp_path / "dst"
    ex.main(["--run", str(src), "--rounds", "2", *tiny])
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    assert "round-01" in read_config(src / "round-02" / "fit" / "distilled.pt")["labels"]
    with pytest.raises(SystemExit):  # a branch changes the aggregation or nothing
        branch.main([str(src), str(dst), "--through", "2"])
    with pytest.raises(SystemExit):  # a round whose labels are not there
        branch.main([str(src), str(dst), "--through", "3", "--no-aggregate"])
    assert not dst.exists()
    doc = branch.main([str(src), str(dst), "--through", "2", "--no-aggregate"])
    assert doc["settings"]["aggregate"] is False
    assert [r["done"] for r in doc["rounds"]] == [list(ex.STAGES), ["labels"]]
    assert not (dst / "round-02" / "fit").exists()
    with pytest.raises(SystemExit):  # an existing branch is never replaced
        branch.main([str(src), str(dst), "--through", "2", "--no-aggregate"])
    with pytest.raises(SystemExit):  # the branch keeps its own settings on resume
        ex.main(["--run", str(dst), "--rounds", "2", "--resume", *tiny])
    resumed = ex.main(["--run", str(dst), "--rounds", "2", "--resume", "--no-aggregate", *tiny])
    assert [r["done"] for r in resumed["rounds"]] == [list(ex.STAGES)] * 2
    assert resumed["rounds"][1]["labels"] == doc["rounds"][1]["labels"]  # not labelled again
    cfg = read_config(dst / "round-02" / "fit" / "distilled.pt")
    assert cfg["labels"] == str(dst / "round-02" / "labels")  # one folder: round 2's only
    assert cfg["init"] == str(dst / "round-01" / "fit" / "distilled.pt")
    for k in ("round-01/fit/distilled.pt", "round-02/labels/meta.json"):
        assert (dst / k).read_bytes() == before[src / k]
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before
