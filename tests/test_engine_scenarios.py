"""Hand-built scenarios, one per rule of docs/rules.md §4, §7 and §10.1.

Seat 3 holds only s tiles (void m) in most scenarios, so it never claims the
m/p discards of the others (who are void s).
"""

import pytest
from engine_helpers import build_wall, game_with, ordered, scripted, voids

from sichuan_env import Game, IllegalActionError, RuleConfig, check_invariants, tile_name

SEAT3 = "1224445666899s"  # noten (shanten 2 with void m): it never wins or claims
VOIDS = voids("s", "s", "s", "m")


def auto(game: Game, until_over: bool = True) -> None:
    """Pass every claim; discard the drawn tile (or a void tile when one must go)."""
    while not game.is_over():
        legal = game.legal()
        if "pass" in legal:
            game.step("pass")
        elif legal == ["hu"]:
            game.step("hu")  # 最后四张: forced
        elif game.phase() == "turn":
            drawn = int(game.state["drawn_tile"])
            want = f"discard {tile_name(drawn)}" if drawn >= 0 else None
            game.step(want if want in legal else next(a for a in legal if a.startswith("discard")))
        else:
            game.step(legal[0])
        check_invariants(game)
        if not until_over:
            return


def test_seat3_hand_is_13_s_tiles():
    assert len(ordered(SEAT3)) == 13


def test_multiple_winners_on_one_discard_and_next_drawer():
    # 一炮多响: seats 1 and 2 both win on seat 0's 5p; the next drawer follows seat 2
    g = game_with(
        ("66p77p88p99p55m66m7m", "123m456m789m11p46p", "111m222m333m444m5p", SEAT3),
        "5p",
        draws="9s",
    )
    scripted(g, [*VOIDS, (0, "discard 5p")])
    assert g.to_act() == 1 and g.legal() == ["hu", "pass"]
    scripted(g, [(1, "hu")])
    assert g.to_act() == 2 and g.legal() == ["hu", "pass"]
    scripted(g, [(2, "hu")])
    wins = g.wins()
    assert [(w["seat"], w["from"], w["fan"], w["base"]) for w in wins] == [
        (1, 0, 1, "pinghu"),
        (2, 0, 2, "duidui"),
    ]
    assert g.scores() == [-3, 1, 2, 0]
    assert g.to_act() == 3 and g.phase() == "turn"  # after seat 2, the farthest winner
    assert g.discards(0) == [("5p", "won_on")]


def test_pass_win_block_and_its_exception():
    # seat 1 passes a 1-fan win on 7m; the other 7m (1 fan) is then not offered,
    # but 4m (2 fan: the fourth 4m is a root) is, before seat 1 draws again
    g = game_with(
        ("7m11m22m88p77p33p2p3p", "44456m123p456p99p", "777m88m99m55p66p4p1p", SEAT3),
        "9m",
        draws="5s4m",
    )
    scripted(g, [*VOIDS, (0, "discard 7m")])
    assert g.legal() == ["hu", "pass"]
    scripted(g, [(1, "pass")])
    assert g.to_act() == 2 and set(g.legal()) == {"pong", "kong", "pass"}
    scripted(g, [(2, "pong"), (2, "discard 7m")])
    assert g.to_act() == 3 and g.phase() == "turn"  # seat 1 was not asked: blocked
    scripted(g, [(3, "discard 5s"), (0, "discard 4m")])
    assert g.to_act() == 1 and g.legal() == ["pong", "kong", "hu", "pass"]  # 2 fan > 1 declined
    scripted(g, [(1, "hu")])
    assert g.wins()[0]["fan"] == 2 and g.scores()[:2] == [-2, 2]


def test_pass_win_rule_off_offers_the_same_win_again():
    g = game_with(
        ("7m11m22m88p77p33p2p3p", "44456m123p456p99p", "777m88m99m55p66p4p1p", SEAT3),
        "9m",
        rules=RuleConfig(pass_win_rule=False),
    )
    scripted(g, [*VOIDS, (0, "discard 7m"), (1, "pass"), (2, "pong"), (2, "discard 7m")])
    assert g.to_act() == 1 and g.legal() == ["hu", "pass"]


def test_robbing_a_kong():
    # seat 2 pongs 5p, later adds the fourth 5p; seat 1 (waiting 5p) robs it
    g = game_with(
        ("5p66p77p88p99p55m66m", "123m456m789m11p46p", "55p111m222m333m44m", SEAT3),
        "7m",
        draws="9s" + "8m" + "9m" + "5p",
    )
    script = [*VOIDS, (0, "discard 5p"), (1, "pass"), (2, "pong"), (2, "discard 1m")]
    scripted(g, script)
    # seat 3 draws 9s, seat 0 draws 8m, seat 1 draws 9m (its block ends), seat 2 draws 5p
    scripted(g, [(3, "discard 9s"), (0, "discard 8m"), (1, "discard 9m")])
    assert "added_kong 5p" in g.legal()
    scripted(g, [(2, "added_kong 5p")])
    assert g.phase() == "rob" and g.to_act() == 1 and g.legal() == ["hu", "pass"]
    scripted(g, [(1, "hu")])
    win = g.wins()[0]
    assert (win["seat"], win["from"], win["extras"], win["fan"]) == (1, 2, ["qiang_gang"], 2)
    assert g.melds(2) == [("pong", "5p")]  # the pong stays; no kong payment
    assert g.scores() == [0, 2, -2, 0]
    assert g.to_act() == 2  # next active after the robber (seat 1) is the konger
    assert g.discards(2)[-1] == ("5p", "robbed")


def test_kong_discard_win_transfers_the_kong_income():
    # 杠上炮 + 呼叫转移: seat 0's concealed kong earns 6; its next discard deals in
    g = game_with(
        ("1111m7m22m33p55p8p9p", "234m456m89m11p456p", "333m666m999m77p8p2p", SEAT3),
        "6p",
        tail="2m",
    )
    scripted(g, [*VOIDS, (0, "concealed_kong 1m")])
    assert g.scores() == [6, -2, -2, -2]
    scripted(g, [(0, "discard 7m"), (1, "hu")])
    win = g.wins()[0]
    assert (win["fan"], win["extras"], win["points"]) == (2, ["gang_shang_pao"], 2)
    assert g.scores() == [-2, 6, -2, -2]  # 2 points + the 6 of kong income
    assert int(g.state["kong_paid"][0].sum()) == 0  # not refunded again at 退税


@pytest.mark.parametrize(
    ("payer", "scores"),
    [("self_draw", [-6, -4, 14, -4]), ("discarder", [-6, 0, 6, 0])],
)
def test_kong_flower_after_a_direct_kong(payer, scores):
    g = game_with(
        ("11p22p33p44p66m77m8m", "11m23m56m9m78p9p6p2p3p", "555p123m456m78m99p", SEAT3),
        "5p",
        tail="9m",
        rules=RuleConfig(kong_flower_direct_pays=payer),
    )
    scripted(g, [*VOIDS, (0, "discard 5p")])
    assert set(g.legal()) == {"pong", "kong", "pass"}
    scripted(g, [(2, "kong")])
    assert g.scores() == [-2, 0, 2, 0]
    assert "hu" in g.legal()
    scripted(g, [(2, "hu")])
    win = g.wins()[0]
    assert (win["fan"], win["extras"], win["from"]) == (3, ["gang_shang_hua"], None)
    assert g.scores() == scores


def test_heavenly_win():
    hands = ("123m456m789m11p23p", "258m258m333p999p6p", "369m369m44p66p7p11p", SEAT3)
    g = game_with(hands, "4p")
    scripted(g, VOIDS)
    assert "hu" in g.legal()
    scripted(g, [(0, "hu")])
    win = g.wins()[0]
    assert (win["base"], win["fan"], win["tile"], win["from"]) == ("tianhu", 6, None, None)
    assert g.scores() == [96, -32, -32, -32]


def test_earthly_win():
    hands = ("66p77p88p99p55m66m7m", "123m456m789m11p45p", "111m222m333m444m5p", SEAT3)
    g = game_with(hands, "5p", draws="6p")
    scripted(g, [*VOIDS, (0, "discard 7m"), (1, "hu")])
    win = g.wins()[0]
    assert (win["base"], win["fan"], win["tile"]) == ("dihu", 6, "6p")
    assert g.scores() == [-32, 96, -32, -32]


def test_exhaustive_draw_settlement():
    # seat 0: flower pig (keeps a void 3m); seat 1: tenpai on 5p (all four with seat 3);
    # seat 2: a concealed kong, then noten (refunds it); seat 3: noten
    hands = (
        "23m9p7p456s789s4s6s8s",
        "123m456m789m46p11p",
        "8888p22p33p9p1m6p7p1p",
        "5555p111s222s333s",
    )
    used = [t for h in hands for t in ordered(h)] + ordered("1s") + ordered("4m")
    pool = [t for t in range(27) for _ in range(4 - used.count(t))]
    m_tiles = [t for t in pool if t < 9]
    other = [t for t in pool if t >= 9]
    draws = []
    for k in range(54):  # head draws 53..106; seat 0 draws every 4th from 56 on
        if k % 4 == 3 or k == 1:  # seat 0's draws, and seat 2's first (no void tile to shed)
            draws.append(m_tiles.pop())
        else:
            draws.append(other.pop() if other else m_tiles.pop())
    wall = build_wall(hands, "1s", "".join(tile_name(t) for t in draws), tail="4m")
    g = Game(wall=wall)
    scripted(g, [*voids("m", "s", "s", "m"), (0, "discard 2m")])
    scripted(g, [(1, f"discard {tile_name(int(g.state['drawn_tile']))}")])
    scripted(g, [(2, "concealed_kong 8p"), (2, "discard 1m")])
    assert g.scores() == [-2, -2, 6, -2]
    auto(g)
    res = g.result()
    assert res["end"] == "wall_empty" and res["wins"] == []
    assert res["settlement"]["flower_pigs"] == [0]
    assert res["settlement"]["tenpai"] == [1]
    assert res["scores"] == [-48, 18, 15, 15]


def test_last_four_forces_the_win_and_empty_wall_claims():
    forced = empty_wall_windows = 0
    for seed in range(400):
        g = Game(seed=seed)
        while not g.is_over() and g.wall_left() > 4:
            auto(g, until_over=False)
        # from here on, any possible win must be taken: "pass" never sits beside "hu"
        while not g.is_over():
            legal = g.legal()
            if "hu" in legal:
                assert legal == ["hu"]
                forced += 1
            if g.phase() == "claim" and g.wall_left() == 0:
                assert not {"pong", "kong"} & set(legal)  # on an empty wall only hu
                empty_wall_windows += 1
            auto(g, until_over=False)
        if forced >= 5 and empty_wall_windows >= 1:
            break
    assert forced >= 5 and empty_wall_windows >= 1, (forced, empty_wall_windows)


def test_end_on_first_win():
    hands = ("66p77p88p99p55m66m7m", "123m456m789m11p46p", "111m222m333m444m5p", SEAT3)
    g = game_with(hands, "5p", rules=RuleConfig(end_on_first_win=True))
    scripted(g, [*VOIDS, (0, "discard 5p"), (1, "hu"), (2, "hu")])
    assert g.is_over() and len(g.wins()) == 2  # one multi-win counts as one
    assert g.result()["end"] == "first_win"
    assert g.result()["next_dealer"] == 0  # several winners on one discard: the discarder


@pytest.mark.parametrize("offset", [1, 2, 3])
def test_exchange_three_offsets(offset):
    rules = RuleConfig(exchange_three=True)
    hands = (
        "123m456p789p11s23s",
        "111m222m333m44p55p",
        "777p888p999p1s2s3s4m",
        "456s789s55m66m77m4m",
    )
    wall = build_wall(hands, "9s")
    g = Game(rules, wall=wall, exchange_offset=offset)
    picks = {0: "exchange 1m2m3m", 1: "exchange 1m1m1m", 2: "exchange 7p8p9p", 3: "exchange 4s5s6s"}
    assert g.phase() == "exchange"
    for seat in range(4):
        assert picks[seat] in g.legal()
        scripted(g, [(seat, picks[seat])])
    assert g.phase() == "void"
    for seat in range(4):
        receiver = (seat + offset) % 4
        given = ordered(picks[seat].split()[1])
        for t in given:
            assert g.state["hands"][receiver, t] >= 1
    rec = g.record()
    assert rec["exchange_offset"] == offset
    assert [a[1] for a in rec["actions"]] == [picks[s] for s in range(4)]


def test_illegal_actions_leave_the_hand_unchanged():
    g = Game(seed=11)
    before = g.state.copy()
    for bad in ["discard 5p", "hu", "void x", "", 42, "exchange 1m1m"]:
        with pytest.raises(IllegalActionError) as err:
            g.step(bad)
        assert "legal:" in str(err.value)
    assert g.state.tobytes() == before.tobytes()
    assert isinstance(IllegalActionError("x"), ValueError)


def test_after_a_pong_only_discards_and_added_kong_payments():
    # seat 2 pongs 5p (then may only discard), later adds the fourth 5p; seat 1 declines
    # to rob (a 过胡 block), the kong completes: 1 from each other player, then a
    # replacement from the tail
    g = game_with(
        ("5p66p77p88p99p55m66m", "123m456m789m11p46p", "55p111m222m333m44m", SEAT3),
        "7m",
        draws="9s" + "8m" + "9m" + "5p",
        tail="9p",
    )
    scripted(g, [*VOIDS, (0, "discard 5p"), (1, "pass"), (2, "pong")])
    assert all(a.startswith("discard") for a in g.legal())
    scripted(g, [(2, "discard 1m"), (3, "discard 9s"), (0, "discard 8m"), (1, "discard 9m")])
    scripted(g, [(2, "added_kong 5p"), (1, "pass")])
    assert g.melds(2) == [("kong", "5p")]
    assert g.scores() == [-1, -1, 3, -1]
    assert g.to_act() == 2 and int(g.state["drawn_tile"]) == ordered("9p")[0]
    assert int(g.state["passed_fan"][1]) == 2  # declined 1 + qiang_gang


def test_void_tiles_must_go_first():
    hands = (
        "23m456p789p11p22p3p",
        "44m55m66m77m88m99m1m",
        "111s222s333s555s6s",
        "777s888s999s444s6s",
    )
    g = game_with(hands, "1s")
    scripted(g, voids("m", "s", "m", "m"))
    assert sorted(a for a in g.legal() if a.startswith("discard")) == ["discard 2m", "discard 3m"]


def test_refunds_reach_players_who_have_won():
    # 10.1.8: seat 2's kong income goes back to all three payers at 退税, seat 1 included
    hands = ("147m369m2p5p3p1p4p7p9p", "123m456m789m45p11p", "8888p22p33p9p1m6p7p1p", SEAT3)
    g = game_with(hands, "2m", draws="3s5m6p", tail="4m")
    scripted(g, [*VOIDS, (0, "discard 2m"), (1, "discard 3s"), (2, "concealed_kong 8p")])
    scripted(g, [(2, "discard 1m"), (3, "discard 6p"), (1, "hu")])
    assert g.scores() == [-2, -1, 6, -3]
    auto(g)
    res = g.result()
    assert res["end"] == "wall_empty" and res["settlement"]["tenpai"] == []
    assert res["scores"] == [0, 1, 0, -1]


def test_a_kong_first_makes_a_later_win_kong_flower_not_heavenly():
    hands = ("1111m234m567p99p2p", "456m789m56p78p88p9m", "22m33m55m66m77m8m9p1p", SEAT3)
    g = game_with(hands, "3p", tail="4p")
    scripted(g, [*VOIDS, (0, "concealed_kong 1m"), (0, "hu")])
    win = g.wins()[0]
    assert (win["base"], win["fan"], win["extras"]) == ("pinghu", 3, ["gang_shang_hua"])
    assert g.scores() == [18, -6, -6, -6]


def test_self_draw_base_bonus():
    rules = RuleConfig(self_draw_bonus="base")
    g = game_with(
        ("11p22p33p44p66m77m8m", "11m23m56m9m78p9p6p2p3p", "555p123m456m78m99p", SEAT3),
        "5p",
        tail="9m",
        rules=rules,
    )
    scripted(g, [*VOIDS, (0, "discard 5p"), (2, "kong"), (2, "hu")])
    assert g.scores() == [-7, -5, 17, -5]  # 4 points + 1 base from each payer
    assert g.wins()[0]["points"] == 4  # the bonus shows in scores, not in the win's points


def test_haidi_exactly_on_the_last_tile():
    import numpy as np

    from sichuan_env.engine import selfplay
    from sichuan_env.engine.actions import ACTION_SPACE
    from sichuan_env.kernels.tables import get_tables
    from sichuan_env.rules.config import kernel_rules

    rules = RuleConfig(haidi=True, jingou=True, self_draw_bonus="fan")
    dist = get_tables()["DIST"]
    seen = {"haidi": 0, "other": 0, "zimo": 0, "discard": 0}
    for seed in range(40):
        g = Game(rules, seed=seed)
        mask = np.zeros(ACTION_SPACE, dtype=np.int8)
        rng = np.uint64(seed)
        while not g.is_over():
            mask[:] = 0
            legal = g.legal_ids()
            mask[legal] = 1
            a, rng = selfplay.choose(
                g.state, mask, len(legal), rng, selfplay.GREEDY, kernel_rules(rules), dist
            )
            rng = np.uint64(rng)
            wall_left = g.wall_left()
            n_wins = len(g.wins())
            g.step_id(int(a))
            for w in g.wins()[n_wins:]:
                assert ("haidi" in w["extras"]) == (wall_left == 0)
                assert ("zimo" in w["extras"]) == (w["from"] is None)
                seen["haidi" if wall_left == 0 else "other"] += 1
                seen["zimo" if w["from"] is None else "discard"] += 1
    assert min(seen.values()) >= 1, seen  # every branch of both assertions was exercised


def test_views_hide_what_a_seat_cannot_see():
    g = game_with(("66p77p88p99p55m66m7m", "123m456m789m11p46p", "111m222m333m444m5p", SEAT3), "5p")
    scripted(g, [(0, "void s"), (1, "void s")])
    v = g.view(0)
    assert v["voids"] == ["s", None, None, None]  # hidden until all four have declared
    assert v["hand"] == g.hand(0) and "hands" not in v
    scripted(g, [(2, "void s"), (3, "void m")])
    assert g.view(0)["voids"] == ["s", "s", "s", "m"]
    scripted(g, [(0, "discard 5p"), (1, "hu"), (2, "pass")])
    assert g.view(1)["hand"] is None  # a winner's hand is frozen and hidden
    assert g.table()["hands"][1] == g.hand(1)
    assert g.view(3)["wins"] == [{"seat": 1, "tile": "5p", "from": 0}]
