"""The variance refit of the whole-table value: its residuals are the estimate's own (the
model's corrections, differentiable), per-wall sums follow the rotations, a resumed refit is the
undisturbed one, it never ships weights worse than it started with, and bad records are one
line."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import torch
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.agents.eval.table_value import TableModel
from sichuan_env.train.table_value import data as tv_data
from sichuan_env.train.table_value import fit as tv_fit
from sichuan_env.train.table_value import variance as tv_var
from sichuan_env.train.table_value.variance_loss import (
    load_block,
    load_blocks,
    loss_of,
    residuals,
    score,
    wall_sums,
)

from tests.hostile import exits_in_one_line

MIX = ["--mix", "heuristic=1,random=1", "--block-walls", "4", "--no-progress"]
SMALL = ["--val-every", "2", "--seat", "8", "--head", "8", "--batch", "256", "--threads", "1",
         "--no-progress", "--device", "cpu", "--epochs", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A data folder with records (3 blocks of 4 walls) and a tiny model fitted on it."""
    root = tmp_path_factory.mktemp("tvv")
    assert tv_data.main(["--out", str(root / "data"), "--hands", "48", "--records", *MIX]) == 0
    assert tv_fit.main(["--data", str(root / "data"), "--out", str(root / "fit"), *SMALL]) == 0
    return root


def test_wall_sums_add_each_lineup_position_over_the_rotations():
    # two walls, hands in a shuffled order; wall 1 lacks rotation 3
    slots = np.array([5, 0, 3, 1, 6, 2, 4])
    res = torch.arange(len(slots) * 4, dtype=torch.float32).reshape(-1, 4)
    got = wall_sums(res, slots)
    want = np.zeros(4)
    for i, s in enumerate(slots):
        if s // 4 == 0:
            for seat in range(4):
                want[(seat + s % 4) % 4] += res[i, seat].item()
    assert got.shape == (1, 4)
    np.testing.assert_allclose(got[0].numpy(), want)


@pytest.mark.train
def test_residuals_are_the_models_own_corrections(folder):
    model = TableModel.load(folder / "fit" / "table_value.pt")
    recs, ids, _, slots = load_block(folder / "data" / "records" / "block-00001.json.gz")
    assert len(recs) == 16 and list(slots) == sorted(slots)  # whole walls in a row
    ev = extract(recs, model.rules)
    corr = model.corrections(recs, ids)
    with torch.no_grad():
        draw_only = residuals(model, ev, ids, deal=False).numpy()
        anchored = residuals(model, ev, ids).numpy()
    np.testing.assert_allclose(draw_only, ev.final - corr.draw, atol=2e-3)
    assert np.abs(corr.draw).max() > 0.01  # real corrections were compared
    # anchored on the lineup-aware deal value instead of points alone
    assert not np.allclose(anchored, draw_only)


@pytest.mark.train
def test_the_wall_loss_reaches_every_weight(folder):
    model = TableModel.load(folder / "fit" / "table_value.pt")
    blocks = load_blocks(folder / "data")
    recs, ids, _, slots = blocks[1]
    model.net.train()
    loss = loss_of(model, "wall", (recs, ids, slots), model.rules, 0.0, torch.Generator())
    loss.backward()
    grads = [p.grad for p in model.net.parameters() if p.requires_grad]
    assert torch.isfinite(loss) and loss.item() > 0
    assert sum(g is not None and bool(g.abs().sum() > 0) for g in grads) >= len(grads) // 2
    model.net.eval()
    s = score(model, blocks[:1], model.rules)
    assert s["wall_plain"] > 0 and 0 < s["wall_ratio"] < 5
    # a block of one wall has no spread between walls: the ratio is undefined (NaN), not a crash
    one = [(recs[:4], ids[:4], blocks[1][2], slots[:4])]
    assert sorted(slots[:4] // 4) == [slots[0] // 4] * 4  # the four rotations of one wall
    s1 = score(model, one, model.rules)
    assert s1["wall_plain"] == 0 and np.isnan(s1["wall_ratio"]) and np.isfinite(s1["hand"])


@pytest.mark.train
def test_a_resumed_refit_is_the_undisturbed_one(folder, tmp_path, capsys):
    base = ["--data", str(folder / "data"), "--init", str(folder / "fit" / "table_value.pt"),
            "--val-every", "2", "--chunk", "8", "--threads", "1", "--no-progress",
            "--device", "cpu", "--lr", "1e-3"]  # fmt: skip
    assert tv_var.main([*base, "--out", str(tmp_path / "a"), "--epochs", "2"]) == 0
    tv_var.main([*base, "--out", str(tmp_path / "b"), "--epochs", "1"])
    with pytest.raises(SystemExit):
        tv_var.main([*base, "--out", str(tmp_path / "b"), "--epochs", "2", "--resume",
                     "--objective", "hand"])  # fmt: skip
    assert "--objective wall (now hand)" in capsys.readouterr().err
    tv_var.main([*base, "--out", str(tmp_path / "b"), "--epochs", "2", "--resume"])
    a = torch.load(tmp_path / "a" / "table_value.pt", weights_only=True)
    b = torch.load(tmp_path / "b" / "table_value.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    model = TableModel.load(tmp_path / "a" / "table_value.pt")  # every checkpoint check
    doc = model.doc["refit"]
    history = [json.loads(x) for x in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    assert [h["epoch"] for h in history] == [0, 1, 2] and doc["history"] == history
    best = min(history, key=lambda h: h["wall_adjusted"])
    assert doc["best_epoch"] == best["epoch"]  # never worse than the start (epoch 0)
    assert abs(sum(model.deal_baseline)) < 1e-6


@pytest.mark.train
def test_damaged_records_and_an_existing_run_are_one_line(folder, tmp_path, capsys):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(folder / "data", data)
    base = ["--data", str(data), "--init", str(folder / "fit" / "table_value.pt"),
            "--no-progress", "--device", "cpu", "--val-every", "2"]  # fmt: skip
    path = data / "records" / "block-00002.json.gz"
    path.write_bytes(path.read_bytes()[:40])
    exits_in_one_line(tv_var.main, [*base, "--out", str(tmp_path / "r")], 1, capsys,
                      r"block-00002\.json\.gz cannot be read")  # fmt: skip
    doc = {"lineup": ["heuristic"] * 4, "slots": [0, 0], "records": [{}, {}]}
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    exits_in_one_line(tv_var.main, [*base, "--out", str(tmp_path / "r")], 1, capsys,
                      "a slot twice")  # fmt: skip
    assert not (tmp_path / "r" / "table_value.pt").exists()
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "table_value.pt").write_bytes(b"good")
    with pytest.raises(SystemExit):
        tv_var.main([*base, "--out", str(tmp_path / "taken")])
    assert (tmp_path / "taken" / "table_value.pt").read_bytes() == b"good"
