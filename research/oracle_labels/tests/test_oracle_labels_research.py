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
