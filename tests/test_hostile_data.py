"""The dataset, label-shard and ``.npz`` readers under hostile input ("Hardening, round 2").

Nothing read from disk is trusted: a dataset's metadata, its parquet shards, a label shard and
an ``.npz`` header are each checked before use, and a bad one is a ``ValueError`` (one line and
exit 1 from a CLI), never a crash, a huge allocation or a silent wrong answer. The training
CLIs' side of the contract is ``test_hostile_train.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import sichuan_env.train.belief.train as belief
from hostile import exits_in_one_line
from sichuan_env.train.belief import batches
from sichuan_env.train.data import dataset as ds
from sichuan_env.train.policy import search_distill, search_labels
from train_fixtures import belief_args, copy_run, header_bomb, tiny_datasets, tiny_labels

from sichuan_env._npz import Spec, safe_load_npz


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A tiny observation-v2 dataset (two shards) and a v1 one."""
    return tiny_datasets(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """A small label set and a prior network to start from."""
    return tiny_labels(tmp_path_factory.mktemp("labels"))


# ------------------------------------------------------------------------------ datasets


def _meta_with(folder: Path, dst: Path, **changes) -> Path:
    out = copy_run(folder, dst)
    meta = json.loads((out / "dataset.json").read_text())
    for k, v in changes.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    (out / "dataset.json").write_text(json.dumps(meta))
    return out


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"obs_version": None}, "obs_version"),
        ({"obs_version": "2"}, "obs_version"),
        ({"obs_version": 9}, "obs_version"),
        ({"obs_shape": [10**7, 27]}, "obs_shape"),
        ({"obs_shape": [83, 27]}, "obs_shape"),
        ({"rules": {"bogus": 1}}, "rules"),
        ({"rules": None}, "rules"),
        ({"decisions": -1}, "decisions"),
    ],
)
def test_dataset_json_is_checked(data, tmp_path, changes, match):
    folder = _meta_with(data / "v2", tmp_path / "d", **changes)
    with pytest.raises(ValueError, match=match):
        ds.read_meta(folder)
    with pytest.raises(ValueError, match=match):
        next(ds.iter_batches(folder))


def _replace_shard(folder: Path, table: pa.Table) -> Path:
    shard = ds.shards(folder)[0]
    pq.write_table(table, shard)
    return shard


def test_shards_are_checked_against_the_metadata(data, tmp_path):
    v2 = data / "v2"
    # a v1 shard in a v2 folder: refused, not zero-padded
    folder = copy_run(v2, tmp_path / "mixed")
    shutil.copy(ds.shards(data / "v1")[0], ds.shards(folder)[0])
    heads = belief.BeliefConfig().head_specs
    for read in (
        lambda: next(ds.iter_batches(folder)),
        lambda: ds.read_shard(ds.shards(folder)[0]),
        lambda: batches.load_shard(ds.shards(folder)[0], heads),
    ):
        with pytest.raises(ValueError, match=r"column 'obs' is fixed_size_binary\[281\]"):
            read()
    table = pq.read_table(ds.shards(v2)[0])
    # a missing column, a column of another type, nulls, a truncated file
    cases = {
        "no column 'mask'": table.drop_columns(["mask"]),
        "column 'game_id' is int32": table.set_column(
            table.schema.get_field_index("game_id"),
            "game_id",
            table.column("game_id").cast(pa.int32()),
        ),
        "'game_id' holds 1 null": table.set_column(
            table.schema.get_field_index("game_id"),
            "game_id",
            pa.array([None, *table.column("game_id").to_pylist()[1:]], pa.int64()),
        ),
    }
    for match, bad in cases.items():
        folder = copy_run(v2, tmp_path / f"c{len(match)}")
        _replace_shard(folder, bad)
        with pytest.raises(ValueError, match=match):
            next(ds.iter_batches(folder))
        with pytest.raises(ValueError, match=match):
            batches.load_shard(ds.shards(folder)[0], heads)
    folder = copy_run(v2, tmp_path / "truncated")
    shard = ds.shards(folder)[0]
    shard.write_bytes(shard.read_bytes()[:-200])
    with pytest.raises(ValueError, match="cannot read the decisions shard"):
        ds.read_shard(shard)
    with pytest.raises(SystemExit) as info:  # the training CLI: one line, exit 1
        belief.main(belief_args(folder, tmp_path / "run"))
    assert info.value.code == 1 and not (tmp_path / "run").exists()
    games = copy_run(v2, tmp_path / "games")
    g = pq.read_table(games / "games.parquet")
    pq.write_table(
        g.set_column(
            g.schema.get_field_index("offsets"),
            "offsets",
            g.column("offsets").cast(pa.list_(pa.int32())),
        ),
        games / "games.parquet",
    )
    with pytest.raises(ValueError, match="column 'offsets' is list<element: int32>"):
        ds.EventTable(games)


def test_null_list_elements_are_refused(data, tmp_path):
    table = pq.read_table(ds.shards(data / "v2")[0])
    values = table.column("tenpai").combine_chunks().flatten().to_pylist()
    values[1] = None
    col = pa.FixedSizeListArray.from_arrays(pa.array(values, pa.bool_()), 3)
    folder = copy_run(data / "v2", tmp_path / "d")
    _replace_shard(folder, table.set_column(table.schema.get_field_index("tenpai"), "tenpai", col))
    with pytest.raises(ValueError, match="'tenpai' holds 1 null"):
        next(ds.iter_batches(folder))


def test_iter_batches_reads_a_subset_of_columns_and_checks_its_arguments(data):
    b = next(ds.iter_batches(data / "v2", 7, columns=["action", "game_id"]))
    assert sorted(b) == ["action", "game_id"] and len(b["action"]) == 7
    b = next(ds.iter_batches(data / "v2", 5, columns=["obs"]))
    assert b["obs"].shape == (5, 232, 27)
    for kwargs, match in (
        ({"columns": ["nope"]}, "not decision columns"),
        ({"columns": "action"}, "list of column names"),
        ({"columns": []}, "not decision columns"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -5}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"batch_size": 2.5}, "batch_size"),
    ):
        with pytest.raises(ValueError, match=match):
            next(ds.iter_batches(data / "v2", **kwargs))


def test_decision_dataset_checks_its_arguments(data):
    for kwargs in (
        {"shuffle_buffer": -1},
        {"shuffle_buffer": 2.5},
        {"batch_size": 0},
        {"seed": -1},
        {"seed": "x"},
    ):
        with pytest.raises(ValueError):
            ds.DecisionDataset(data / "v2", **kwargs)
    rows = list(ds.DecisionDataset(data / "v2", batch_size=64, shuffle_buffer=16, seed=1))
    assert len(rows) == ds.read_meta(data / "v2")["decisions"]


# ----------------------------------------------------------------------------- .npz files


def test_safe_load_npz_checks_headers_before_reading(tmp_path):
    good = tmp_path / "good.npz"
    np.savez_compressed(good, a=np.zeros((4, 3), np.float32), b=np.arange(4))
    spec = {"a": Spec(("n", 3), kinds="f"), "b": Spec(("n",), kinds="iu")}
    assert safe_load_npz(good, spec)["a"].shape == (4, 3)
    bomb = tmp_path / "bomb.npz"
    shutil.copy(good, bomb)
    header_bomb(bomb, "a", (10**11, 3), "<f4")
    uneven = tmp_path / "uneven.npz"
    np.savez(uneven, a=np.zeros((4, 3), np.float32), b=np.arange(5))
    cases = {
        "sane size": (bomb, spec),
        r"'b' has 5 for the size 'n', other arrays 4": (uneven, spec),
        "has dtype float32, expected kind 'iu'": (good, {"a": Spec(("n", 3), kinds="iu")}),
        r"has shape \(4, 3\), expected \('n', 2\)": (good, {"a": Spec(("n", 2), kinds="f")}),
        r"lacks the arrays \['c'\]": (good, {"c": Spec(("n",))}),
        "no such file": (tmp_path / "none.npz", spec),
    }
    for match, (path, expected) in cases.items():
        with pytest.raises(ValueError, match=match):
            safe_load_npz(path, expected)
    obj = tmp_path / "obj.npz"
    np.savez(obj, a=np.array([{"x": 1}] * 4, dtype=object))
    with pytest.raises(ValueError, match="not a plain array"):
        safe_load_npz(obj, {"a": Spec(("n",))})
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(ValueError, match="not a file"):
        safe_load_npz(junk, spec)


@pytest.mark.train
def test_label_shards_and_rows_are_checked(labels, tmp_path, capsys, monkeypatch):
    lab = labels / "lab"
    bomb = copy_run(lab, tmp_path / "bomb")
    header_bomb(bomb / "shard-00000.npz")
    with pytest.raises(ValueError, match="label shard array 'obs' is not an array of a sane size"):
        search_labels.load_labels(bomb)
    wrong = copy_run(lab, tmp_path / "wrong")
    with np.load(wrong / "shard-00001.npz") as z:
        arrays = {k: z[k] for k in z.files}
    np.savez_compressed(
        wrong / "shard-00001.npz", **{**arrays, "gain": arrays["gain"].astype(np.float64)}
    )
    with pytest.raises(
        ValueError, match=r"shard-00001\.npz: label shard array 'gain' has dtype float64"
    ):
        search_labels.load_labels(wrong)
    # a row whose base action is not the heuristic's: one line, exit 1, nothing written
    moved = copy_run(lab, tmp_path / "moved")
    for shard in sorted(moved.glob("shard-*.npz")):
        with np.load(shard) as z:
            arrays = {k: z[k] for k in z.files}
        two = np.flatnonzero((arrays["cands"] >= 0).sum(1) >= 2)
        if len(two):
            arrays["base"][two[0]] = 1 - arrays["base"][two[0]] if arrays["base"][two[0]] < 2 else 0
            np.savez_compressed(shard, **arrays)
    args = [
        "--run",
        str(tmp_path / "sd"),
        "--init",
        str(labels / "init.pt"),
        "--threads",
        "1",
        "--epochs",
        "1",
        "--anchor-decisions",
        "10",
        "--val-mod",
        "2",
        "--select-walls",
        "0",
    ]
    exits_in_one_line(
        search_distill.main, ["--labels", str(moved), *args], 1, capsys, "heuristic action"
    )
    assert not (tmp_path / "sd").exists()
    # a NaN estimate never picks the margin
    monkeypatch.setattr(
        search_distill,
        "margin_table",
        lambda *a, **k: [
            {
                "margin": 0.5,
                "gain_per_hand": float("nan"),
                "ci95": 0.0,
                "deviation_rate": 0.0,
                "off_candidate": 0,
            }
        ],
    )
    exits_in_one_line(search_distill.main, ["--labels", str(lab), *args], 1, capsys, "not finite")
    assert not (tmp_path / "sd").exists()
