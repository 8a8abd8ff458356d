"""The advantage-sum estimate (sichuan_env.agents.eval.advantage) and sichuan-eval's use of it."""

import json

import numpy as np
import pytest
from sichuan_env.agents.eval.advantage import (
    AdvantageSum,
    default_reference,
    reference_policy,
    split_lineup,
)
from sichuan_env.agents.eval.cli import main as evaluate_main
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.match_stats import per_wall

from sichuan_env import RuleConfig
from sichuan_env.tiles import InputTypeError

RULES = RuleConfig.preset("xuezhan")
LINEUP = ["value", "heuristic", "heuristic", "heuristic"]
WALLS = 6


@pytest.fixture(scope="module")
def records():
    # blocks of 2 walls, as --target-ci gets them (records come in each block's own order)
    return play_duplicate(LINEUP, WALLS, RULES, seed=5, progress=False, block_walls=2)


def scores(rec):
    return np.asarray(rec["result"]["scores"], dtype=np.float64)


@pytest.mark.parametrize(
    ("lineup", "pair"),
    [
        (["distill", "heuristic", "heuristic", "heuristic"], ("distill", "heuristic")),
        (["heuristic", "defensive", "heuristic", "heuristic"], ("defensive", "heuristic")),
        (["random", "value", "value", "value"], ("random", "value")),
        (["exit", "distill", "distill", "distill"], ("exit", "distill")),
        (["heuristic"] * 4, ("heuristic", "heuristic")),
        (["distill", "distill", "heuristic", "heuristic"], None),
        (["distill", "search", "heuristic", "heuristic"], None),
        (["heuristic"] * 3, None),
    ],
)
def test_split_lineup(lineup, pair):
    assert split_lineup(lineup) == pair


@pytest.mark.parametrize(
    ("lineup", "reference"),
    [
        (["distill", "heuristic", "heuristic", "heuristic"], "heuristic"),
        (["random", "value", "value", "value"], "value"),
        (["exit", "distill", "distill", "distill"], "distill"),
        (["heuristic", "random", "random", "random"], "heuristic"),  # random: not playable
        (["distill", "exit", "distill", "exit"], "heuristic"),
    ],
)
def test_default_reference(lineup, reference):
    if "distill" in lineup or "exit" in lineup:
        pytest.importorskip("torch")
    assert default_reference(lineup) == reference


@pytest.mark.parametrize("name", ["random", "search", "distill-guard", "no-such-agent"])
def test_references_the_rollouts_cannot_play_are_refused(name):
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match=repr(name)):
        reference_policy(name)
    with pytest.raises(ValueError, match=repr(name)):
        AdvantageSum(["heuristic", "heuristic", "heuristic", "value"], RULES, reference=name)


def per_record(est, records, s):
    """The summed advantages of lineup position 0 (the agent) in each record."""
    return np.array([s["sum"][i, (-rot) % 4] for i, (_, rot, _) in enumerate(records)])


def test_without_shuffle_each_hand_telescopes_to_the_points_over_the_reference(records):
    # with the real wall order every rollout is the real future: every seat's summed
    # advantages are exactly its points minus what it scores when all four play the reference
    ref = play_duplicate(["heuristic"] * 4, WALLS, RULES, seed=5, progress=False, block_walls=2)
    ref_scores = {(w, r): scores(rec) for w, r, rec in ref}
    est = AdvantageSum(LINEUP, RULES, reps=2, shuffle=False)
    assert est.reference == "heuristic"
    s = est.sums(records)
    agent = per_record(est, records, s)
    assert (s["divergences"].sum(axis=1) > 0).sum() >= len(records) // 2  # value leaves it often
    assert s["noise"].max() == 0.0  # every rep is the same game
    for i, (w, r, rec) in enumerate(records):
        np.testing.assert_array_equal(s["sum"][i], scores(rec) - ref_scores[(w, r)])
        assert s["divergences"][i].sum() == s["divergences"][i, (-r) % 4]  # only the agent's
    # and the four rotations of a wall give back the plain estimate exactly
    plain = per_wall(LINEUP, records, WALLS)["value"][0]
    adjusted = np.zeros(WALLS)
    for i, (w, _, _) in enumerate(records):
        adjusted[w] += agent[i] / 4
    np.testing.assert_allclose(adjusted, plain, atol=1e-12)


def test_any_lineup_telescopes_with_the_heuristic_as_reference():
    # two agents in two seats each (the ladder's lineups): every seat that leaves the
    # reference adds terms, for every seat's points
    lineup = ["value", "defensive", "value", "defensive"]
    recs = play_duplicate(lineup, 2, RULES, seed=8, progress=False)
    ref = play_duplicate(["heuristic"] * 4, 2, RULES, seed=8, progress=False)
    ref_scores = {(w, r): scores(rec) for w, r, rec in ref}
    est = AdvantageSum(lineup, RULES, reps=2, shuffle=False)
    assert est.reference == "heuristic"
    s = est.sums(recs)
    assert (s["divergences"] > 0).all()  # both agents, in every seat, leave the heuristic
    for i, (w, r, rec) in enumerate(recs):
        np.testing.assert_array_equal(s["sum"][i], scores(rec) - ref_scores[(w, r)])
    corr = est.of(recs)
    by_agent = per_wall(lineup, recs, 2, corr)
    np.testing.assert_allclose(by_agent["value"][1] + by_agent["defensive"][1], 0.0, atol=1e-9)
    assert est.describe()["divergences_per_hand"]["value"] > 0


def test_estimates_are_zero_sum_deterministic_and_independent_of_the_split(records):
    whole = AdvantageSum(LINEUP, RULES, reps=8, seed=3)
    corr = whole.of(records)
    adjusted = np.stack([scores(rec) for _, _, rec in records]) - corr
    np.testing.assert_allclose(adjusted.sum(axis=1), 0.0, atol=1e-9)
    assert np.abs(adjusted).max() > 0
    # records arrive block by block under --target-ci: the same estimates
    parts = AdvantageSum(LINEUP, RULES, reps=8, seed=3)
    assert len({w for w, _, _ in records[:8]}) == 2  # the first block: two whole walls
    parts.of(records[:8])
    np.testing.assert_array_equal(parts.of(records), corr)
    other = AdvantageSum(LINEUP, RULES, reps=8, seed=4).of(records)
    assert not np.array_equal(other, corr)  # the seed draws other wall orders
    assert whole.describe()["divergences_per_hand"] == parts.describe()["divergences_per_hand"]


def test_the_reference_against_itself_scores_exactly_zero():
    # a network reference is never trusted: every decision is replayed through its numba
    # copy, and none leaves it, so every adjusted point is 0
    pytest.importorskip("torch")
    recs = play_duplicate(["distill"] * 4, 2, RULES, seed=1, progress=False)
    est = AdvantageSum(["distill"] * 4, RULES, reps=2)
    assert est.reference == "distill" and not any(est._trusted)
    corr = est.of(recs)
    np.testing.assert_array_equal(corr, np.stack([scores(r) for _, _, r in recs]))
    assert any(scores(r).any() for _, _, r in recs)  # not a table of zeros to begin with
    assert est.hands == 8 and est.divergences.sum() == 0


def test_chunks_on_threads_give_the_one_call_answer(records, monkeypatch):
    from sichuan_env.agents.eval import advantage

    whole = AdvantageSum(LINEUP, RULES, reps=4, seed=2).sums(records)
    monkeypatch.setattr(advantage, "CHUNK", 5)  # 24 records: 5 chunks, the last one short
    split = AdvantageSum(LINEUP, RULES, reps=4, seed=2).sums(records)
    assert len(records) == 24
    for key in ("sum", "noise", "divergences"):
        np.testing.assert_array_equal(split[key], whole[key])


def test_bad_input_is_refused(records):
    with pytest.raises(ValueError, match="4 agent names"):
        AdvantageSum(["value", "heuristic", "heuristic"], RULES)
    with pytest.raises(ValueError, match="4 agent names"):
        AdvantageSum("valueheur", RULES)
    with pytest.raises(ValueError, match="reps"):
        AdvantageSum(LINEUP, RULES, reps=1)
    with pytest.raises(ValueError, match="reps"):
        AdvantageSum(LINEUP, RULES, reps=True)
    with pytest.raises(InputTypeError):
        AdvantageSum(LINEUP, "xuezhan")
    with pytest.raises(ValueError, match="seed"):
        AdvantageSum(LINEUP, RULES, seed=-1)
    est = AdvantageSum(LINEUP, RULES, reps=np.int64(4))  # numpy integers are integers
    with pytest.raises(ValueError, match="four rotations"):
        est.of(records[:3])
    wall, rot, rec = records[0]
    bad = dict(rec, actions=[[(s + 1) % 4, a] for s, a in rec["actions"]])  # wrong seats
    broken = [(wall, rot, bad), *records[1:8]]  # the first block, one hand garbled
    with pytest.raises(ValueError, match="record 0 cannot be replayed"):
        est.of(broken)
    no_result = [(wall, rot, {k: v for k, v in rec.items() if k != "result"}), *records[1:8]]
    with pytest.raises(ValueError, match="record 0 has no result scores"):
        est.of(no_result)
    # nothing was half-done: the estimator answers as a fresh one does
    assert est.hands == 0 and est.divergences.sum() == 0
    fresh = AdvantageSum(LINEUP, RULES, reps=4)
    np.testing.assert_array_equal(est.of(records), fresh.of(records))
    # a later block's bad record is named by its place in the whole match (--target-ci)
    block = [(wall + 6, rot, bad), *[(w + 6, r, x) for w, r, x in records[1:8]]]
    growing = AdvantageSum(LINEUP, RULES, reps=2)
    growing.of(records)
    with pytest.raises(ValueError, match="record 24 cannot be replayed"):
        growing.of([*records, *block])


def test_a_network_reference_replays_and_telescopes():
    # one agent against three copies of a network: the rollouts play the network in numba
    pytest.importorskip("torch")
    lineup = ["heuristic", "distill", "distill", "distill"]
    recs = play_duplicate(lineup, 2, RULES, seed=4, progress=False)
    ref = play_duplicate(["distill"] * 4, 2, RULES, seed=4, progress=False)
    ref_scores = {(w, r): scores(rec) for w, r, rec in ref}
    est = AdvantageSum(lineup, RULES, reps=2, shuffle=False)
    assert est.reference == "distill"
    s = est.sums(recs)
    assert s["divergences"].sum() > 0
    for i, (w, r, rec) in enumerate(recs):
        np.testing.assert_array_equal(s["sum"][i], scores(rec) - ref_scores[(w, r)])
        assert s["divergences"][i].sum() == s["divergences"][i, (-r) % 4]  # the copies: none
    # with random wall orders: repeatable, zero-sum, and not the telescoped sum
    one = AdvantageSum(lineup, RULES, reps=4, seed=7).sums(recs)
    two = AdvantageSum(lineup, RULES, reps=4, seed=7).sums(recs)
    np.testing.assert_array_equal(one["sum"], two["sum"])
    np.testing.assert_allclose(one["sum"].sum(axis=1), 0.0, atol=1e-9)
    assert one["noise"].max() > 0 and not np.array_equal(one["sum"], s["sum"])


@pytest.mark.slow
def test_the_estimate_agrees_with_the_plain_one_on_many_walls():
    # unbiased: the mean of (advantage - plain) per wall is zero within its noise, for an
    # agent that leaves the reference at a third of its decisions
    # (a sanity check that bounds a bias to about 0.2 points per hand; the guarantee is the
    # identity, which the telescoping tests check exactly)
    walls = 400
    recs = play_duplicate(LINEUP, walls, RULES, seed=9, progress=False)
    est = AdvantageSum(LINEUP, RULES, reps=16, seed=9)
    s = est.sums(recs)
    assert s["divergences"].sum() > walls * 4
    raw = np.zeros(walls)  # the raw sum (the tools blend it with plain by a fitted b)
    for i, (w, r, _) in enumerate(recs):
        raw[w] += s["sum"][i, (-r) % 4] / 4
    plain = per_wall(LINEUP, recs, walls)["value"][0]
    d = raw - plain
    z = d.mean() / (d.std(ddof=1) / np.sqrt(walls))
    assert abs(z) < 4.0, z
    assert raw.std() < plain.std()  # and narrower


def test_sichuan_eval_uses_it_for_one_agent_against_three_styles(tmp_path, capsys):
    out = tmp_path / "e.json"
    doc = evaluate_main(["--lineup", *LINEUP, "--walls", "4", "--seed", "2", "--quiet",
                         "--json", str(out), "--reps", "4"])  # fmt: skip
    assert doc["estimator"] == "advantage-sum" and doc["value_model"] is None
    assert doc["advantage"]["reference"] == "heuristic" and doc["advantage"]["reps"] == 4
    assert doc["advantage"]["divergences_per_hand"]["value"] > 0
    assert "advantage estimate" in capsys.readouterr().out
    on_disk = json.loads(out.read_text())
    assert len(on_disk["per_wall"]["value"]["adjusted"]) == 4
    plain = evaluate_main(["--lineup", *LINEUP, "--walls", "4", "--seed", "2", "--quiet",
                           "--no-adjust"])  # fmt: skip
    assert plain["estimator"] is None and plain["adjusted"] is False
    capped = evaluate_main(["--lineup", *LINEUP, "--walls", "16", "--seed", "2", "--quiet",
                            "--block-walls", "4", "--target-ci", "0.0001", "--reps", "2"])  # fmt: skip
    assert capped["walls"] == 16 and capped["estimator"] == "advantage-sum"


def test_sichuan_eval_refuses_what_the_estimate_cannot_do(capsys):
    for extra in (["--estimator", "advantage", "--value-model", "table_value"],
                  ["--estimator", "advantage", "--fine-tune", "1"],
                  ["--reference", "random"],
                  ["--reference", "heuristic", "--estimator", "luck"],
                  ["--reps", "8", "--estimator", "luck"],
                  ["--estimator", "advantage", "--no-adjust"],
                  ["--reps", "8", "--no-adjust"]):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            evaluate_main(["--lineup", *LINEUP, *extra, "--walls", "2", "--quiet"])
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no --value-model or --fine-tune" in err and "'random'" in err


def test_sichuan_eval_takes_any_lineup_with_an_explicit_estimator():
    lineup = ["value", "defensive", "value", "defensive"]
    doc = evaluate_main(["--lineup", *lineup, "--walls", "2", "--seed", "1", "--quiet",
                         "--estimator", "advantage", "--reps", "2"])  # fmt: skip
    assert doc["estimator"] == "advantage-sum" and doc["advantage"]["reference"] == "heuristic"
    rows = doc["agents"]
    total = (
        rows["value"]["points_per_hand_adjusted"] + rows["defensive"]["points_per_hand_adjusted"]
    )
    assert total == pytest.approx(0.0, abs=1e-9)
    pytest.importorskip("torch")
    auto = evaluate_main(["--lineup", *lineup, "--walls", "2", "--seed", "1", "--quiet"])
    assert auto["estimator"] == "luck"  # auto: only one agent against three copies


def test_sichuan_eval_keeps_the_luck_adjustment_on_request():
    pytest.importorskip("torch")
    doc = evaluate_main(["--lineup", *LINEUP, "--walls", "2", "--seed", "2", "--quiet",
                         "--estimator", "luck"])  # fmt: skip
    assert doc["estimator"] == "luck" and doc["value_model"] and doc["advantage"] is None


def test_the_ladder_adjusts_by_the_advantage_sum_on_request(tmp_path):
    from sichuan_env.agents.eval.ladder import main as ladder_main

    args = ["--agents", "value", "defensive", "--walls", "4", "--seed", "2", "--quiet",
            "--estimator", "advantage", "--reps", "2"]  # fmt: skip
    doc = ladder_main([*args, "--out", str(tmp_path / "l")])
    assert doc["adjusted"] is True and doc["estimator"] == "advantage-sum"
    assert doc["advantage"] == {"reference": "heuristic", "reps": 2}
    pair = json.loads(next((tmp_path / "l" / "pairs").glob("*.json")).read_text())
    assert pair["estimator"] == "advantage-sum" and len(pair["points_adjusted"]) == 4
    assert pair["points_adjusted"] != pair["points"]
    # a resume with the same settings keeps the pair; other estimate settings play it again
    path = next((tmp_path / "l" / "pairs").glob("*.json"))
    stamp = path.stat().st_mtime_ns
    ladder_main([*args, "--out", str(tmp_path / "l"), "--resume"])
    assert path.stat().st_mtime_ns == stamp
    ladder_main([*args[:-1], "3", "--out", str(tmp_path / "l"), "--resume"])
    assert json.loads(path.read_text())["reps"] == 3
    with pytest.raises(SystemExit) as exc:
        ladder_main([*args, "--out", str(tmp_path / "m"), "--reference", "random"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:  # its options without the estimate
        ladder_main([*args[:-4], "--reps", "2", "--out", str(tmp_path / "n")])
    assert exc.value.code == 2
