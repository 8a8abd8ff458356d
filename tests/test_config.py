import dataclasses
import inspect
import json
import typing
from pathlib import Path

import numpy as np
import pytest

from sichuan_env import PRESETS, RuleConfig
from sichuan_env.kernels import layout as L
from sichuan_env.rules.config import MAX_BASE_POINTS, MAX_FAN, MAX_PAYS, payment_bound

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


# --- one source per fact: every field declared once, the rest derived -------------------

RULES_MD = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
FIELDS = [f.name for f in dataclasses.fields(RuleConfig) if f.init]


def test_fields_are_the_kernel_slots_in_order():
    assert tuple(FIELDS) == L.RULE_FIELDS
    assert L.NUM_RULE_SLOTS == len(FIELDS)
    for name in FIELDS:
        assert getattr(L, "R_" + name.upper()) == FIELDS.index(name)


def test_every_field_is_documented_in_section_9_and_in_its_docstring():
    text = RULES_MD.read_text(encoding="utf-8")
    section = text[text.index("## 9.") : text.index("## 10.")]
    source = inspect.getsource(RuleConfig)
    for name in FIELDS:
        assert f"`{name}`" in section, name
        after = source[source.index(f"    {name}:") :].splitlines()[1]
        assert after.strip().startswith('"""'), f"{name} has no docstring"


@pytest.mark.parametrize("name", FIELDS)
def test_every_field_is_validated(name):
    for bad in ("nonsense", 2.5, [1], object()):
        with pytest.raises(ValueError, match=f"RuleConfig.{name}"):
            RuleConfig(**{name: bad})


@pytest.mark.parametrize("name", FIELDS)
def test_every_field_is_packed(name):
    """Changing any field from its default changes its own slot, and only that slot."""
    default = RuleConfig()
    value = getattr(default, name)
    if isinstance(value, bool):
        other = not value
    elif isinstance(value, str):
        other = next(c for c in typing.get_args(_hint(name)) if c != value)
    else:
        other = 4 if value == 3 else 3
    changed = default.replace(**{name: other})
    diff = np.flatnonzero(changed.as_array() != default.as_array())
    assert diff.tolist() == [FIELDS.index(name)]


def _hint(name):
    return typing.get_type_hints(RuleConfig)[name]


def test_literal_codes_match_the_kernel_constants():
    assert [
        RuleConfig(self_draw_bonus=v).as_array()[L.R_SELF_DRAW_BONUS]
        for v in ("none", "base", "fan")
    ] == [L.BONUS_NONE, L.BONUS_BASE, L.BONUS_FAN]
    assert [
        RuleConfig(kong_flower_direct_pays=v).as_array()[L.R_KONG_FLOWER_DIRECT_PAYS]
        for v in ("self_draw", "discarder")
    ] == [L.KFD_SELF_DRAW, L.KFD_DISCARDER]


def test_numpy_values_are_normalised_and_serialisable():
    rules = RuleConfig(
        exchange_three=np.bool_(True),
        base_points=np.int64(4),
        fan_cap=np.int32(5),
        flower_pig_pays=np.uint8(8),
    )
    d = rules.to_dict()
    assert type(d["exchange_three"]) is bool and type(d["base_points"]) is int
    assert type(d["fan_cap"]) is int and type(d["flower_pig_pays"]) is int
    assert RuleConfig.from_dict(json.loads(json.dumps(d))) == rules
    assert rules == RuleConfig(exchange_three=True, base_points=4, fan_cap=5, flower_pig_pays=8)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("base_points", MAX_BASE_POINTS + 1),
        ("base_points", 2**62),
        ("direct_kong_pays", MAX_PAYS + 1),
        ("flower_pig_pays", 2**63),
        ("fan_cap", 65),
        ("fan_cap", -(2**70)),
    ],
)
def test_values_that_could_overflow_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        RuleConfig(**{field: value})


def test_payment_bound_leaves_int64_headroom():
    assert MAX_FAN == max(L.BASE_FAN) + 4 + len(L.EXTRA_NAMES)
    assert payment_bound() < 2**50
    assert payment_bound(1, 2) < payment_bound()
    RuleConfig(base_points=MAX_BASE_POINTS, direct_kong_pays=MAX_PAYS, fan_cap=64)


def test_from_dict_rejects_non_dicts():
    for bad in (None, [], "rules", 5):
        with pytest.raises(TypeError, match="rules must be a dict"):
            RuleConfig.from_dict(bad)
    with pytest.raises(ValueError, match="unknown preset"):
        RuleConfig.preset(["xuezhan"])
