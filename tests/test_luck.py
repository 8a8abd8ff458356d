"""The luck-adjusted estimator (sichuan_env.agents.eval.luck): its chance events are the
engine's, its counterfactuals are real states, its corrections have zero mean, and it
refuses what it cannot replay."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from sichuan_env.agents.eval import luck_features as K
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import KIND, LuckModel, ValueNet, load_for
from sichuan_env.agents.eval.luck_events import extract, record_log
from sichuan_env.agents.eval.match_stats import per_wall, summarize

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.state import MAX_LOG, PH_TURN, STATE_DTYPE
from sichuan_env.engine.step import apply
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

RULES = RuleConfig.preset("xuezhan")


def _random_model(seed: int = 0) -> LuckModel:
    """A value model with random weights: the corrections' zero mean holds for any model."""
    torch.manual_seed(seed)
    net = ValueNet()
    return LuckModel(net, {"rules": RULES.to_dict(), "deal_baseline": [0.0, 0.0, 0.0, 0.0]})


@pytest.fixture(scope="module")
def heuristic_records():
    recs = play_duplicate(["heuristic", "random", "heuristic", "defensive"], 48, RULES, seed=5,
                          progress=False)  # fmt: skip
    return recs


@njit
def _swap_at(states, wall, dealer, offset, log, n_log, rules, flags, waits, dist, target, t,
             f_real, p_real, f_swap, p_swap):  # fmt: skip
    """Replay to draw event ``target``; features of it, then of the state in which the
    drawer drew ``t`` instead (a copy of ``t`` from later in the wall swapped in)."""
    deal(states, 0, wall, dealer, offset, rules)
    st = states[0]
    e = 1
    for j in range(n_log):
        before = st.draws.sum()
        apply(st, log[j] % 128, rules, flags, waits)
        if st.draws.sum() > before and st.phase == PH_TURN and st.drawn:
            if e == target:
                drawn = K.draw_event(st, rules, flags, dist, f_real, p_real)
                if drawn == t:
                    return -1
                for q in range(st.head, st.tail + 1):
                    if st.wall[q] == t:
                        st.wall[q] = drawn
                        st.hands[st.to_act, drawn] -= 1
                        st.hands[st.to_act, t] += 1
                        st.drawn_tile = t
                        K.draw_event(st, rules, flags, dist, f_swap, p_swap)
                        return q
                return -2
            e += 1
    return -3


def test_every_counterfactual_is_the_real_state_of_another_wall(heuristic_records):
    tables = get_tables()
    rules = kernel_rules(RULES)
    checked = 0
    rng = np.random.default_rng(0)
    for _, _, rec in heuristic_records[:24]:
        wall, dealer, offset, log = record_log(rec)
        ev = extract([rec], RULES)
        n = int(ev.n_events[0])
        for target in rng.choice(np.arange(1, n), size=min(4, n - 1), replace=False):
            for t in np.flatnonzero(ev.probs[0, target] > 0):
                states = np.zeros(1, dtype=STATE_DTYPE)
                f_real = np.zeros((27, 4, K.NF), np.float32)
                p_real = np.zeros(27, np.float32)
                f_swap, p_swap = np.zeros_like(f_real), np.zeros_like(p_real)
                padded = np.zeros(MAX_LOG, np.int16)
                padded[: log.size] = log
                q = _swap_at(states, wall, dealer, offset, padded, log.size, rules, tables["FLAGS"],
                             tables["WAITS"], tables["DIST"], int(target), int(t), f_real, p_real,
                             f_swap, p_swap)  # fmt: skip
                np.testing.assert_array_equal(f_real, ev.feats[0, target])
                if q == -1:
                    continue  # t is the tile that was drawn
                assert q >= 0, "a tile of the wall's composition is not in the wall"
                actual = int(ev.actual[0, target])
                np.testing.assert_array_equal(f_swap[int(t)], f_real[int(t)])
                np.testing.assert_array_equal(p_swap, p_real)
                assert actual != t
                checked += 1
    assert checked > 200


def test_draw_probabilities_are_the_walls_composition(heuristic_records):
    recs = [r for _, _, r in heuristic_records[:32]]
    ev = extract(recs, RULES)
    events = 0
    for i in range(len(recs)):
        for e in range(1, int(ev.n_events[i])):
            p = ev.probs[i, e]
            assert abs(float(p.sum()) - 1.0) < 1e-5
            assert p[ev.actual[i, e]] > 0  # what happened could happen
            counts = p * (1.0 / p[p > 0].min())
            assert np.allclose(counts, np.round(counts), atol=1e-3)
            events += 1
    assert events > 500


def test_corrections_have_zero_mean(heuristic_records):
    """Over many hands, each kind of correction averages 0 (within 4 standard errors),
    and what was drawn is distributed as the probabilities say."""
    recs = [r for _, _, r in heuristic_records]
    for model in (_random_model(1), _random_model(2)):
        c = model.corrections(recs)
        for kind in (c.draw, c.total):
            x = kind[:, 0]
            assert abs(x.mean()) < 4 * x.std(ddof=1) / np.sqrt(x.size) + 1e-9
            assert np.abs(kind.sum(axis=1)).max() < 1e-3  # zero-sum over the seats
    ev = extract(recs[:64], RULES)
    hit, expected = np.zeros(27), np.zeros(27)
    for i in range(64):
        for e in range(1, int(ev.n_events[i])):
            hit[ev.actual[i, e]] += 1
            expected += ev.probs[i, e]
    assert np.abs(hit - expected).max() < 4 * np.sqrt(expected.max()) + 3


def test_deal_corrections_cancel_in_a_duplicate_match(heuristic_records):
    model = _random_model(3)
    c = model.corrections([r for _, _, r in heuristic_records])
    lineup = ["heuristic", "random", "heuristic", "defensive"]
    # the four rotations of a wall deal it to the same seats: per agent, the deal luck is 0
    walls = max(w for w, _, _ in heuristic_records) + 1
    deal_only = per_wall(lineup, heuristic_records, walls, c.deal)
    for name, (plain, adjusted) in deal_only.items():
        np.testing.assert_allclose(adjusted, plain, atol=1e-4, err_msg=name)


def test_self_play_scores_exactly_zero_adjusted():
    recs = play_duplicate(["heuristic"] * 4, 8, RULES, seed=2, progress=False)
    c = _random_model(4).corrections([r for _, _, r in recs]).total
    s = summarize(["heuristic"] * 4, recs, 8, c)["heuristic"]
    assert s["points_per_hand"] == 0 and abs(s["points_per_hand_adjusted"]) < 1e-6
    assert s["ci95_adjusted"] < 1e-5


def test_records_that_cannot_be_replayed_are_refused(heuristic_records):
    model = _random_model()
    good = heuristic_records[0][2]
    cases = {
        "rules": lambda r: r.update(rules={**r["rules"], "fan_cap": 99}),
        "wall": lambda r: r.update(wall=r["wall"][:-1]),
        "action": lambda r: r["actions"].__setitem__(3, [r["actions"][3][0], "hu"]),
        "short": lambda r: r.update(actions=r["actions"][:10]),
        "scores": lambda r: r["result"].update(scores=[1, -1, 0, 0]),
        "seat": lambda r: r["actions"].__setitem__(0, [7, r["actions"][0][1]]),
    }
    for name, spoil in cases.items():
        bad = copy.deepcopy(good)
        spoil(bad)
        with pytest.raises(ValueError):
            model.corrections([good, bad])
        assert name  # each spoiled field is its own case
    with pytest.raises(ValueError):
        model.corrections(["not a record"])


def test_a_model_of_other_rules_gives_plain_estimates_and_says_so(tmp_path):
    from sichuan_env.agents import checkpoint

    net = ValueNet()
    meta = {"rules": RuleConfig.preset("first_win").to_dict(), "command": "test", "commit": "x",
            "wall_clock_s": 0.0, "deal_baseline": [0.0] * 4}  # fmt: skip
    path = checkpoint.save(tmp_path / "v.pt", KIND, net, meta)
    model, why = load_for(RULES, str(path))
    assert model is None and "first_win" in why and "plain" in why
    model, why = load_for(RuleConfig.preset("first_win"), str(path))
    assert model is not None
    model, why = load_for(RULES, str(tmp_path / "missing.pt"))
    assert model is None and "cannot be loaded" in why
    (tmp_path / "junk.pt").write_bytes(b"junk")
    model, why = load_for(RULES, str(tmp_path / "junk.pt"))
    assert model is None
