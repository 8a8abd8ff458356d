"""The from-scratch curve: it reads the example's metrics, draws them and rejects bad files."""

import json

import pytest

from research.from_scratch_ppo.plot import main, read_metrics


def _metrics(path, n=30, final=True):
    rows = [{"update": k, "env_steps": 1000 * k, "points_per_hand": -3.6 + 0.05 * k,
             "steps_per_s": 500.0} for k in range(1, n + 1)]  # fmt: skip
    if final:
        rows.append({"eval_hands": 64, "points_per_hand": -2.0})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_curve_and_summary(tmp_path):
    m = _metrics(tmp_path / "m.jsonl")
    out, js = tmp_path / "c.png", tmp_path / "s.json"
    summary = main([str(m), "--out", str(out), "--json", str(js), "--smooth", "10"])
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert summary["updates"] == 30 and summary["env_steps"] == 30_000
    assert summary["wall_clock_s"] == pytest.approx(60.0)
    assert summary["sampling_points_per_hand_last"] == pytest.approx(-3.6 + 0.05 * 25.5)
    assert summary["greedy_eval"]["points_per_hand"] == -2.0
    assert json.loads(js.read_text()) == summary


def test_an_unfinished_run_has_no_final_point(tmp_path):
    rows, final = read_metrics(_metrics(tmp_path / "m.jsonl", final=False))
    assert len(rows) == 30 and final is None


@pytest.mark.parametrize(
    "text",
    ["", "not json\n", "[1]\n", '{"env_steps": 1, "points_per_hand": NaN, "steps_per_s": 1}\n'],
)
def test_bad_files_are_one_line_errors(tmp_path, capsys, text):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main([str(bad), "--out", str(tmp_path / "c.png")])
    assert exc.value.code == 1 and "error:" in capsys.readouterr().err
