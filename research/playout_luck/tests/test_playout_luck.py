"""The playout corrections: the actual draw's playout is the hand as played; sums and checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import HEURISTIC

from research.playout_luck.measure import RULES, playout_arrays, playout_draw


@pytest.fixture(scope="module")
def records() -> list[dict]:
    recs = play_duplicate(["heuristic"] * 4, 2, RULES, seed=7, progress=False)
    return [r for _, _, r in recs]


def test_actual_slot_reaches_the_next_event(records) -> None:
    """All seats heuristic (the proxy is exact): playing the slot that happened forward
    reaches the next recorded draw, so its next-draw features are that event's."""
    styles = np.full((len(records), 4), HEURISTIC, np.int64)
    o = playout_arrays(records, styles, no_weights())
    compared = 0
    for i in range(len(records)):
        n = int(o["n_events"][i])
        assert n > 10
        for e in range(n):
            a = int(o["actual"][i, e])
            assert o["probs"][i, e, a] > 0
            if e + 1 < n:
                assert o["over"][i, e, a] == 0
                np.testing.assert_array_equal(o["feats2"][i, e, a], o["feats"][i, e + 1])
                np.testing.assert_array_equal(o["probs2"][i, e, a], o["probs"][i, e + 1])
                compared += 1
    assert compared > 40


def test_counterfactual_slots_differ_and_corrections_are_finite(records) -> None:
    styles = np.full((len(records), 4), HEURISTIC, np.int64)
    o = playout_arrays(records, styles, no_weights())
    live = o["probs"][0, : o["n_events"][0]] > 0
    assert (live.sum(-1) > 1).all()  # every draw had alternatives
    moved = o["gain"][0, : o["n_events"][0]][live]
    assert np.abs(moved).sum() > 0  # some counterfactual draw scored on the way
    model = LuckModel.load("luck")
    corr, shipped = playout_draw(model, records, styles, no_weights())
    assert np.isfinite(corr).all() and np.abs(corr).sum() > 0
    np.testing.assert_allclose(corr.sum(1), 0.0, atol=1e-4)  # zero-sum values and gains
    np.testing.assert_allclose(shipped, model.corrections(records).draw, atol=1e-4)


def test_bad_record_is_refused(records) -> None:
    bad = dict(records[0])
    bad["actions"] = list(records[0]["actions"])[:-3]
    with pytest.raises(ValueError):
        playout_arrays([bad], np.full((1, 4), HEURISTIC, np.int64), no_weights())


def test_refit_parts_are_the_corrections_linear_in_the_head(records) -> None:
    """``G + A . w`` is the playout correction and ``B . w`` the shipped one for the shipped
    ``w``; for another ``w`` the same parts give the corrections of a model with that head."""
    from research.playout_luck.refit import head, parts

    styles = np.full((len(records), 4), HEURISTIC, np.int64)
    model = LuckModel.load("luck")
    o = playout_arrays(records, styles, no_weights())
    got = parts(model, o)
    w0 = head(model)
    corr, shipped = playout_draw(model, records, styles, no_weights())
    assert np.abs(got["A"]).sum() > 0 and np.abs(got["G"]).sum() > 0
    np.testing.assert_allclose(got["G"] + got["A"] @ w0, corr, atol=1e-3)
    np.testing.assert_allclose(got["B"] @ w0, shipped, atol=1e-3)
    other = LuckModel.load("luck")
    w1 = np.linspace(-1.0, 1.0, w0.size)
    with torch.no_grad():
        other.net.body[-1].weight[0] = torch.from_numpy(w1).float()
    other = LuckModel(other.net, other.doc)
    corr1, shipped1 = playout_draw(other, records, styles, no_weights())
    np.testing.assert_allclose(got["G"] + got["A"] @ w1, corr1, atol=1e-3)
    np.testing.assert_allclose(got["B"] @ w1, shipped1, atol=1e-3)


def test_crossfit_never_fits_a_wall_on_itself() -> None:
    """Each half's ``w`` changes only with the other half's rows."""
    from research.playout_luck.refit import crossfit

    rng = np.random.default_rng(0)
    h, k = 64, 5
    wall, seat = np.repeat(np.arange(16), 4), np.tile(np.arange(4), 16)
    x, y = rng.normal(size=(h, 4, k)), rng.normal(size=(h, 4))
    for objective in ("hand", "wall"):
        out, ws = crossfit(objective, y, x, seat, wall, np.zeros(k), 0.1)
        y2 = y.copy()
        y2[wall % 2 == 0] += rng.normal(size=(32, 4)) * 5  # the even walls' targets move
        out2, ws2 = crossfit(objective, y2, x, seat, wall, np.zeros(k), 0.1)
        np.testing.assert_allclose(out2[wall % 2 == 0], out[wall % 2 == 0])  # fitted on odd
        assert not np.allclose(out2[wall % 2 == 1], out[wall % 2 == 1])
        np.testing.assert_allclose(ws2[0], ws[0])
