"""Integer layouts shared by kernels and their facades: rule slots, melds, win contexts.

Kernels never see Python objects; ``RuleConfig.as_array()`` packs a ruleset
into ``int64[NUM_RULE_SLOTS]`` in the slot order below.
"""

from __future__ import annotations

# Rule slots: the packed ruleset (docs/rules.md §9) is one int64 per ``RuleConfig`` field, in
# this order. ``RuleConfig`` packs and validates from its own fields and checks at import
# that they are exactly these names; a kernel reads a slot through its ``R_*`` constant.
RULE_FIELDS = (
    "declare_void",
    "exchange_three",
    "end_on_first_win",
    "fan_cap",  # 0 = no cap
    "base_points",
    "self_draw_bonus",  # BONUS_*
    "kong_flower_direct_pays",  # KFD_*
    "pass_win_rule",
    "must_win_last_four",
    "haidi",
    "jingou",
    "direct_kong_pays",
    "added_kong_pays",
    "concealed_kong_pays",
    "flower_pig_pays",
)
NUM_RULE_SLOTS = len(RULE_FIELDS)
R_DECLARE_VOID = RULE_FIELDS.index("declare_void")
R_EXCHANGE_THREE = RULE_FIELDS.index("exchange_three")
R_END_ON_FIRST_WIN = RULE_FIELDS.index("end_on_first_win")
R_FAN_CAP = RULE_FIELDS.index("fan_cap")
R_BASE_POINTS = RULE_FIELDS.index("base_points")
R_SELF_DRAW_BONUS = RULE_FIELDS.index("self_draw_bonus")
R_KONG_FLOWER_DIRECT_PAYS = RULE_FIELDS.index("kong_flower_direct_pays")
R_PASS_WIN_RULE = RULE_FIELDS.index("pass_win_rule")
R_MUST_WIN_LAST_FOUR = RULE_FIELDS.index("must_win_last_four")
R_HAIDI = RULE_FIELDS.index("haidi")
R_JINGOU = RULE_FIELDS.index("jingou")
R_DIRECT_KONG_PAYS = RULE_FIELDS.index("direct_kong_pays")
R_ADDED_KONG_PAYS = RULE_FIELDS.index("added_kong_pays")
R_CONCEALED_KONG_PAYS = RULE_FIELDS.index("concealed_kong_pays")
R_FLOWER_PIG_PAYS = RULE_FIELDS.index("flower_pig_pays")

BONUS_NONE, BONUS_BASE, BONUS_FAN = 0, 1, 2
KFD_SELF_DRAW, KFD_DISCARDER = 0, 1

# Status codes of the validating kernels (``checked.py``, ``fan.score_code``): negative,
# so they never collide with a result; -1 stays free for "not a win".
BAD_COUNT = -2  # a count above 4 (or more than 4 copies with the melds)
BAD_SIZE = -3  # a length other than 27, or a tile count the function does not accept
BAD_MELD = -4  # an unknown meld kind or a meld tile outside 0..26

# Meld kinds (a meld is a row (kind, tile)); 0 marks an empty row.
MELD_NONE = 0
MELD_PONG = 1
MELD_KONG = 2  # exposed: a direct kong of a discard, or an added kong on a pong
MELD_CONCEALED_KONG = 3

# Win context bits.
CTX_SELF_DRAW = 1
CTX_AFTER_KONG = 2  # the winning tile is a kong replacement (杠上花 with self-draw)
CTX_KONG_DISCARD = 4  # the discard was made right after a kong replacement (杠上炮)
CTX_ROBBING_KONG = 8  # 抢杠胡
CTX_HEAVENLY = 16  # 天胡
CTX_EARTHLY = 32  # 地胡
CTX_LAST_TILE = 64  # 海底: self-draw of the last tile, or a win on the discard after it
CTX_NO_EXTRAS = 128  # score without any extra fan (查大叫)

# Base patterns (docs/rules.md §6.1, §10 identifiers) and their fan.
BASE_NAMES = (
    "pinghu",
    "duidui",
    "qingyise",
    "yaojiu",
    "qidui",
    "qing_duidui",
    "jiang_duidui",
    "long_qidui",
    "qing_qidui",
    "qing_yaojiu",
    "qing_long_qidui",
    "tianhu",
    "dihu",
)
BASE_FAN = (1, 2, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6)
(
    PINGHU,
    DUIDUI,
    QINGYISE,
    YAOJIU,
    QIDUI,
    QING_DUIDUI,
    JIANG_DUIDUI,
    LONG_QIDUI,
    QING_QIDUI,
    QING_YAOJIU,
    QING_LONG_QIDUI,
    TIANHU,
    DIHU,
) = range(len(BASE_NAMES))

# Extra fan bits (docs/rules.md §6.3), in identifier order.
EXTRA_NAMES = ("gang_shang_hua", "gang_shang_pao", "qiang_gang", "haidi", "jingou", "zimo")
X_GANG_SHANG_HUA, X_GANG_SHANG_PAO, X_QIANG_GANG, X_HAIDI, X_JINGOU, X_ZIMO = (
    1 << i for i in range(len(EXTRA_NAMES))
)
NUM_BASES = len(BASE_NAMES)
"""Number of base patterns: the fan kernel tries each (``BASE_FAN`` has one fan per name)."""
NUM_EXTRAS = len(EXTRA_NAMES)
"""Number of extra-fan bits (bit ``i`` = ``EXTRA_NAMES[i]``)."""
