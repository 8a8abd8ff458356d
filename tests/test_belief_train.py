"""Belief training and report end to end on a small generated dataset: beats chance, resumes."""

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.report as belief_report
import sichuan_env.train.belief.train as belief
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.train.data.make_dataset import generate


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("belief") / "data"
    generate(["heuristic"] * 4, 60, out, obs_version=2, seed=7, num_envs=60, progress=False)
    return out


def _train(data, run, *extra):
    args = ["--data", str(data), "--run", str(run), "--batch", "64", "--lr", "3e-3",
            "--hidden", "64", "--layers", "1", "--tile-channels", "8", "--val-every", "4",
            "--val-rows", "2000", "--eval-every", "25", "--threads", "1", "--quiet", *extra]  # fmt: skip
    return belief.main(args)


def test_tiny_run_beats_chance_and_reports(data, tmp_path):
    run = tmp_path / "run"
    last = _train(data, run, "--epochs", "6", "--ship", str(tmp_path / "ship.pt"))
    assert last["val_auc_tenpai"] > 0.75  # the rule baseline reaches about 0.89 with 4 counts
    assert last["val_auc_hand"] > 0.6
    assert last["val_auc_deal_in"] > 0.6
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) >= 2 and lines[-1]["epoch"] == 6
    assert {"val_loss", "val_auc_waits", "lr", "wall_s"} <= set(lines[-1])
    model = BeliefModel.load(tmp_path / "ship.pt")
    assert model.meta["weights_dtype"] == "float16" and model.meta["data"] == [str(data)]
    # The report on the same folder: the model and every baseline, per head, JSON and plots.
    out = tmp_path / "report.json"
    belief_report.main([str(run / "best.pt"), "--data", str(data), "--json", str(out),
                        "--plots", str(tmp_path), "--threads", "1"])  # fmt: skip
    rep = json.loads(out.read_text())
    heads = rep["heads"]
    assert set(heads) == {"tenpai", "waits", "hand", "deal_in"}
    assert heads["tenpai"]["model"]["auc"] > 0.75
    assert {"count rule", "draws + melds"} <= set(heads["tenpai"])
    assert 0 <= heads["waits"]["model"]["top1"] <= 1 and "top1" in heads["waits"]["unseen copies"]
    assert heads["hand"]["n"] > 1000 and 0 < heads["deal_in"]["positive_rate"] < 1
    for name in ("belief_roc.png", "belief_calibration.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_targets_match_the_label_definitions(data):
    from sichuan_env.train.data.dataset import iter_batches

    b = next(iter_batches(data, 500))
    tg = belief_report.targets(b)
    y, scored = tg["deal_in"]
    own = b["mask"][:, :27] == 1
    assert (scored == own).all() and own.any()
    assert (y == (b["deal_in"] > 0).any(axis=1)).all()
    y, scored = tg["waits"]
    assert (scored == b["tenpai"][:, :, None]).all() and scored.any()
    assert not (b["waits"][~b["active"].astype(bool)] > 0).any()  # won: no waits
    assert (tg["tenpai"][1] == b["active"].astype(bool)).all()


def test_resume_continues_where_it_stopped(data, tmp_path):
    run = tmp_path / "run"
    _train(data, run, "--epochs", "1", "--minutes", "0.001")  # stops after the first step
    first = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    state = torch.load(run / "state.pt", weights_only=True)["counters"]
    assert first[-1]["step"] == state["step"] >= 1
    with pytest.raises(SystemExit):
        _train(data, run, "--epochs", "1")  # the run exists: --resume or another --run
    _train(data, run, "--epochs", "1", "--resume")
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert lines[-1]["step"] > state["step"] and lines[-1]["epoch"] == 1
    steps = [x["step"] for x in lines]
    assert steps == sorted(steps)


def test_bad_arguments(data, tmp_path):
    for argv in (["--data", str(tmp_path)], ["--data", str(data), "--batch", "0"]):
        with pytest.raises(SystemExit):
            belief.main([*argv, "--run", str(tmp_path / "r"), "--quiet"])
    with pytest.raises(SystemExit):
        belief_report.main(["none", "--data", str(tmp_path)])
