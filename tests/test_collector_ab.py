"""``benchmarks.collector_ab``: its statistics and its JSON, with the benchmark runs mocked."""

from __future__ import annotations

import json

import pytest

from benchmarks import collector_ab as ab


def _doc(rate: float, own: float) -> dict:
    split = {"t_env": 1.0, "t_encode": own - 0.2, "t_copy": 0.05, "t_book": 0.15}
    return {"current": {"median_per_s": rate}, "collector_own_us_per_decision": own,
            "split_us_per_decision": split}  # fmt: skip


def test_summarize_pairs_the_runs():
    runs = {"ref": [_doc(100.0, 2.0), _doc(110.0, 2.2), _doc(90.0, 1.8)],
            "tree": [_doc(120.0, 1.0), _doc(121.0, 1.1), _doc(117.0, 0.9)]}  # fmt: skip
    doc, rows = ab.summarize(runs)
    assert doc["ratio_per_s"]["median"] == pytest.approx(1.2)  # 1.2, 1.1, 1.3
    assert doc["ratio_own"]["median"] == pytest.approx(0.5)
    assert doc["ref"]["per_s"] == [100.0, 110.0, 90.0]
    assert doc["tree"]["median_split_us"]["t_encode"] == pytest.approx(0.8)
    assert [r[0] for r in rows] == ["ref", "tree", "tree / ref"]


def test_main_alternates_the_sides_and_keeps_the_commit(monkeypatch, tmp_path):
    calls = []

    def fake_run(cwd, out, args):
        side = "tree" if cwd.name == "tree" else "ref"
        calls.append(side)
        return _doc(120.0 if side == "tree" else 100.0, 1.0 if side == "tree" else 1.5)

    monkeypatch.setattr(ab, "one_run", fake_run)
    out = tmp_path / "ab.json"
    doc = ab.main(["HEAD", "--pairs", "4", "--json", str(out)])
    assert calls == ["ref", "tree", "tree", "ref", "ref", "tree", "tree", "ref"]
    saved = json.loads(out.read_text())
    assert len(saved["ref_commit"]) == 40 and saved["ref_name"] == "HEAD"
    assert saved["ref"]["per_s"] == [100.0] * 4 and saved["tree"]["own_us"] == [1.0] * 4
    assert doc["ratio_per_s"]["median"] == pytest.approx(1.2)


def test_a_run_without_the_split_is_refused(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        ab, "one_run", lambda cwd, out, args: (_ for _ in ()).throw(RuntimeError("too old"))
    )
    with pytest.raises(SystemExit) as exit_:
        ab.main(["HEAD", "--pairs", "1", "--json", str(tmp_path / "x.json")])
    assert exit_.value.code == 1
    assert "too old" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_an_existing_json_is_refused_without_overwrite(tmp_path, capsys):
    out = tmp_path / "ab.json"
    out.write_text("{}")
    with pytest.raises(SystemExit) as exit_:
        ab.main(["HEAD", "--json", str(out)])
    assert exit_.value.code == 2
    assert "--overwrite" in capsys.readouterr().err
    assert out.read_text() == "{}"


def test_a_non_finite_figure_is_an_error(monkeypatch, tmp_path):
    import subprocess

    def fake_proc(cmd, **kwargs):
        path = cmd[cmd.index("--json") + 1]
        doc = _doc(float("nan"), 1.0)
        with open(path, "w") as f:
            json.dump(doc, f)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(ab.subprocess, "run", fake_proc)
    args = ab.argparse.Namespace(envs=8, steps=2, rounds=1)
    with pytest.raises(RuntimeError, match="non-finite"):
        ab.one_run(tmp_path, tmp_path / "x.json", args)
