"""Fan scoring tables (docs/rules.md §5, §6, §7.3, §12): one row per rule; the inputs it rejects.

``score_win`` hand by hand; the comparisons with the slow reference, the batched
scorer and suit symmetry are ``test_scoring_reference.py``.
"""

import numpy as np
import pytest

from sichuan_env import RuleConfig, best_wait_score, parse, score_win, tile_index
from sichuan_env.kernels import layout as L

# docs/rules.md §12, every row: (concealed, melds, context, fan, base)
SECTION_12 = [
    ("123m345m222p999p66p", [], {}, 1, "pinghu"),
    ("111m444m222p999p66p", [], {}, 2, "duidui"),
    ("123s567s234s888s99s", [], {}, 3, "qingyise"),
    ("123m789m123s789s99s", [], {}, 3, "yaojiu"),
    ("111222333m78999p", [], {}, 3, "yaojiu"),
    ("11m22m99m44p66p88p99p", [], {}, 3, "qidui"),
    ("1111m99m44p66p88p99p", [], {}, 5, "long_qidui"),
    ("1111m9999m44p66p88p", [], {}, 6, "long_qidui"),
    ("11223344556677m", [], {}, 5, "qing_qidui"),
    ("11224444557799m", [], {}, 6, "qing_long_qidui"),
    ("111m444m555m999m66m", [], {}, 4, "qing_duidui"),
    ("555s888s55m", [("pong", "2s"), ("pong", "2m")], {}, 4, "jiang_duidui"),
    ("11123777888999p", [], {}, 5, "qing_yaojiu"),
    ("123m345m999p66p", [("kong", "2p")], {"self_draw": True, "after_kong": True}, 3, "pinghu"),
    ("12345678999m", [("pong", "9p")], {"robbing_kong": True}, 2, "pinghu"),
    ("12345m5559m999p66p", [], {}, None, None),
    ("123m345m222p999p66s", [], {}, None, None),
]


@pytest.mark.parametrize(("concealed", "melds", "ctx", "fan", "base"), SECTION_12)
def test_section_12(concealed, melds, ctx, fan, base):
    result = score_win(concealed, melds, **ctx)
    if fan is None:
        assert result is None
    else:
        assert (result.fan, result.base) == (fan, base)
        assert result.points == 2 ** (fan - 1)


def test_section_12_details():
    r = score_win("1111m99m44p66p88p99p")
    assert r.roots == 0  # the quad of 龙七对 is not a root
    r = score_win("1111m9999m44p66p88p")
    assert r.roots == 1
    r = score_win("123m345m999p66p", [("kong", "2p")], self_draw=True, after_kong=True)
    assert r.roots == 1 and r.extras == ("gang_shang_hua",)
    r = score_win("12345678999m", [("pong", "9p")], robbing_kong=True)
    assert r.extras == ("qiang_gang",) and r.roots == 0


# One table per pattern: (concealed, melds, base, fan) under default rules
PATTERNS = [
    # pinghu
    ("234m567m345p678p99p", [], "pinghu", 1),
    ("234m456m99p", [("pong", "3p"), ("kong", "7m")], "pinghu", 2),  # kong is a root
    # duidui
    ("222m666m44p", [("pong", "9p"), ("concealed_kong", "3p")], "duidui", 3),
    ("33m", [("pong", "1m"), ("pong", "5m"), ("pong", "7p"), ("pong", "9p")], "duidui", 2),
    # qingyise
    ("123345789p22p", [("pong", "6p")], "qingyise", 3),
    ("11123455678999m", [], "qingyise", 3),  # no duidui/yaojiu/qidui reading
    # yaojiu
    ("123m123p99p", [("pong", "1p"), ("kong", "9m")], "yaojiu", 5),  # two roots
    ("123789m123789p11p", [], "yaojiu", 3),
    # qidui
    ("1155m2288p3399p77p", [], "qidui", 3),
    # qing_duidui
    ("22244466688899s", [], "qing_duidui", 4),
    # jiang_duidui
    ("222m555m888p22p", [("pong", "5p")], "jiang_duidui", 4),
    ("22m", [("pong", "5m"), ("kong", "8m"), ("pong", "2p"), ("pong", "8p")], "jiang_duidui", 5),
    # long_qidui and qing_long_qidui
    ("2222m5577m11p33p99p", [], "long_qidui", 5),
    ("22225555m7711p33p", [], "long_qidui", 6),
    ("11113333557799s", [], "qing_long_qidui", 7),
    # qing_qidui
    ("11335577992244p", [], "qing_qidui", 5),
    # qing_yaojiu
    ("123s123s789s11s", [("pong", "9s")], "qing_yaojiu", 7),  # roots 1s, 9s
]


@pytest.mark.parametrize(("concealed", "melds", "base", "fan"), PATTERNS)
def test_patterns(concealed, melds, base, fan):
    r = score_win(concealed, melds)
    assert (r.base, r.fan) == (base, fan)


def test_every_reading_is_scored():
    # 1111m2222m3333m55m reads as qing long qidui (6 + 3 roots - 1) over qingyise (3 + 3)
    r = score_win("11112222333355m")
    assert (r.base, r.fan, r.roots) == ("qing_long_qidui", 8, 2)
    # 111222333m + 789p + 99p: yaojiu (123m x3) beats pinghu; duidui impossible (78 9)
    assert score_win("111222333m78999p").base == "yaojiu"
    # 111222333m 99m 777p: triplet reading duidui (2) vs 123x3 pinghu: duidui wins
    assert score_win("111222333m99m777p").base == "duidui"


def test_heavenly_and_earthly():
    r = score_win("123m345m222p999p66p", heavenly=True)
    assert (r.base, r.fan) == ("tianhu", 6)
    r = score_win("123m345m222p999p66p", earthly=True, rules=RuleConfig(self_draw_bonus="fan"))
    assert (r.base, r.fan, r.extras) == ("dihu", 7, ("zimo",))
    # a hand worth more than 6 keeps its own pattern (roots are not reduced for tianhu)
    r = score_win("11224444557799m", heavenly=True)
    assert (r.base, r.fan, r.roots) == ("tianhu", 7, 1)
    assert score_win("123m345m222p999p66s", heavenly=True) is None


EXTRAS = [
    ({"self_draw": True, "after_kong": True}, RuleConfig(), ("gang_shang_hua",)),
    ({"kong_discard": True}, RuleConfig(), ("gang_shang_pao",)),
    ({"robbing_kong": True}, RuleConfig(), ("qiang_gang",)),
    ({"last_tile": True}, RuleConfig(), ()),
    ({"last_tile": True}, RuleConfig(haidi=True), ("haidi",)),
    ({"self_draw": True, "last_tile": True}, RuleConfig(haidi=True), ("haidi",)),
    ({"self_draw": True}, RuleConfig(), ()),
    ({"self_draw": True}, RuleConfig(self_draw_bonus="base"), ()),
    ({"self_draw": True}, RuleConfig(self_draw_bonus="fan"), ("zimo",)),
    (
        {"self_draw": True, "after_kong": True, "last_tile": True},
        RuleConfig(haidi=True, self_draw_bonus="fan"),
        ("gang_shang_hua", "haidi", "zimo"),
    ),
]


@pytest.mark.parametrize(("ctx", "rules", "extras"), EXTRAS)
def test_extras(ctx, rules, extras):
    melds = [("kong", "2p")]
    r = score_win("123m345m999p66p", melds, rules=rules, **ctx)
    assert r.extras == extras
    assert r.fan == 1 + 1 + len(extras)  # pinghu + the kong's root + extras


def test_jingou():
    melds = [("pong", "1m"), ("pong", "5m"), ("concealed_kong", "7p"), ("pong", "9p")]
    assert score_win("33m", melds).extras == ()
    r = score_win("33m", melds, rules=RuleConfig(jingou=True))
    assert r.extras == ("jingou",)
    assert r.fan == 2 + 1 + 1  # duidui + root (7p kong) + jingou


def test_fan_cap_and_points():
    rules = RuleConfig(fan_cap=4, base_points=2)
    r = score_win("11224444557799m", rules=rules)
    assert (r.fan, r.points) == (4, 2 * 2**3)
    assert score_win("123m345m222p999p66p", rules=rules).points == 2


def test_void_and_two_suit_rules():
    assert score_win("123m345m222p999p66p", void="s") is not None
    assert score_win("123m345m222p999p66p", void="m") is None
    # three suits counting the melds
    assert score_win("123m345m999p66p", [("pong", "1s")]) is None
    # a meld of the void suit
    assert score_win("123m345m999m66m", [("pong", "1s")]) is not None
    assert score_win("123m345m999m66m", [("pong", "1s")], void="s") is None


def test_best_wait_score():
    tile, r = best_wait_score("1111m9999m44p66p8p")
    assert tile == tile_index("8p") and (r.base, r.fan) == ("long_qidui", 6)
    # 23m waits on 1m (pinghu) and 4m (pinghu); 55p pair
    tile, r = best_wait_score("23m456m789m555p66p")
    assert r.fan >= 1 and tile in (tile_index("1m"), tile_index("4m"))
    # the higher wait wins: 1112345678999m waits everywhere in m, all qingyise
    tile, r = best_wait_score("1112345678999m")
    assert r.base in ("qingyise", "qing_yaojiu")
    assert best_wait_score("123m456m789m1p2s3s5s") is None
    # no extra fan, even with jingou and self-draw fan on
    tile, r = best_wait_score(
        "3m",
        [("pong", "1m"), ("pong", "5m"), ("pong", "7m"), ("pong", "9m")],
        rules=RuleConfig(jingou=True, self_draw_bonus="fan"),
    )
    assert r.extras == () and r.base == "qing_duidui"
    # void: holding the void suit is never tenpai
    assert best_wait_score("123m345m222p999p6p", void="p") is None
    # a wait held four times across hand and melds does not count
    assert best_wait_score("123m456m789m5p", [("pong", "5p")]) is None
    assert best_wait_score("123m456m789m5p", [("pong", "6p")]) is not None


# One hand per base pattern (docs/rules.md §6.1): every pattern the kernel knows is reachable.
EVERY_BASE = {
    "pinghu": ("123m345m222p999p66p", [], {}),
    "duidui": ("111m444m222p999p66p", [], {}),
    "qingyise": ("123s567s234s888s99s", [], {}),
    "yaojiu": ("123m789m123s789s99s", [], {}),
    "qidui": ("11m22m99m44p66p88p99p", [], {}),
    "qing_duidui": ("111m444m555m999m66m", [], {}),
    "jiang_duidui": ("555s888s55m", [("pong", "2s"), ("pong", "2m")], {}),
    "long_qidui": ("1111m99m44p66p88p99p", [], {}),
    "qing_qidui": ("11223344556677m", [], {}),
    "qing_yaojiu": ("11123777888999p", [], {}),
    "qing_long_qidui": ("11224444557799m", [], {}),
    "tianhu": ("123m345m222p999p66p", [], {"heavenly": True}),
    "dihu": ("123m345m222p999p66p", [], {"earthly": True}),
}


def test_pattern_tables_agree():
    assert len(L.BASE_NAMES) == len(L.BASE_FAN) == L.NUM_BASES
    assert len(set(L.BASE_NAMES)) == L.NUM_BASES
    assert len(L.EXTRA_NAMES) == L.NUM_EXTRAS and len(set(L.EXTRA_NAMES)) == L.NUM_EXTRAS
    assert [L.PINGHU, L.DIHU] == [0, L.NUM_BASES - 1]
    assert L.X_ZIMO == 1 << (L.NUM_EXTRAS - 1)


@pytest.mark.parametrize("base", L.BASE_NAMES)
def test_every_base_pattern_is_reachable(base):
    assert set(EVERY_BASE) == set(L.BASE_NAMES)
    concealed, melds, ctx = EVERY_BASE[base]
    r = score_win(concealed, melds, **ctx)
    assert r.base == base
    assert r.fan >= L.BASE_FAN[L.BASE_NAMES.index(base)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"heavenly": True, "earthly": True}, "both heavenly"),
        ({"after_kong": True}, "self_draw=True"),
        ({"self_draw": True, "robbing_kong": True}, "another player's tile"),
        ({"kong_discard": True, "robbing_kong": True}, "both"),
        ({"heavenly": True, "after_kong": True}, "杠上花"),
        ({"void": "x"}, "suit"),
        ({"rules": {"fan_cap": 3}}, "RuleConfig"),
    ],
)
def test_contradictory_context_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        score_win("123m345m222p999p66p", **kwargs)


@pytest.mark.parametrize(
    ("concealed", "melds", "message"),
    [
        ("123m345m222p999p6p", [], "must hold 14 tiles"),
        ("123m345m222p66p", [("pong", "9p"), ("pong", "1m")], "must hold 8 tiles"),
        ("123m345m999p66p", [("kong", "9p")], "more than 4 copies of 9p"),
        ("123m345m999p66p", [("chow", "1m")], "kind must be one of"),
        ("123m345m999p66p", [("pong", "0m")], "not one tile"),
        ("123m345m999p66p", "pong 1m", "melds must be a list .* not str"),
        ("123m345m999p66p", [("pong",)], r"\(kind, tile\) pair"),
        ("66p", [("pong", "1m")] * 5, "at most 4 melds"),
        ("123m345m222p999p66p", [("pong", "1m")], "must hold 11 tiles"),
    ],
)
def test_bad_hands_raise(concealed, melds, message):
    with pytest.raises(ValueError, match=message):
        score_win(concealed, melds)


def test_heavenly_needs_no_melds():
    with pytest.raises(ValueError, match="no melds"):
        score_win("123m345m222p66p", [("pong", "9p")], heavenly=True)


def test_score_accepts_arrays_and_indices():
    by_name = score_win("12334m5m99p666p", [("pong", "2p")])
    assert by_name is not None and by_name.base == "pinghu"
    counts = parse("12334m5m99p666p").astype(np.int64)
    assert score_win(counts, [("pong", tile_index("2p"))]) == by_name
    assert score_win(counts.tolist(), [["pong", np.int8(10)]]) == by_name


def test_best_wait_score_is_a_named_result_that_still_unpacks():
    from sichuan_env import BestWait

    best = best_wait_score("1111m9999m44p66p8p")
    assert isinstance(best, BestWait) and best.tile == tile_index("8p")
    assert best.score.base == "long_qidui" and best.score.fan == 6
    tile, score = best  # tuple unpacking keeps working
    assert (tile, score) == (best.tile, best.score)
    assert "(8p)" in repr(best)  # the tile index reads as a tile, not as points
