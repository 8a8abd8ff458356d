"""Rollouts of each draw's counterfactuals: they replay the record, and the statistics are exact."""

from __future__ import annotations

import numpy as np
import pytest
from sichuan_env.agents.eval import luck_features as F
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import HEURISTIC

from research.luck_residual import measure as M


@pytest.fixture(scope="module")
def records() -> list[dict]:
    played = play_duplicate(["heuristic"] * 4, 2, M.RULES, 9, progress=False)
    return [r for _, _, r in played]


def _replays(records, styles, weights) -> int:
    """Rollouts of every draw: order 0 is the wall's own, order 1 a random one."""
    h = len(records)
    want = np.ones((h, F.MAX_EVENTS), bool)
    keys = np.zeros((h, F.MAX_EVENTS, 2, 55), np.float32)
    keys[:, :, 0] = np.arange(55)
    keys[:, :, 1] = np.random.default_rng(0).random((h, F.MAX_EVENTS, 55))
    o = M.rollouts(records, styles, weights, want, keys)
    ev = extract(records, M.RULES)
    n = ev.n_events - 1  # no deal event here
    np.testing.assert_array_equal(o["n_events"], n)
    checked = other_tile = other_order = 0
    for i in range(h):
        for e in range(n[i]):
            a = o["actual"][i, e]
            assert a == ev.actual[i, e + 1]
            to_come = ev.final[i] - ev.scores_at[i, e + 1]
            np.testing.assert_array_equal(o["roll"][i, e, a, 0], to_come)
            checked += 1
            live = o["probs"][i, e] > 0
            other_tile += int((o["roll"][i, e, live, 0] != o["roll"][i, e, a, 0]).any())
            other_order += int((o["roll"][i, e, live, 1] != o["roll"][i, e, live, 0]).any())
    # other tiles and other orders do change what happens
    assert other_tile > 10 and other_order > 10
    return checked


def test_the_tile_that_came_in_the_wall_s_own_order_replays_the_record(records) -> None:
    styles = np.full((len(records), 4), HEURISTIC, np.int64)
    assert _replays(records, styles, no_weights()) > 100


def test_a_network_seat_replays_the_record_too() -> None:
    lineup = ["distill", "heuristic", "heuristic", "heuristic"]
    played = play_duplicate(lineup, 1, M.RULES, 13, progress=False)
    styles, weights = M.lineup_policies(lineup, played, net=True)
    assert (styles == -1).sum() == len(played)  # the network plays one seat a hand
    assert _replays([r for _, _, r in played], styles, weights) > 100


def test_statistics_without_noise_are_exact() -> None:
    rng = np.random.default_rng(1)
    n = 5
    feats = rng.random((n, 27, 4, F.NF)).astype(np.float32)
    probs = np.zeros((n, 27), np.float32)
    probs[:, :6] = rng.integers(1, 5, size=(n, 6))
    d = rng.normal(size=(n, 27, 4))
    roll = np.repeat(d[:, :, None, :], 3, axis=2).astype(np.float32)  # every order alike
    model = LuckModel.load("luck")
    st = M.event_stats(model, feats, probs, np.zeros(n, np.int64), roll)
    p = probs / probs.sum(1, keepdims=True)
    dd = d - (p[..., None] * d).sum(1, keepdims=True)
    valid = probs > 0
    v = np.zeros((n, 27, 4))
    v[valid] = model.values(feats[valid])
    c = v - (p[..., None] * v).sum(1, keepdims=True)
    np.testing.assert_allclose(st["noise"], 0, atol=1e-9)
    np.testing.assert_allclose(st["luck"], (p[..., None] * dd**2).sum(1), rtol=1e-5)
    np.testing.assert_allclose(st["error"], (p[..., None] * (dd - c) ** 2).sum(1), rtol=1e-5)


def test_noise_is_removed_on_average() -> None:
    rng = np.random.default_rng(2)
    n, reps = 400, 8
    probs = np.zeros((n, 27), np.float32)
    probs[:, :4] = 1
    d = np.zeros((n, 27, 4))
    d[:, 0] = 1.0  # luck: tile 0 is worth one point more to every seat
    roll = d[:, :, None, :] + rng.normal(size=(n, 27, reps, 4))
    feats = rng.random((n, 27, 4, F.NF)).astype(np.float32)  # corrections that are not 0
    model = LuckModel.load("luck")
    st = M.event_stats(model, feats, probs, np.zeros(n, np.int64), roll.astype(np.float32))
    exact = M.event_stats(model, feats, probs, np.zeros(n, np.int64),
                          np.repeat(d[:, :, None, :], 2, axis=2).astype(np.float32))  # fmt: skip
    true = 0.25 * 0.75**2 + 0.75 * 0.25**2
    assert exact["error"].mean() > 0.01 and np.abs(exact["error"].mean() - true) > 0.01
    assert st["luck"].mean() == pytest.approx(true, abs=0.03)
    assert st["error"].mean() == pytest.approx(exact["error"].mean(), abs=0.03)
