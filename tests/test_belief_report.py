"""The belief report's other predictors: prediction files (checked), --predictions, --compare."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.baselines as B
import sichuan_env.train.belief.report as R
from sichuan_env.agents.belief import heads as H
from sichuan_env.train.belief.predictions import PredictionTable, load_predictions
from sichuan_env.train.data.dataset import iter_batches
from sichuan_env.train.data.make_dataset import generate


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "data"
    generate(["heuristic"] * 4, 4, out, obs_version=2, seed=11, num_envs=4, progress=False)
    return out


def _rule_file(data, path, games=None, heads=H.NAMES, dtype=np.float32):
    """A prediction file of the baselines' first rule per head (a stand-in predictor)."""
    keys, arrays = [], {h: [] for h in heads}
    for b in iter_batches(data, 1000):
        keep = np.ones(len(b["obs"]), bool) if games is None else b["game_id"] < games
        keys.append(np.stack([b["game_id"], b["decision"]], axis=1)[keep])
        pred = B.predict(b["obs"][keep])
        for h in heads:
            arrays[h].append(next(iter(pred[h].values())).astype(dtype))
    np.savez_compressed(path, keys=np.concatenate(keys),
                        **{h: np.concatenate(v) for h, v in arrays.items()})  # fmt: skip
    return path


def test_a_rules_file_scores_like_the_rules(data, tmp_path):
    path = _rule_file(data, tmp_path / "rules.npz")
    out = tmp_path / "r.json"
    assert R.main(["none", "--data", str(data), "--predictions", f"rules={path}", "--json",
                   str(out), "--compare", "rules", "draws + melds"]) == 0  # fmt: skip
    rep = json.loads(out.read_text())
    assert rep["heads"]["tenpai"]["rules"]["auc"] == pytest.approx(
        rep["heads"]["tenpai"]["count rule"]["auc"], abs=1e-6
    )
    assert rep["heads"]["waits"]["rules"]["top1"] == rep["heads"]["waits"]["unseen copies"]["top1"]
    assert list(rep["compare"]) == ["tenpai"]  # the only head that both predict
    assert rep["predictions"]["rules"] == {"source": "rules.npz", "rows": rep["rows"],
                                           "heads": list(H.NAMES)}  # fmt: skip


def test_split_files_merge_and_a_head_subset_scores_alone(data, tmp_path):
    full = load_predictions([_rule_file(data, tmp_path / "all.npz")])
    a = _rule_file(data, tmp_path / "a.npz", games=2, heads=("deal_in",))
    with np.load(a) as z:
        n = len(z["keys"])
    b = tmp_path / "b.npz"
    keys = full.keys[np.isin(full.keys[:, 0], [2, 3])]
    rows = full.lookup(keys[:, 0], keys[:, 1])
    np.savez(b, keys=keys, deal_in=rows["deal_in"], exact=np.ones(len(keys)))  # extra: ignored
    merged = load_predictions([a, b])
    assert merged.heads == ("deal_in",) and len(merged) == n + len(keys) == len(full)
    g, d = full.keys[:, 0], full.keys[:, 1]
    np.testing.assert_array_equal(merged.lookup(g, d)["deal_in"], full.lookup(g, d)["deal_in"])
    out = tmp_path / "r.json"
    R.main(["none", "--data", str(data), "--predictions", f"x={a},{b}", "--json", str(out)])
    heads = json.loads(out.read_text())["heads"]
    assert "x" in heads["deal_in"] and "x" not in heads["tenpai"]
    with pytest.raises(ValueError, match="twice"):
        load_predictions([a, a])


@pytest.mark.parametrize(
    "damage, match",
    [
        ("not_npz", "not a prediction file"),
        ("no_keys", "keys and some heads"),
        ("no_heads", "keys and some heads"),
        ("keys_shape", "keys must be integers"),
        ("keys_float", "keys must be integers"),
        ("keys_negative", "out of range"),
        ("repeat", "twice"),
        ("head_shape", "shape"),
        ("head_int", "floats"),
        ("range", r"\[0, 1\]"),
        ("nan", r"\[0, 1\]"),
        ("pickle", "plain array"),
        ("huge", "sane size"),
    ],
)
def test_hostile_prediction_files(tmp_path, damage, match):
    n = 4
    keys = np.array([[0, 0], [0, 1], [1, 0], [1, 2]])
    arrays = {"tenpai": np.full((n, 3), 0.5), "deal_in": np.zeros((n, 27), np.float32)}
    path = tmp_path / "p.npz"
    if damage == "not_npz":
        path.write_bytes(b"PK\x03\x04 not a zip")
    elif damage == "pickle":
        np.savez(path, keys=keys, tenpai=np.array([{"x": 1}] * n, dtype=object))
    elif damage == "huge":
        import zipfile

        header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000, 3), }"
        header = header.ljust(117) + "\n"
        npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
        np.savez(path, keys=keys)
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("tenpai.npy", npy)
    else:
        if damage == "no_keys":
            keys = None
        elif damage == "no_heads":
            arrays = {"exact": np.ones(n)}
        elif damage == "keys_shape":
            keys = keys[:, :1]
        elif damage == "keys_float":
            keys = keys.astype(float)
        elif damage == "keys_negative":
            keys[0, 0] = -1
        elif damage == "repeat":
            keys[1] = keys[0]
        elif damage == "head_shape":
            arrays["tenpai"] = arrays["tenpai"][:, :2]
        elif damage == "head_int":
            arrays["tenpai"] = np.ones((n, 3), np.int64)
        elif damage == "range":
            arrays["deal_in"][0, 0] = 1.5
        elif damage == "nan":
            arrays["tenpai"][2, 1] = np.nan
        np.savez(path, **({} if keys is None else {"keys": keys}), **arrays)
    with pytest.raises(ValueError, match=match):
        load_predictions([path])


def test_missing_rows_names_and_bad_specs(data, tmp_path, capsys):
    part = _rule_file(data, tmp_path / "part.npz", games=2)
    for argv, match in (
        (["--predictions", f"p={part}"], "no prediction for"),  # hands 2, 3 are not covered
        (["--predictions", "p"], "NAME=FILE"),
        (["--predictions", f"model={part}"], "checkpoint's"),
        (["--predictions", f"count rule={part}"], "taken"),
        (["--predictions", f"p={tmp_path / 'none.npz'}"], "prediction file"),
        (["--compare", "count rule", "count rule"], "two different"),
        (["--compare", "count rule", "nobody"], "no head has both"),
    ):
        with pytest.raises(SystemExit) as exc:
            R.main(["none", "--data", str(data), *argv])
        assert exc.value.code == 2 and match in capsys.readouterr().err, argv
    assert R.main(["none", "--data", str(data), "--games", "2", "--predictions",
                   f"p={part}"]) == 0  # fmt: skip


def test_compare_is_paired_over_hands():
    rng = np.random.default_rng(1)
    n = 4000
    y = rng.uniform(size=n) < 0.3
    good = np.where(y, 0.7, 0.3) + rng.normal(0, 0.2, n)
    bad = rng.uniform(size=n)
    data = {"labels": {}, "preds": {}, "groups": {}}
    for h in H.NAMES:
        data["labels"][h] = y
        data["preds"][h] = {"good": good, "bad": bad}
        data["groups"][h] = np.arange(n) // 40  # 100 hands
    diff = R.compare(data, "good", "bad", boot=50)
    for h in H.NAMES:
        assert 0 < diff[h]["lo"] <= diff[h]["diff"] <= diff[h]["hi"] and diff[h]["hands"] == 100
    with pytest.raises(ValueError, match="two different"):
        R.compare(data, "good", "good")
    with pytest.raises(ValueError, match="boot"):
        R.compare(data, "good", "bad", boot=0)
    with pytest.raises(ValueError, match="no head has both"):
        R.compare(data, "good", "other")


def test_a_table_from_arrays_checks_like_a_file():
    keys = np.array([[3, 1], [3, 0]])
    t = PredictionTable(keys, {"tenpai": np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])}, "mem")
    np.testing.assert_allclose(t.lookup(np.array([3]), np.array([0]))["tenpai"], [[0.4, 0.5, 0.6]])
    with pytest.raises(ValueError, match=r"\(3, 2\)"):
        t.lookup(np.array([3]), np.array([2]))
    with pytest.raises(ValueError, match="heads"):
        PredictionTable(keys, {"shanten": np.zeros((2, 3))})
