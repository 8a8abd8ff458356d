"""Exact opponent labels: the engine's against an independent reference on thousands of states."""

import numpy as np
import pytest
import reference as ref
from engine_helpers import game_with, scripted, voids

from sichuan_env import Game, RuleConfig
from sichuan_env.engine import selfplay
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.hand import waits as shape_waits
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules import best_wait_score, score_win
from sichuan_env.rules.config import kernel_rules
from sichuan_env.tiles import tile_index, tile_name

SEAT3 = "1224445666899s"
VOIDS = voids("s", "s", "s", "m")
MELD_KINDS = {1: "pong", 2: "kong", 3: "concealed_kong"}


def reference_labels(game: Game, me: int) -> dict:
    """The labels from tests/reference.py's own win and shanten search and the record fields."""
    st = game.state
    rules = game.rules
    wall_left = game.wall_left()
    kong_discard = game.phase() == "turn" and game.to_act() == me and bool(st["replacement"])
    out = {k: [] for k in ("tenpai", "waits", "shanten", "hand", "deal_in", "active")}
    for r in range(1, 4):
        o = (me + r) % 4
        hand = [int(x) for x in st["hands"][o]]
        melds = [(MELD_KINDS[int(k)], int(t)) for k, t in st["melds"][o][: st["n_melds"][o]]]
        void = int(st["void"][o]) if rules.declare_void and st["void"][o] >= 0 else None
        active = not st["won"][o]
        waits = [0] * 27
        deal_in = [0] * 27
        # a win needs the full hand: 13 tiles with 3 per meld (mid-换三张, with picks out, none is)
        if active and sum(hand) + 3 * len(melds) == 13:
            for t in range(27):
                if _held(hand, melds, t) >= 4:  # docs/rules.md §5: melds count too
                    continue
                plus = list(hand)
                plus[t] += 1
                if ref.score(plus, melds, void=void) is None:
                    continue
                waits[t] = 1
                fan = ref.score(
                    plus, melds, void=void, kong_discard=kong_discard, last_tile=wall_left == 0,
                    haidi=rules.haidi, jingou=rules.jingou, fan_cap=rules.fan_cap,
                )[0]  # fmt: skip
                passed = int(st["passed_fan"][o])
                if not (rules.pass_win_rule and passed >= 0 and fan <= passed):
                    deal_in[t] = rules.base_points * 2 ** (fan - 1)
        size = sum(hand)
        out["tenpai"].append(any(waits))
        out["waits"].append(waits)
        out["shanten"].append(ref.shanten(hand, void) if size % 3 else -2)
        out["hand"].append(hand)
        out["deal_in"].append(deal_in)
        out["active"].append(active)
    return {k: np.array(v) for k, v in out.items()}


def _held(hand: list[int], melds: list[tuple[str, int]], t: int) -> int:
    """Copies of ``t`` in a hand and its melds: 3 per pong, 4 per kong."""
    return hand[t] + sum(3 if kind == "pong" else 4 for kind, tile in melds if tile == t)


def _compare(game: Game, me: int) -> dict:
    got = game.opponent_labels(me)
    want = reference_labels(game, me)
    for key, value in want.items():
        assert np.array_equal(got[key], value), (key, got[key], value, game.table())
    return got


RULESETS = [
    RuleConfig(),
    RuleConfig(exchange_three=True, haidi=True, jingou=True, fan_cap=4, base_points=3),
]


@pytest.mark.parametrize("rules", RULESETS, ids=["default", "options"])
def test_labels_match_the_reference_on_random_states(rules):
    """Over 600 states per ruleset, each with three opponents' labels (thousands in all)."""
    _random_states(rules, hands=35, min_states=600)


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESETS, ids=["default", "options"])
def test_labels_match_the_reference_soak(rules):
    _random_states(rules, hands=600, min_states=10_000)


def _random_states(rules, hands, min_states):
    """Greedy self-play (with some declined wins) reaches tenpai often; every 3rd decision is checked."""
    rng = np.random.default_rng(7)
    r = kernel_rules(rules)
    dist = get_tables()["DIST"]
    mask = np.zeros(88, dtype=np.int8)
    state = np.uint64(7)
    seen = {"states": 0, "tenpai": 0, "deal_in": 0, "won": 0, "blocked": 0}
    for seed in range(hands):
        game = Game(rules, seed=seed)
        k = 0
        while not game.is_over():
            me = game.to_act()
            if k % 3 == 0:
                got = _compare(game, me)
                seen["states"] += 1
                seen["tenpai"] += int(got["tenpai"].sum())
                seen["deal_in"] += int((got["deal_in"] > 0).any())
                seen["won"] += int((~got["active"]).sum())
                seen["blocked"] += int(
                    (
                        got["waits"].astype(bool) & (got["deal_in"] == 0) & got["active"][:, None]
                    ).any()
                )
            legal = game.legal_ids()
            mask[:] = 0
            mask[legal] = 1
            if 86 in legal and 87 in legal and rng.random() < 0.4:
                a = 87  # decline a win now and then: 过胡 blocks
            else:  # greedy: wins, and discards that lower the shanten, so hands reach tenpai
                a, state = selfplay.choose(
                    game.state, mask, len(legal), state, selfplay.GREEDY, r, dist
                )
                state = np.uint64(state)
            game.step_id(int(a))
            k += 1
    assert seen["states"] > min_states
    assert min(seen.values()) > 0, seen  # every kind of label case happened


def test_kong_discard_context_raises_the_deal_in():
    # seat 0's concealed kong, then its replacement draw: a discard now is 杠上炮
    g = game_with(
        ("1111m7m22m33p55p8p9p", "234m456m89m11p456p", "333m666m999m77p8p2p", SEAT3),
        "6p",
        tail="2m",
    )
    scripted(g, [*VOIDS])
    before = _compare(g, 0)
    assert before["deal_in"][0][6] == 1  # seat 1 (next) waits on 7m: 平胡, 1 point
    scripted(g, [(0, "concealed_kong 1m")])
    after = _compare(g, 0)
    assert after["deal_in"][0][6] == 2  # + 杠上炮: 2 fan, 2 points
    assert after["tenpai"][0] and not after["tenpai"][2]


def test_pass_win_block_zeroes_the_deal_in_but_not_the_wait():
    g = game_with(
        ("7m11m22m88p77p33p2p3p", "44456m123p456p99p", "777m88m99m55p66p4p1p", SEAT3),
        "9m",
        draws="5s4m",
    )
    scripted(g, [*VOIDS, (0, "discard 7m"), (1, "pass"), (2, "pong")])
    labels = _compare(g, 2)  # seat 2 to act; seat 1 is its previous seat (index 2)
    assert labels["waits"][2][6] == 1 and labels["deal_in"][2][6] == 0  # 7m: blocked by 过胡
    assert labels["deal_in"][2][3] == 2  # 4m: 2 fan (a root) > the declined 1 fan


def test_winners_have_no_waits_and_vector_env_agrees():
    venv = VectorEnv(32, labels=True, seed=3)
    _, mask, seat = venv.reset()
    rng = np.random.default_rng(0)
    winners = 0
    for _ in range(400):
        actions = np.where(mask[:, 86] == 1, 86, (rng.random(mask.shape) * mask).argmax(axis=1))
        _, mask, seat, _, _, info = venv.step(actions)
        labels = info["labels"]
        assert not labels["tenpai"][~labels["active"]].any()
        assert not labels["deal_in"][~labels["active"]].any()
        winners += int((~labels["active"]).sum())
    assert winners > 0
    for i in range(0, 32, 7):
        game = venv.game(i)
        direct = game.opponent_labels(int(seat[i]))
        for key, value in direct.items():
            assert np.array_equal(labels[key][i], value), key


# docs/rules.md §5: a tile the opponent already holds 4 times (hand and melds) is no wait. Seat 1's
# 13 tiles, its claim on the dealer's 7p (the tail tile 5s is the kong's replacement), then its
# discard of 5s; the waits of seat 1's concealed part + melds, and whether it is tenpai.
FOUR_COPIES = [
    # hand               claim   concealed after    melds            waits
    ("777p123m456m11m89p", "kong", "11123456m89p", [("kong", "7p")], []),  # 7p was the only wait
    ("777p123m456m11m56p", "kong", "11123456m56p", [("kong", "7p")], ["4p"]),  # 4p7p less 7p
    ("777p123m456m789m5s", "pong", "123456789m7p", [("pong", "7p")], []),  # 单钓 the 4th 7p
]


@pytest.mark.parametrize(("hand", "claim", "concealed", "melds", "want"), FOUR_COPIES)
def test_a_tile_held_four_times_with_the_melds_is_no_wait(hand, claim, concealed, melds, want):
    g = game_with(
        ("99m222p333p444p55p", hand, "333m666m888m66p11p", SEAT3), "7p", draws="9s", tail="5s"
    )
    scripted(g, [*VOIDS, (0, "discard 7p"), (1, claim), (1, "discard 5s")])
    assert g.hand(1) == concealed and g.melds(1) == melds
    labels = _compare(g, 0)  # seat 1 is seat 0's next opponent (index 0)
    assert [tile_name(int(t)) for t in np.flatnonzero(labels["waits"][0])] == want
    assert labels["tenpai"][0] == bool(want)
    assert not labels["deal_in"][0][tile_index("7p")]
    best = best_wait_score(concealed, melds, void="s")  # 查大叫 agrees
    assert (best is None) if not want else (tile_name(best[0]) in want)


def _facade_melds(st, seat: int) -> list[tuple[str, str]]:
    return [
        (MELD_KINDS[int(k)], tile_name(int(t))) for k, t in st["melds"][seat][: st["n_melds"][seat]]
    ]


def _independent_labels(game: Game, me: int, seen: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(tenpai bool[3], waits uint8[3, 27])`` from the public facades alone.

    A wait is a shape wait of the concealed part (``hand.waits``) held fewer than 4 times
    over hand and melds (counted here) that ``score_win`` accepts as a win with the melds;
    tenpai is ``best_wait_score`` (查大叫) finding a win, which must be one of those waits.
    """
    st = game.state
    rules = game.rules
    tenpai = np.zeros(3, dtype=bool)
    waits = np.zeros((3, 27), dtype=np.uint8)
    for r in range(3):
        o = (me + 1 + r) % 4
        concealed = st["hands"][o].copy()
        if st["won"][o] or int(concealed.sum()) % 3 != 1:
            continue
        melds = _facade_melds(st, o)
        void = "mps"[int(st["void"][o])] if rules.declare_void and st["void"][o] >= 0 else None
        seen["melds"] += bool(melds)
        for t in shape_waits(concealed):
            held = int(concealed[t]) + sum(
                3 if kind == "pong" else 4 for kind, tile in melds if tile_index(tile) == t
            )
            if held >= 4:
                seen["four_copies"] += 1  # the case docs/rules.md §5 excludes
                continue
            plus = concealed.copy()
            plus[t] += 1
            if score_win(plus, melds, void=void, rules=rules) is not None:
                waits[r, t] = 1
        best = best_wait_score(concealed, melds, void=void, rules=rules)
        tenpai[r] = best is not None
        assert tenpai[r] == bool(waits[r].any()), (o, game.table())
        if best is not None:
            assert waits[r, best[0]], (o, best, game.table())
            seen["tenpai_with_melds"] += bool(melds)
    return tenpai, waits


def test_every_label_matches_the_independent_waits_over_whole_games():
    """Every decision of 60 whole hands; kongs and pongs always taken, wins declined at times.

    Claiming everything makes melds (and tiles held 4 times with a meld) common; declining some
    wins keeps tenpai hands in play. Thousands of opponent labels are checked.
    """
    rng = np.random.default_rng(11)
    r = kernel_rules(RuleConfig())
    dist = get_tables()["DIST"]
    mask = np.zeros(88, dtype=np.int8)
    state = np.uint64(11)
    seen = {"labels": 0, "melds": 0, "tenpai_with_melds": 0, "four_copies": 0}
    for seed in range(60):
        game = Game(seed=1000 + seed)
        while not game.is_over():
            me = game.to_act()
            got = game.opponent_labels(me)
            tenpai, waits = _independent_labels(game, me, seen)
            assert np.array_equal(got["waits"], waits), (me, got["waits"], waits, game.table())
            assert np.array_equal(got["tenpai"], tenpai), (me, got["tenpai"], game.table())
            assert not (got["deal_in"] > 0)[waits == 0].any()
            seen["labels"] += 3
            legal = game.legal_ids()
            claims = [a for a in legal if 57 <= a <= 85]  # self kongs, pong, kong
            if claims:
                a = claims[-1]  # a kong before a pong
            elif 86 in legal and 87 in legal and rng.random() < 0.7:
                a = 87  # decline the win: the tenpai hand stays in play
            else:
                mask[:] = 0
                mask[legal] = 1
                a, state = selfplay.choose(
                    game.state, mask, len(legal), state, selfplay.GREEDY, r, dist
                )
                state = np.uint64(state)
            game.step_id(int(a))
    assert seen["labels"] > 3000, seen
    assert min(seen.values()) > 0, seen  # melds, tenpai with melds and 4 copies were all reached
