"""The floor measurement: the wall's undealt part reordered, points, the variance split."""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_duplicate

from research.luck_floor.floor import DEALT, RULES, agent_means, floor, play, reorder

LINEUP = ["defensive", "heuristic", "heuristic", "heuristic"]


def test_points_match_the_duplicate_match_when_the_wall_is_kept() -> None:
    recs = play_duplicate(LINEUP, 3, RULES, seed=5, progress=False)
    from sichuan_env.agents.eval.evaluate import wall_seeds_of

    seeds = wall_seeds_of(3, 5)
    agents = make_lineup_agents(LINEUP, 5)
    kept = np.tile(np.arange(DEALT, 108), (3, 1))
    pts = play(LINEUP, seeds, kept, agents)
    for wall, rot, rec in recs:
        np.testing.assert_array_equal(pts[4 * wall + rot], rec["result"]["scores"])
    assert np.abs(pts).sum() > 0
    means = agent_means(pts, LINEUP, "defensive")
    assert means.shape == (3,)
    expected = [np.mean([r["result"]["scores"][(-rot) % 4] for w, rot, r in recs if w == k])
                for k in range(3)]  # fmt: skip
    np.testing.assert_allclose(means, expected)


def test_reordered_walls_change_the_hands_that_follow() -> None:
    rng = np.random.default_rng(0)
    orders = reorder(rng, 8)
    assert (np.sort(orders, axis=1) == np.arange(DEALT, 108)).all()  # a permutation each
    from sichuan_env.agents.eval.evaluate import wall_seeds_of

    seeds = wall_seeds_of(8, 9)
    agents = make_lineup_agents(LINEUP, 9)
    a = play(LINEUP, seeds, None, agents)
    b = play(LINEUP, seeds, orders, agents)
    assert (a.sum(1) == 0).all() and (b.sum(1) == 0).all()  # zero-sum either way
    assert (a != b).any(axis=1).sum() >= 24  # most of the 32 hands scored differently (32 now)


def test_floor_recovers_a_known_split() -> None:
    rng = np.random.default_rng(1)
    deals, reps = 4000, 6
    x = rng.normal(0, 0.6, (deals, 1)) + rng.normal(0, 0.8, (deals, reps))  # 0.36 + 0.64
    got = floor(x, boot=200)
    assert abs(got["var_between_deals"] - 0.36) < 0.04
    assert abs(got["var_within_deal"] - 0.64) < 0.04
    assert abs(got["floor_ratio"] - 0.6) < 0.04
    assert got["floor_ci95"][0] < got["floor_ratio"] < got["floor_ci95"][1]
