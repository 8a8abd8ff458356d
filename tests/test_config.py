import json

import numpy as np
import pytest

from sichuan_env import PRESETS, RuleConfig
from sichuan_env.kernels import layout as L

SECTION_9_DEFAULTS = {
    "declare_void": True,
    "exchange_three": False,
    "end_on_first_win": False,
    "fan_cap": None,
    "base_points": 1,
    "self_draw_bonus": "none",
    "kong_flower_direct_pays": "self_draw",
    "pass_win_rule": True,
    "must_win_last_four": True,
    "haidi": False,
    "jingou": False,
    "direct_kong_pays": 2,
    "added_kong_pays": 1,
    "concealed_kong_pays": 2,
    "flower_pig_pays": 16,
}


def test_every_field_and_default_of_section_9():
    assert RuleConfig().to_dict() == SECTION_9_DEFAULTS


def test_round_trip_through_a_record():
    rules = RuleConfig(fan_cap=4, self_draw_bonus="fan", exchange_three=True)
    record_rules = json.loads(json.dumps(rules.to_dict()))
    assert RuleConfig(**record_rules) == rules
    assert RuleConfig.from_dict(record_rules) == rules


def test_frozen_and_hashable():
    rules = RuleConfig()
    with pytest.raises(AttributeError):
        rules.fan_cap = 3  # type: ignore[misc]
    assert hash(rules) == hash(RuleConfig())
    assert rules.replace(fan_cap=3).fan_cap == 3


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("declare_void", 1),
        ("declare_void", "yes"),
        ("fan_cap", 0),
        ("fan_cap", 2.5),
        ("fan_cap", True),
        ("base_points", 0),
        ("base_points", "1"),
        ("self_draw_bonus", "double"),
        ("kong_flower_direct_pays", "konger"),
        ("direct_kong_pays", -1),
        ("flower_pig_pays", None),
    ],
)
def test_bad_values_raise(field, value):
    with pytest.raises(ValueError, match=field):
        RuleConfig(**{field: value})


def test_unknown_fields():
    with pytest.raises(ValueError, match="unknown RuleConfig fields"):
        RuleConfig.from_dict({"fan_limit": 3})
    with pytest.raises(TypeError):
        RuleConfig(fan_limit=3)  # type: ignore[call-arg]


def test_presets():
    assert PRESETS["xuezhan"] == RuleConfig()
    assert RuleConfig.preset("xuezhan_exchange").exchange_three
    assert RuleConfig.preset("first_win").end_on_first_win
    with pytest.raises(ValueError, match="unknown preset"):
        RuleConfig.preset("riichi")


def test_packed_array():
    rules = RuleConfig(
        fan_cap=5,
        self_draw_bonus="base",
        kong_flower_direct_pays="discarder",
        base_points=3,
        jingou=True,
    )
    arr = rules.as_array()
    assert arr.dtype == np.int64 and arr.shape == (L.NUM_RULE_SLOTS,)
    assert arr[L.R_FAN_CAP] == 5
    assert arr[L.R_SELF_DRAW_BONUS] == L.BONUS_BASE
    assert arr[L.R_KONG_FLOWER_DIRECT_PAYS] == L.KFD_DISCARDER
    assert arr[L.R_BASE_POINTS] == 3
    assert arr[L.R_JINGOU] == 1 and arr[L.R_HAIDI] == 0
    assert RuleConfig().as_array()[L.R_FAN_CAP] == 0
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0] = 5
