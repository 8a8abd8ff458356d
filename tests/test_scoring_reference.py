"""Fan scoring against oracles: the slow reference (``tests/reference.py``), ``score_win_batch``
and suit symmetry, mostly as Hypothesis properties; the rule tables are ``test_scoring.py``.
"""

import numpy as np
import pytest
import reference as R
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hand_with_melds

from sichuan_env import RuleConfig, best_wait_score, parse, score_win, tile_index
from sichuan_env.rules.config import MAX_BASE_POINTS


def _ref_melds(melds):
    return [(k, t) for k, t in melds]


@settings(max_examples=3000)
@given(
    hand_with_melds(),
    st.sampled_from([None, 0, 1, 2]),
    st.sampled_from(
        [
            {},
            {"self_draw": True},
            {"self_draw": True, "after_kong": True},
            {"kong_discard": True},
            {"robbing_kong": True},
            {"last_tile": True},
        ]
    ),
    st.sampled_from([None, 3, 5]),
    st.booleans(),
)
def test_score_matches_reference(hm, void, ctx, cap, extras_on):
    concealed, melds = hm
    rules = RuleConfig(
        fan_cap=cap,
        haidi=extras_on,
        jingou=extras_on,
        self_draw_bonus="fan" if extras_on else "none",
    )
    got = score_win(concealed, melds, void=void, rules=rules, **ctx)
    want = R.score(
        concealed,
        _ref_melds(melds),
        void=void,
        fan_cap=cap,
        haidi=extras_on,
        jingou=extras_on,
        zimo_fan=extras_on,
        **ctx,
    )
    if want is None:
        assert got is None
    else:
        assert (got.fan, got.base, got.roots, got.extras) == want


@settings(max_examples=800)
@given(hand_with_melds(concealed_size=13), st.sampled_from([None, 0, 1, 2]))
def test_best_wait_matches_reference(hm, void):
    concealed, melds = hm
    got = best_wait_score(concealed, melds, void=void)
    held = concealed.astype(int).copy()
    for kind, t in melds:
        held[t] += 3 if kind == "pong" else 4
    best = None
    for t in range(27):
        if held[t] >= 4:
            continue
        trial = concealed.copy()
        trial[t] += 1
        r = R.score(trial, melds, void=void, extras=False)
        if r is not None and (best is None or r[0] > best[1][0]):
            best = (t, r)
    if best is None:
        assert got is None
    else:
        assert got[0] == best[0] and (got[1].fan, got[1].base, got[1].roots) == best[1][:3]


@settings(max_examples=200)
@given(
    st.lists(hand_with_melds(), min_size=1, max_size=20),
    st.booleans(),
    st.sampled_from([1, 3, MAX_BASE_POINTS]),
)
def test_batch_score_equals_single(hms, self_draw, base_points):
    from sichuan_env import score_win_batch
    from sichuan_env.rules.scoring import MELD_KINDS

    rules = RuleConfig(base_points=base_points, jingou=True, self_draw_bonus="fan")
    concealed = np.stack([c for c, _ in hms])
    melds = np.zeros((len(hms), 4, 2), np.int8)
    for i, (_, ms) in enumerate(hms):
        for j, (kind, t) in enumerate(ms):
            melds[i, j] = (MELD_KINDS[kind], t)
    got = score_win_batch(concealed, melds, self_draw=self_draw, void="s", rules=rules)
    for i, (c, ms) in enumerate(hms):
        want = score_win(c, ms, self_draw=self_draw, void="s", rules=rules)
        if want is None:
            assert got.fan[i] == -1 and got.points[i] == 0
        else:
            assert (got.fan[i], got.roots[i], got.points[i]) == (want.fan, want.roots, want.points)


def test_batch_score_errors():
    from sichuan_env import score_win_batch

    good = parse("1m222p333p444p555p1m")[None]
    assert score_win_batch(good).fan.tolist() == [2]  # duidui
    with pytest.raises(ValueError, match="row 0: concealed must hold 14 tiles"):
        score_win_batch(parse("1m")[None])
    with pytest.raises(ValueError, match="shape"):
        score_win_batch(good, np.zeros((1, 3, 2), np.int8))
    with pytest.raises(ValueError, match="kind must be one of"):
        score_win_batch(good, np.full((1, 4, 2), 7, np.int8))  # kind code 7: no such meld
    with pytest.raises(ValueError, match=r"kind code 0\.\.3"):
        score_win_batch(good, np.full((1, 4, 2), 300, np.int64))
    bad = good.copy()
    bad[0, tile_index("1m")] = 5
    with pytest.raises(ValueError, match=r"values must be 0\.\.4, got 5 \(row 0, tile 1m\)"):
        score_win_batch(bad)


# the highest-fan hands the single and batched scorers can both express (self-draw only)
BIG_HANDS = [
    ("55m", [("kong", "1m"), ("kong", "2m"), ("concealed_kong", "3m"), ("kong", "4m")]),
    ("11112222333344m", []),
    ("11224444557799m", []),
    ("123m345m222p999p66p", []),
]


@pytest.mark.parametrize("cap", [None, 3])
def test_points_agree_single_and_batch_at_the_largest_base_points(cap):
    from sichuan_env import score_win_batch
    from sichuan_env.rules.config import MAX_BASE_POINTS, MAX_FAN
    from sichuan_env.rules.scoring import MELD_KINDS, win_points

    rules = RuleConfig(base_points=MAX_BASE_POINTS, fan_cap=cap, jingou=True, self_draw_bonus="fan")
    concealed = np.stack([parse(c) for c, _ in BIG_HANDS])
    melds = np.zeros((len(BIG_HANDS), 4, 2), np.int8)
    for i, (_, ms) in enumerate(BIG_HANDS):
        for j, (kind, tile) in enumerate(ms):
            melds[i, j] = (MELD_KINDS[kind], tile_index(tile))
    batch = score_win_batch(concealed, melds, self_draw=True, rules=rules)
    assert batch.points.dtype == np.int64
    for i, (c, ms) in enumerate(BIG_HANDS):
        single = score_win(c, ms, self_draw=True, rules=rules)
        assert single.points == MAX_BASE_POINTS * 2 ** (single.fan - 1)  # exact
        assert int(batch.points[i]) == single.points and int(batch.fan[i]) == single.fan
    assert max(batch.fan) == (3 if cap else 4 + 4 + 2)  # qing_duidui, 4 roots, jingou, zimo
    # every fan a win can reach: the one formula, exact and far below int64's limit
    for fan in range(1, MAX_FAN + 1):
        assert win_points(fan, MAX_BASE_POINTS) == MAX_BASE_POINTS * 2 ** (fan - 1) < 2**62


MIRROR = [9 * (t // 9) + 8 - t % 9 for t in range(27)]


@settings(max_examples=1000)
@given(hand_with_melds(), st.permutations([0, 1, 2]), st.booleans(), st.booleans())
def test_score_invariant_under_suit_permutation_and_mirror(hm, perm, mirror, self_draw):
    concealed, melds = hm

    def move(t: int) -> int:
        s, r = divmod(t, 9)
        t2 = 9 * perm.index(s) + r
        return MIRROR[t2] if mirror else t2

    c2 = np.zeros(27, np.uint8)
    for t in range(27):
        c2[move(t)] = concealed[t]
    m2 = [(k, move(t)) for k, t in melds]
    a = score_win(concealed, melds, self_draw=self_draw, void=0)
    b = score_win(c2, m2, self_draw=self_draw, void=perm.index(0))
    if a is None:
        assert b is None
    else:
        assert (a.fan, a.base, a.roots, a.extras) == (b.fan, b.base, b.roots, b.extras)


def test_hand_with_melds_draws_legal_wins_for_every_meld_count():
    # the strategy's complete-hand branch must fit every meld count, or the
    # comparisons above would test mostly non-wins for 0, 1, 3 and 4 melds
    seen: dict[int, int] = {}
    wins: dict[int, int] = {}

    @settings(max_examples=1000, derandomize=True, database=None)
    @given(hand_with_melds())
    def collect(hm):
        concealed, melds = hm
        seen[len(melds)] = seen.get(len(melds), 0) + 1
        wins[len(melds)] = wins.get(len(melds), 0) + (score_win(concealed, melds) is not None)

    collect()
    assert sorted(seen) == [0, 1, 2, 3, 4]
    for k in range(5):
        assert seen[k] >= 50, seen
        assert wins[k] / seen[k] >= 0.12, (k, wins[k], seen[k])
