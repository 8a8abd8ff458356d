"""The ensemble's student: a tiny run, its resume, its refusals, its checks of what it reads."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.research
torch = pytest.importorskip("torch")

TINY = ["--rows", "600", "--shard-rows", "300", "--envs", "8", "--batch", "128"]


def _run(path, *extra):
    from research.ensemble import distill

    return distill.main(["--run", str(path), *TINY, *extra])


def _weights(path):
    return torch.load(path, weights_only=True)


def test_a_resumed_run_is_the_run_never_stopped(tmp_path):
    from research.ensemble import distill

    assert _run(tmp_path / "a", "--epochs", "2") == 0
    assert _run(tmp_path / "b", "--epochs", "1") == 0
    assert _run(tmp_path / "b", "--epochs", "2", "--resume") == 0
    a, b = _weights(tmp_path / "a" / "last.pt"), _weights(tmp_path / "b" / "last.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    state = json.loads((tmp_path / "b" / "run.json").read_text())
    assert [m["epoch"] for m in state["metrics"]] == [0, 1, 2] and state["epochs_done"] == 2
    # the student moved from its init, and the teacher's targets are its mean logits
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    init = _weights(SHIPPED_DIR / "oracle_r3.pt")
    assert any(not torch.equal(init[k], a[k]) for k in a)
    shard = distill.load_shard(tmp_path / "a" / "data" / "shard-000.npz")
    assert len(shard["obs"]) == 300 and (shard["mask"].sum(axis=1) > 1).all()
    from sichuan_env.agents.registry import make_agent

    teacher = make_agent("ensemble6", seed=0)
    want = teacher.mean_logits(shard["obs"][:50], shard["mask"][:50])
    legal = torch.from_numpy(shard["mask"][:50]) != 0
    assert torch.allclose(torch.from_numpy(shard["target"][:50])[legal], want[legal])
    doc = json.loads((tmp_path / "a" / "last.json").read_text())
    assert doc["method"] == "ensemble_distill" and doc["teacher"] == "ensemble6"


def test_a_stop_after_state_pt_finishes_that_epoch_without_redoing_it(tmp_path):
    """Stopped after ``state.pt`` but before ``run.json``: the resume equals the run never stopped."""
    assert _run(tmp_path / "a", "--epochs", "2") == 0
    b = tmp_path / "b"
    assert _run(b, "--epochs", "2") == 0
    state = json.loads((b / "run.json").read_text())
    state["metrics"], state["epochs_done"] = state["metrics"][:2], 1  # run.json of epoch 1
    (b / "run.json").write_text(json.dumps(state))
    (b / "last.pt").unlink()
    assert _run(b, "--epochs", "2", "--resume") == 0
    again = json.loads((b / "run.json").read_text())
    assert [m["epoch"] for m in again["metrics"]] == [0, 1, 2] and again["epochs_done"] == 2
    one, two = _weights(tmp_path / "a" / "last.pt"), _weights(b / "last.pt")
    assert all(torch.equal(one[k], two[k]) for k in one)


def test_refusals(tmp_path):
    assert _run(tmp_path / "r", "--epochs", "1") == 0
    with pytest.raises(SystemExit, match="exists"):
        _run(tmp_path / "r", "--epochs", "1")
    with pytest.raises(SystemExit, match=r"other settings.*lr"):
        _run(tmp_path / "r", "--epochs", "2", "--resume", "--lr", "0.001")
    with pytest.raises(SystemExit, match="EnsembleAgent"):
        _run(tmp_path / "h", "--teacher", "heuristic")
    with pytest.raises(SystemExit, match="nothing to resume"):
        _run(tmp_path / "none", "--resume")
    (tmp_path / "r" / "state.pt").write_bytes(b"\x00" * 10)
    with pytest.raises(SystemExit, match=r"state\.pt: damaged"):
        _run(tmp_path / "r", "--epochs", "2", "--resume")
    (tmp_path / "r" / "state.pt").unlink()
    with pytest.raises(SystemExit, match=r"state\.pt is missing"):
        _run(tmp_path / "r", "--epochs", "2", "--resume")
    (tmp_path / "r" / "data" / "shard-002.npz").write_bytes(b"not a shard")  # held out
    with pytest.raises(ValueError, match="not a shard"):
        _run(tmp_path / "r", "--epochs", "2", "--resume")
    (tmp_path / "r" / "run.json").write_text('{"settings": 3}')
    with pytest.raises(SystemExit, match=r"not this script's run\.json"):
        _run(tmp_path / "r", "--epochs", "2", "--resume")
    assert not (tmp_path / "h").exists()  # a bad --teacher leaves no folder behind


def test_a_damaged_shard_is_refused(tmp_path):
    from research.ensemble import distill

    good = {"obs": np.zeros((2, 83, 27), np.uint8), "mask": np.ones((2, 88), np.int8),
            "target": np.zeros((2, 88), np.float32)}  # fmt: skip
    distill.save_shard(tmp_path / "ok.npz", good)
    assert len(distill.load_shard(tmp_path / "ok.npz")["obs"]) == 2
    for key, bad in (("target", np.full((2, 88), np.nan, np.float32)),
                     ("mask", np.eye(2, 88, dtype=np.int8)),
                     ("obs", np.full((2, 83, 27), 7, np.uint8)),
                     ("mask", np.ones((2, 88), np.float32))):  # fmt: skip
        distill.save_shard(tmp_path / "bad.npz", {**good, key: bad})
        with pytest.raises(ValueError, match="damaged"):
            distill.load_shard(tmp_path / "bad.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="not a shard"):
        distill.load_shard(tmp_path / "empty.npz")
