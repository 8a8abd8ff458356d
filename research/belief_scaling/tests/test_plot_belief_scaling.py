"""The belief learning-curve plot: report validation, the per-doubling fit, the CLI's outputs."""

import json

import pytest

pytest.importorskip("matplotlib")

from research.belief_scaling.plot import HEADS, main, parse_point, read_report, slopes


def _report(path, auc, base=0.8):
    heads = {h: {"n": 10, "model": {"auc": auc, "ece": 0.01}, "rule": {"auc": base}} for h in HEADS}
    heads["tenpai"]["other rule"] = {"auc": base + 0.05}  # the best baseline is kept
    path.write_text(json.dumps({"rows": 10, "heads": heads}), encoding="utf-8")
    return path


def test_read_report_and_slopes(tmp_path):
    r = read_report(_report(tmp_path / "a.json", 0.85))
    assert r["tenpai"] == {"model": 0.85, "baseline": pytest.approx(0.85)}
    assert r["hand"]["baseline"] == 0.8
    pts = [(1000, {h: {"model": 0.80} for h in HEADS}), (4000, {h: {"model": 0.84} for h in HEADS})]
    assert slopes(pts)["waits"] == pytest.approx(0.02)  # +0.04 over two doublings
    with pytest.raises(ValueError, match="two or more"):
        slopes(pts[:1])


@pytest.mark.parametrize(
    "doc",
    [
        "not json",
        json.dumps([1]),
        json.dumps({"heads": {"tenpai": {"model": {"auc": 2}}}}),
        json.dumps({"heads": {h: {"model": {"auc": 0.9}} for h in HEADS}}),
    ],
)
def test_bad_reports_are_rejected(tmp_path, doc):
    f = tmp_path / "r.json"
    f.write_text(doc, encoding="utf-8")
    with pytest.raises(ValueError):
        read_report(f)


def test_parse_point():
    assert parse_point("1500=a/b.json")[0] == 1500
    for bad in ["a.json", "0=a.json", "x=a.json", "100="]:
        with pytest.raises(ValueError):
            parse_point(bad)


def test_cli_writes_plot_and_json(tmp_path, capsys):
    a, b = _report(tmp_path / "a.json", 0.80), _report(tmp_path / "b.json", 0.83)
    out, js = tmp_path / "p.png", tmp_path / "s.json"
    args = [
        f"1000={a}",
        f"8000={b}",
        "--shipped",
        f"16000={b}",
        "--out",
        str(out),
        "--json",
        str(js),
    ]
    assert main(args) == 0
    assert out.stat().st_size > 10_000 and "per doubling" in capsys.readouterr().out
    doc = json.loads(js.read_text())
    assert doc["auc_per_doubling"]["tenpai"] == pytest.approx(0.01)  # +0.03 over three doublings
    assert doc["doublings_to_goal_at_this_rate"]["tenpai"] == pytest.approx(12.0)  # 0.12 / 0.01
    with pytest.raises(SystemExit):
        main([f"1000={a}", "--out", str(out)])  # one size is no curve
