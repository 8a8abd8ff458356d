"""The expert-iteration driver (``sichuan_env.train.policy.exit``) on a tiny configuration:
two rounds end to end, each round's network starting from the previous one, the state file
after every stage, resume from any stage, and refusals of other settings and damaged state."""

from __future__ import annotations

import json

import pytest
import sichuan_env.train.policy.exit as ex
from sichuan_env.agents.nn.torch_agent import read_config

pytestmark = pytest.mark.train

TINY = ["--hands", "8", "--samples", "2", "--epochs", "1", "--select-walls", "4",
        "--eval-walls", "4", "--anchor-decisions", "500", "--margins", "0.3", "--threads", "1"]  # fmt: skip


def test_two_rounds_then_resume_and_refusals(tmp_path, capsys):
    run = tmp_path / "exit"
    doc = ex.main(["--run", str(run), "--rounds", "1", *TINY])
    assert [r["done"] for r in doc["rounds"]] == [list(ex.STAGES)]
    r1 = doc["rounds"][0]
    assert r1["labels"]["new_rows"] > 0 and r1["fit"]["margin"] == 0.3
    for k in ("vs_heuristic", "vs_previous"):
        assert r1[k]["walls"] == 4 and -100 < r1[k]["points_per_hand"] < 100
        assert -100 < r1[k]["adjusted"] < 100 and r1[k]["adjusted_ci95"] >= 0
        assert r1[k]["estimator"] == "advantage"  # the default
    assert "eval_adjusted" in r1["fit"]["selection"]  # the margin chosen by the same estimate
    assert "adj." in capsys.readouterr().out  # the table shows the adjusted figures
    cfg = read_config(run / "round-01" / "fit" / "distilled.pt")
    assert cfg["init"].endswith("distill.pt") and cfg["method"] == "search_distill"
    assert cfg["command"].startswith("python -m sichuan_env.train.policy.search_distill --labels")
    # a second round starts from the first round's network and pools both rounds' labels
    doc = ex.main(["--run", str(run), "--rounds", "2", "--resume", *TINY])
    assert len(doc["rounds"]) == 2 and doc["rounds"][1]["done"] == list(ex.STAGES)
    cfg2 = read_config(run / "round-02" / "fit" / "distilled.pt")
    assert cfg2["init"] == str(run / "round-01" / "fit" / "distilled.pt")
    assert "round-01" in cfg2["labels"] and "round-02" in cfg2["labels"]
    # resume from an interrupted stage: drop round 2's eval, it alone runs again
    state = json.loads((run / "exit.json").read_text())
    state["rounds"][1]["done"] = ["labels", "fit"]
    (run / "exit.json").write_text(json.dumps(state))
    before = (run / "round-02" / "fit" / "distilled.pt").read_bytes()
    capsys.readouterr()
    doc = ex.main(["--run", str(run), "--rounds", "2", "--resume", *TINY])
    out = capsys.readouterr().out
    assert "round 2: eval" in out and "round 2: fit" not in out and "[exit] round 1:" not in out
    assert (run / "round-02" / "fit" / "distilled.pt").read_bytes() == before
    # refusals: no --resume, other settings, a damaged state file
    with pytest.raises(SystemExit):
        ex.main(["--run", str(run), "--rounds", "2", *TINY])
    with pytest.raises(SystemExit):
        ex.main(["--run", str(run), "--rounds", "2", "--resume", *TINY[:-2], "--threads", "1",
                 "--samples", "3"])  # fmt: skip
    assert "samples" in capsys.readouterr().err
    (run / "exit.json").write_text('{"settings": {}, "rounds": [{"round": 5, "done": []}]}')
    with pytest.raises(SystemExit):
        ex.main(["--run", str(run), "--rounds", "2", "--resume", *TINY])
    assert "malformed" in capsys.readouterr().err


def test_resume_needs_a_run_and_init_must_exist(tmp_path):
    with pytest.raises(SystemExit):
        ex.main(["--run", str(tmp_path / "none"), "--resume", *TINY])
    with pytest.raises(SystemExit):
        ex.main(["--run", str(tmp_path / "x"), "--init", str(tmp_path / "missing.pt"), *TINY])
    assert not (tmp_path / "x" / "exit.json").exists()


def test_a_round_with_network_rollouts(tmp_path):
    """--rollout network reaches the labels (their settings say so) and the round completes."""
    run = tmp_path / "net"
    doc = ex.main(["--run", str(run), "--rounds", "1", "--rollout", "network", *TINY])
    assert doc["rounds"][0]["done"] == list(ex.STAGES) and doc["settings"]["rollout"] == "network"
    meta = json.loads((run / "round-01" / "labels" / "meta.json").read_text())
    assert meta["settings"]["rollout"] == "network"


def test_a_round_labelled_after_wins_only(tmp_path):
    """--after-win reaches the labels and --anchor-before-win the fit (their files say so); an
    older state without those keys resumes as a run that labels every phase, unanchored."""
    run = tmp_path / "aw"
    # 30 hands, not 8: the fit holds out hands whose index is divisible by 10, and only hands
    # with a win before their end have after-win rows (8 hands gave 5 such, none held out)
    tiny = [*TINY[:1], "30", *TINY[2:]]
    aw = ["--after-win", "--anchor-before-win", "300"]
    doc = ex.main(["--run", str(run), "--rounds", "1", *aw, *tiny])
    assert doc["rounds"][0]["done"] == list(ex.STAGES) and doc["settings"]["after_win"] is True
    meta = json.loads((run / "round-01" / "labels" / "meta.json").read_text())
    assert meta["settings"]["after_win"] is True
    fit = json.loads((run / "round-01" / "fit" / "last.json").read_text())
    assert fit["anchor_before_win"] == 300 and "--anchor-before-win 300" in fit["command"]
    with pytest.raises(SystemExit):  # the same run without --after-win: other settings
        ex.main(["--run", str(run), "--rounds", "1", "--resume", *tiny])
    state = json.loads((run / "exit.json").read_text())
    for key in ("after_win", "anchor_before_win"):  # a state written before these settings
        del state["settings"][key]
    (run / "exit.json").write_text(json.dumps(state))
    doc = ex.main(["--run", str(run), "--rounds", "1", "--resume", *tiny])
    assert doc["settings"]["after_win"] is False and doc["settings"]["anchor_before_win"] == 0
    assert doc["rounds"][0]["done"] == list(ex.STAGES)


def test_value_leaf_rounds_refit_v_and_resume_to_the_same_v(tmp_path, capsys):
    """--search value-leaf: round k's labels read round k-1's refitted V (round 0: the shipped
    one), each round ends with a 'value' stage, and a stop inside it resumes to the same V."""
    import shutil

    import torch
    from sichuan_env.agents.checkpoint import SHIPPED_DIR, file_sha256
    from sichuan_env.agents.eval.table_value import TableModel

    run = tmp_path / "vl"
    vl = ["--search", "value-leaf", "--no-claims", "--value-hands", "64", "--value-epochs", "2"]
    doc = ex.main(["--run", str(run), "--rounds", "2", *vl, *TINY])
    stages = ex.stages_of(doc["settings"])
    assert stages == (*ex.STAGES, "value")
    assert [r["done"] for r in doc["rounds"]] == [list(stages)] * 2
    v1 = run / "round-01" / "value" / "table_value.pt"
    assert (
        doc["rounds"][0]["value"]["model"] == str(v1) and doc["rounds"][0]["value"]["hands"] == 64
    )
    metas = [json.loads((run / f"round-0{k}" / "labels" / "meta.json").read_text())["settings"]
             for k in (1, 2)]  # fmt: skip
    assert all(m["search"] == "value-leaf" for m in metas)
    assert metas[0]["value_sha256"] == file_sha256(f"{SHIPPED_DIR}/table_value.pt")
    assert metas[1]["value_sha256"] == file_sha256(v1)  # round 2 searched with round 1's V
    refit = TableModel.load(v1).doc["refit"]
    assert refit["init"] == "table_value" and refit["objective"] == "hand"
    # a stop inside round 2's value stage: the refit is run again and gives the same V
    v2 = run / "round-02" / "value" / "table_value.pt"
    before = TableModel.load(v2).net.state_dict()
    state = json.loads((run / "exit.json").read_text())
    state["rounds"][1]["done"] = list(stages[:-1])
    del state["rounds"][1]["value"], state["rounds"][1]["seconds"]["value"]
    (run / "exit.json").write_text(json.dumps(state))
    shutil.rmtree(v2.parent)
    capsys.readouterr()
    doc = ex.main(["--run", str(run), "--rounds", "2", "--resume", *vl, *TINY])
    out = capsys.readouterr().out
    assert "round 2: value" in out and "round 2: eval" not in out
    after = TableModel.load(v2).net.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    # the value-leaf search scores own turns only
    with pytest.raises(SystemExit):
        ex.main(["--run", str(tmp_path / "c"), "--search", "value-leaf", *TINY])
    assert "--no-claims" in capsys.readouterr().err
