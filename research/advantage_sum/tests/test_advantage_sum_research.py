"""The advantage-sum experiment's tools: measure, paired, z-scores, the table and the analysis."""

from __future__ import annotations

import json

import numpy as np
import pytest

from research.advantage_sum import analyze, measure, paired, table, zscores

pytestmark = pytest.mark.research


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    pytest.importorskip("torch")
    d = tmp_path_factory.mktemp("as")
    for agent in ("value", "defensive"):
        measure.main(["--agent", agent, "--walls", "6", "--reps", "4", "--seed", "3",
                      "--out", str(d / f"{agent}.json")])  # fmt: skip
    return d


def test_measure_scores_the_same_hands_three_ways(runs):
    doc = json.loads((runs / "value.json").read_text())
    assert set(doc["per_wall"]) == {"plain", "luck", "advantage"}
    assert all(len(v) == 6 for v in doc["per_wall"].values())
    est = doc["estimates"]
    assert est["plain"]["ci_ratio"] is None and est["advantage"]["ci_ratio"]["ratio"] > 0
    assert np.mean(doc["per_wall"]["advantage"]) == pytest.approx(est["advantage"]["mean"])
    assert doc["divergences_per_hand"] > 0 and doc["others_divergences_per_hand"] == 0
    assert doc["per_wall"]["advantage"] != doc["per_wall"]["plain"]
    with pytest.raises(SystemExit):  # an existing --out is refused
        measure.main(["--agent", "value", "--walls", "2", "--out", str(runs / "value.json")])


def test_paired_differences_and_its_refusals(runs, tmp_path, capsys):
    out = tmp_path / "p.json"
    paired.main([str(runs / "value.json"), str(runs / "defensive.json"), "--out", str(out)])
    doc = json.loads(out.read_text())
    a, b = (json.loads((runs / f"{n}.json").read_text()) for n in ("value", "defensive"))
    want = np.mean(np.subtract(a["per_wall"]["advantage"], b["per_wall"]["advantage"]))
    assert doc["difference"]["advantage"]["mean"] == pytest.approx(want)
    other = dict(b, seed=4)
    (tmp_path / "other.json").write_text(json.dumps(other))
    with pytest.raises(SystemExit):
        paired.main([str(runs / "value.json"), str(tmp_path / "other.json"),
                     "--out", str(tmp_path / "q.json")])  # fmt: skip
    assert "differ in seed" in capsys.readouterr().err


def test_set_z_of_a_known_sample():
    rng = np.random.default_rng(0)
    x = rng.normal(0.3, 2.0, size=40_000)
    z = zscores.set_z(x, 40, 0.3, 0.0)
    assert len(z) == 40 and abs(z.mean()) < 0.5 and 0.7 < z.std(ddof=1) < 1.3
    shifted = zscores.set_z(x + 0.5, 40, 0.3, 0.0)
    assert shifted.mean() > 3  # a biased estimate shows
    with pytest.raises(ValueError, match="too few"):
        zscores.set_z(x[:50], 40, 0.0, 0.0)


def test_zscores_against_a_reference(runs, tmp_path):
    doc = json.loads((runs / "value.json").read_text())
    ref = {"lineup": doc["lineup"], "walls": 100,
           "agents": {"value": {"points_per_hand": 0.0, "ci95": 0.5}}}  # fmt: skip
    (tmp_path / "ref.json").write_text(json.dumps(ref))
    out = tmp_path / "z.json"
    zscores.main([str(runs / "value.json"), "--reference", str(tmp_path / "ref.json"),
                  "--sets", "3", "--out", str(out)])  # fmt: skip
    z = json.loads(out.read_text())
    assert len(z["advantage"]["vs_reference"]["z"]) == 3
    assert "paired_with_plain" in z["luck"] and "paired_with_plain" not in z["plain"]


def test_table_rows(runs, capsys):
    table.main([str(runs / "value.json"), str(runs / "defensive.json")])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[2].startswith("| `value` | 6 (3) |")


def test_analyze_kinds_and_terms():
    assert analyze.kind(0) == "discard" and analyze.kind(60) == "self-kong"
    assert analyze.kind(84) == "pong" and analyze.kind(86) == "hu" and analyze.kind(87) == "pass"
    from sichuan_env.agents.eval.advantage import AdvantageSum
    from sichuan_env.agents.eval.evaluate import play_duplicate

    lineup = ["value", "heuristic", "heuristic", "heuristic"]
    recs = play_duplicate(lineup, 2, analyze.RULES, 5, progress=False)
    values, kinds = analyze.divergences(recs, 4, 5)
    assert len(values) == len(kinds) > 0
    # the same terms as the library's estimate sums for the agent
    s = AdvantageSum(lineup, analyze.RULES, reps=4, seed=5).sums(recs)
    total = sum(s["sum"][i, (-rot) % 4] for i, (_, rot, _) in enumerate(recs))
    assert values.sum() == pytest.approx(total)


def test_two_control_variates_cross_fitted():
    from research.advantage_sum import two_cv

    rng = np.random.default_rng(1)
    n = 4000
    a, c = rng.normal(size=n), rng.normal(size=n)
    y = 0.2 + a + 0.5 * c + 0.1 * rng.normal(size=n)
    est, b = two_cv.crossfit(y, np.stack([a, c], 1))
    assert np.allclose(b, [[1.0, 0.5], [1.0, 0.5]], atol=0.02)  # both folds find both
    assert est.std() < 0.12 < y.std() and abs(est.mean() - 0.2) < 0.01
    with pytest.raises(ValueError, match="shape"):
        two_cv.crossfit(y, a)
    with pytest.raises(ValueError, match="4 walls"):
        two_cv.crossfit(y[:3], np.stack([a, c], 1)[:3])


def test_two_cv_cli(runs, tmp_path, capsys):
    from research.advantage_sum import two_cv

    out = tmp_path / "t.json"
    files = [str(runs / "value.json"), str(runs / "defensive.json")]
    assert two_cv.main([*files, "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["agent"] for r in rows] == ["value", "defensive"]
    assert all(r[k]["ci_ratio"] > 0 for r in rows for k in ("sum", "blend", "two", "luck"))
    with pytest.raises(SystemExit):  # an existing --out is refused
        two_cv.main([*files, "--out", str(out)])
    assert "exists" in capsys.readouterr().err


def test_two_refs_scores_both_sides_of_the_same_hands(tmp_path, capsys):
    """Reference = the opponents: the agent's own divergences; = the agent: the opponents'."""
    from research.advantage_sum import two_refs

    out = tmp_path / "two.json"
    args = ["--agent", "value", "--walls", "6", "--reps", "4", "--seed", "3", "--out", str(out)]
    two_refs.main(args)
    doc = json.loads(out.read_text())
    assert set(doc["per_wall"]) == {"plain", "sum_h", "sum_a", "blend_h", "two"}
    assert all(len(v) == 6 for v in doc["per_wall"].values())
    div = doc["divergences_per_hand"]
    assert div["sum_h"] > 0 and div["sum_a"] > 0  # both references were left somewhere
    ref = measure.main(["--agent", "value", "--walls", "6", "--reps", "4", "--seed", "3",
                        "--out", str(tmp_path / "m.json")])  # fmt: skip
    m = json.loads((tmp_path / "m.json").read_text())
    assert ref == 0 and div["sum_h"] == pytest.approx(m["divergences_per_hand"])
    assert doc["per_wall"]["plain"] == m["per_wall"]["plain"]  # the same hands
    assert np.array(doc["coefficients"]["two"]).shape == (2, 2)
    for name, est in doc["estimates"].items():
        assert np.mean(doc["per_wall"][name]) == pytest.approx(est["mean"], abs=1e-5)
    with pytest.raises(SystemExit):  # an existing --out is refused
        two_refs.main(args)
    with pytest.raises(SystemExit):
        two_refs.main(["--walls", "3", "--out", str(tmp_path / "few.json")])
    assert "at least 4" in capsys.readouterr().err
