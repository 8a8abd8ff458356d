"""The network + filter blend: fitted coefficients, validated files, the CLIs end to end."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.report as library_report
from sichuan_env.train.data.make_dataset import generate

import research.hand_reading.blend as belief_blend
import research.hand_reading.filter_eval as belief_filter_eval
import research.hand_reading.report as belief_report


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("blend") / "data"
    generate(["heuristic"] * 4, 6, out, obs_version=2, seed=3, num_envs=6, progress=False)
    return out


def test_the_fit_follows_the_informative_predictor():
    """Labels drawn from the filter's probabilities: the filter gets the weight, the model none."""
    rng = np.random.default_rng(0)
    n = 20000
    pf = rng.uniform(0.02, 0.98, n)
    pm = rng.uniform(0.02, 0.98, n)  # noise
    y = rng.uniform(size=n) < pf
    data = {"labels": {}, "preds": {}}
    for h in belief_blend.HEADS:
        data["labels"][h] = y
        data["preds"][h] = {"model": pm, "filter": pf}
    coef = belief_blend.fit(data)
    for h in belief_blend.HEADS:
        b0, b1, b2 = coef[h]
        assert abs(b2 - 1) < 0.1 and abs(b1) < 0.1 and abs(b0) < 0.1
    p = belief_blend.apply(coef["tenpai"], pm, pf)
    assert p.shape == pm.shape and np.abs(p - pf).max() < 0.05
    with pytest.raises(ValueError, match="both labels"):
        belief_blend.fit({"labels": {h: np.zeros(3) for h in belief_blend.HEADS},
                          "preds": data["preds"]})  # fmt: skip
    with pytest.raises(ValueError, match="both the model"):
        belief_blend.fit({"labels": data["labels"], "preds": {h: {"model": pm} for h in coef}})
    with pytest.raises(ValueError, match="differ"):
        belief_blend.design(pm, pf[:-1])


@pytest.mark.parametrize(
    "damage",
    [
        "not json",
        json.dumps({"format": "other", "coef": {}}),
        json.dumps({"format": belief_blend.FORMAT, "coef": {"tenpai": [0, 1, 1]}}),
        json.dumps(
            {
                "format": belief_blend.FORMAT,
                "coef": {h: [0, 1, float("nan")] for h in belief_blend.HEADS},
            }
        ),
        json.dumps(
            {"format": belief_blend.FORMAT, "coef": {h: [0, 1, True] for h in belief_blend.HEADS}}
        ),
        json.dumps(
            {"format": belief_blend.FORMAT, "coef": {h: [0, 1] for h in belief_blend.HEADS}}
        ),
        json.dumps(
            {
                "format": belief_blend.FORMAT,
                "coef": {h: [0, 1, 10**400] for h in belief_blend.HEADS},
            }
        ),
    ],
)
def test_bad_blend_files_are_rejected(tmp_path, damage):
    path = tmp_path / "b.json"
    path.write_text(damage)
    with pytest.raises(ValueError):
        belief_blend.load_blend(path)


def test_filter_blend_and_report_end_to_end(data, tmp_path, capsys):
    """Smc filter on a folder -> blend fitted on it -> report with model+filter, JSON."""
    cache = tmp_path / "f.npz"
    rc = belief_filter_eval.main(["--method", "smc", "--data", str(data), "--games", "3",
                                  "--particles", "8", "--save", str(cache)])  # fmt: skip
    assert rc == 0 and cache.exists()
    preds = belief_filter_eval.load_preds(cache)
    assert len(preds) > 50 and {g for g, _ in preds} == {0, 1, 2}
    parts = [tmp_path / "a.npz", tmp_path / "b.npz"]  # the same hands split over two runs
    for part, (first, games) in zip(parts, ((0, 2), (2, 3)), strict=True):
        assert belief_filter_eval.main(["--method", "smc", "--data", str(data), "--games",
                                        str(games), "--first-game", str(first), "--particles",
                                        "8", "--save", str(part)]) == 0  # fmt: skip
    merged = belief_filter_eval.load_many(parts)
    assert merged.keys() == preds.keys()
    assert all(np.array_equal(merged[k]["hand"], preds[k]["hand"]) for k in preds)
    with pytest.raises(ValueError, match="again"):
        belief_filter_eval.load_many([cache, parts[0]])
    args = ["--method", "smc", "--data", str(data), "--particles", "8", "--save", str(parts[0])]
    assert belief_filter_eval.main([*args, "--games", "3", "--resume"]) == 0  # hand 2 added
    resumed = belief_filter_eval.load_preds(parts[0])
    assert resumed.keys() == preds.keys()
    assert all(np.array_equal(resumed[k]["waits"], preds[k]["waits"]) for k in preds)
    blend = tmp_path / "blend.json"
    assert belief_blend.main(["belief", "--data", str(data), "--games", "3", "--filter-cache",
                              str(cache), "--out", str(blend), "--threads", "1"]) == 0  # fmt: skip
    coef = belief_blend.load_blend(blend)
    assert set(coef) == set(belief_blend.HEADS)
    out = tmp_path / "report.json"
    rc = belief_report.main(["belief", "--data", str(data), "--games", "3", "--filter",
                             "--filter-cache", str(cache), "--blend", str(blend), "--threads", "1",
                             "--json", str(out), "--compare", "model+filter", "model"])  # fmt: skip
    assert rc == 0
    rep = json.loads(out.read_text())
    for h in belief_blend.HEADS:
        c = rep["compare"][h]
        assert c["hands"] == 3 and c["boot"] > 100 and c["lo"] <= c["hi"]
    for h in belief_blend.HEADS:
        assert {"model", "filter", "model+filter"} <= set(rep["heads"][h])
    assert rep["filter"] == {"cache": [str(cache)]}
    assert "model+filter" in capsys.readouterr().out
    # the library report scores the same files without research: the same numbers
    lib = tmp_path / "library.json"
    assert library_report.main(["belief", "--data", str(data), "--games", "3", "--threads", "1",
                                "--predictions", f"filter={cache}", "--json", str(lib),
                                "--compare", "filter", "model"]) == 0  # fmt: skip
    got = json.loads(lib.read_text())
    for h in belief_blend.HEADS:
        assert got["heads"][h]["filter"] == rep["heads"][h]["filter"]
        assert got["heads"][h]["model"] == rep["heads"][h]["model"]
        assert "model+filter" not in got["heads"][h]
    refused = (["--games", "3", "--blend", str(blend)],  # a blend without the reader
               ["--filter-cache", str(cache)])  # the reader without --games  # fmt: skip
    for argv in refused:
        with pytest.raises(SystemExit) as exc:
            belief_report.main(["belief", "--data", str(data), *argv])
        assert exc.value.code == 2


def test_filter_cli_rejects_bad_settings(data, capsys):
    with pytest.raises(SystemExit) as exc:
        belief_filter_eval.main(["--method", "smc", "--data", str(data), "--particles", "0"])
    assert exc.value.code == 2 and "particles" in capsys.readouterr().err
