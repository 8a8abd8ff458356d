"""The whole-table value scripts: data shards are the same in any order of work, a resumed fit
is the undisturbed fit, changed settings are refused naming them, a diverged fit saves nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sichuan_env.train.table_value import data as tv_data
from sichuan_env.train.table_value import fit as tv_fit

pytestmark = pytest.mark.train
MIX = ["--mix", "heuristic=1,random=1", "--block-walls", "2", "--no-progress"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    out = tmp_path_factory.mktemp("tv") / "data"
    assert tv_data.main(["--out", str(out), "--hands", "32", *MIX]) == 0
    return out


def test_data_resumes_to_the_same_shards_and_refuses_other_settings(shards, tmp_path, capsys):
    out = tmp_path / "d"
    tv_data.main(["--out", str(out), "--hands", "16", *MIX])  # the first two blocks only
    assert len(list((out / "shards").glob("*.npz"))) == 2
    (out / "shards" / "shard-00001.npz").unlink()  # a stop inside block 1
    with pytest.raises(SystemExit):
        tv_data.main(["--out", str(out), "--hands", "32", "--resume", *MIX])
    assert "--hands 16 (now 32)" in capsys.readouterr().err
    tv_data.main(["--out", str(out), "--hands", "16", "--resume", *MIX])
    for b in range(2):
        a = tv_data.load_shard(shards / "shards" / f"shard-{b:05d}.npz")
        c = tv_data.load_shard(out / "shards" / f"shard-{b:05d}.npz")
        assert len(a["y"]) > 50 and all(np.array_equal(a[k], c[k]) for k in a)


def test_a_resumed_fit_is_the_undisturbed_fit(shards, tmp_path, capsys):
    base = ["--data", str(shards), "--val-every", "2", "--seat", "8", "--head", "8",
            "--batch", "256", "--threads", "1", "--no-progress", "--device", "cpu"]  # fmt: skip
    tv_fit.main([*base, "--out", str(tmp_path / "a"), "--epochs", "2"])
    tv_fit.main([*base, "--out", str(tmp_path / "b"), "--epochs", "1"])
    with pytest.raises(SystemExit):
        tv_fit.main([*base, "--out", str(tmp_path / "b"), "--epochs", "2", "--resume",
                     "--lr", "0.01"])  # fmt: skip
    assert "--lr 0.001 (now 0.01)" in capsys.readouterr().err
    tv_fit.main([*base, "--out", str(tmp_path / "b"), "--epochs", "2", "--resume"])
    a = torch.load(tmp_path / "a" / "table_value.pt", weights_only=True)
    b = torch.load(tmp_path / "b" / "table_value.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_diverged_fit_is_one_line_and_saves_nothing(shards, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(
        tv_fit, "predict", lambda net, rows, unknown=False: np.full((len(rows["y"]), 4), np.nan)
    )  # a network whose values overflowed
    out = tmp_path / "nan"
    with pytest.raises(SystemExit) as exc:
        tv_fit.main(["--data", str(shards), "--out", str(out), "--val-every", "2", "--seat", "8",
                     "--head", "8", "--epochs", "1", "--threads", "1", "--no-progress",
                     "--device", "cpu"])  # fmt: skip
    assert exc.value.code == 1
    assert "held-out error is not finite" in capsys.readouterr().err
    assert not (out / "table_value.pt").exists() and not (out / "state.pt").exists()
