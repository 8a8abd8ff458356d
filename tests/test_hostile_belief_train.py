"""The belief model's training CLI under hostile input ("Hardening, round 2").

Split from ``test_hostile_train.py``, whose contract it shares: bad input exits 1 with
one line on stderr and never a traceback; training that does nothing is an error that
writes nothing; a damaged or diverging run never changes what is on disk.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.train as belief
from hostile import exits_in_one_line
from sichuan_env.train.data import dataset as ds
from train_fixtures import belief_args, copy_run, doctor_state, files_of, tiny_datasets


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A tiny observation-v2 dataset (two shards) and a v1 one."""
    return tiny_datasets(tmp_path_factory.mktemp("data"))


@pytest.mark.train
def test_belief_runs_do_something_or_fail(data, tmp_path, capsys, monkeypatch):
    v2 = data / "v2"
    exits_in_one_line(
        belief.main,
        belief_args(v2, tmp_path / "big", "--batch", "100000"),
        1,
        capsys,
        "no training step ran",
    )
    assert not (tmp_path / "big").exists()
    run = tmp_path / "run"
    belief.main(belief_args(v2, run, "--epochs", "1", "--minutes", "1e-9"))  # one step
    assert json.loads((run / "last.json").read_text())["steps"] == 1
    for how in ("nan moments", "mis-shaped moments", "counter text", "pickled", "truncated"):
        bad = copy_run(run, tmp_path / how.replace(" ", "_"))
        doctor_state(bad, how)
        before = files_of(bad)
        exits_in_one_line(belief.main, belief_args(v2, bad, "--resume"), 1, capsys, "cannot resume")
        assert files_of(bad) == before, how
    before = files_of(run)
    monkeypatch.setattr(belief, "losses", lambda out, b, heads: {"x": torch.tensor(float("nan"))})
    resume = belief_args(v2, run, "--resume", "--epochs", "1")  # the run's own --epochs
    exits_in_one_line(belief.main, resume, 1, capsys, "diverged")
    assert files_of(run) == before


def test_belief_data_must_agree(data, tmp_path, capsys):
    other = copy_run(data / "v2", tmp_path / "other")
    meta = json.loads((other / "dataset.json").read_text())
    meta["rules"] = {**meta["rules"], "base_points": 2}
    (other / "dataset.json").write_text(json.dumps(meta))
    both = belief_args(data / "v2", tmp_path / "r")
    both[1:2] = [str(data / "v2"), str(other)]  # --data v2 other
    exits_in_one_line(belief.main, both, 1, capsys, "--mixed-rules")
    ds.check_compatible([data / "v2", other], [ds.read_meta(data / "v2"), meta], mixed_rules=True)
    exits_in_one_line(
        belief.main, ["--data", str(data / "v1"), "--run", str(tmp_path / "s")], 1, capsys, "v2"
    )
    with pytest.raises(ValueError, match="observation v1"):
        ds.check_compatible(
            [data / "v2", data / "v1"], [ds.read_meta(data / "v2"), ds.read_meta(data / "v1")]
        )
