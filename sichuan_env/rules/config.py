"""``RuleConfig``: one 血战到底 ruleset, the only home of rule variants.

Field names and defaults are those of RULES.md §9. A config is frozen and
validated on construction; ``as_array()`` packs it into the small integer
array that kernels read (slot order in ``kernels/layout.py``), and
``to_dict()`` / ``RuleConfig(**d)`` round-trip it through a game record.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

import numpy as np

from ..kernels import layout as L

SelfDrawBonus = Literal["none", "base", "fan"]
KongFlowerPayer = Literal["self_draw", "discarder"]

_BONUS = {"none": L.BONUS_NONE, "base": L.BONUS_BASE, "fan": L.BONUS_FAN}
_KFD = {"self_draw": L.KFD_SELF_DRAW, "discarder": L.KFD_DISCARDER}


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleConfig:
    """One 血战到底 ruleset (RULES.md §9); every field has the documented default."""

    declare_void: bool = True
    """定缺: each seat declares a void suit before play and must discard it first."""
    exchange_three: bool = False
    """换三张: before play each seat passes three tiles of one suit (direction by chance)."""
    end_on_first_win: bool = False
    """非血战: the hand ends at the first win (one multi-win on a discard counts as one)."""
    fan_cap: int | None = None
    """封顶: the most fan one win counts; None = no cap."""
    base_points: int = 1
    """Points of a 1-fan win; a win pays ``base_points * 2 ** (fan - 1)``."""
    self_draw_bonus: SelfDrawBonus = "none"
    """Self-draw extra: "none", "base" (自摸加底: each payer adds base_points) or "fan" (自摸加番)."""
    kong_flower_direct_pays: KongFlowerPayer = "self_draw"
    """杠上花 after a direct kong: paid as a self-draw, or by the discarder who gave the kong tile."""
    pass_win_rule: bool = True
    """过胡: a declined win blocks wins on others' tiles until one's next draw (unless more fan)."""
    must_win_last_four: bool = True
    """最后四张必须胡: with 4 or fewer tiles in the wall, a possible win must be taken."""
    haidi: bool = False
    """海底捞月/海底炮: +1 fan for winning on the last tile or the discard after it."""
    jingou: bool = False
    """金钩钓: +1 fan for a win with four melds (the concealed part is just the pair)."""
    direct_kong_pays: int = 2
    """直杠: the discarder pays the konger this many times base_points."""
    added_kong_pays: int = 1
    """加杠: each other player who has not won pays this many times base_points."""
    concealed_kong_pays: int = 2
    """暗杠: each other player who has not won pays this many times base_points."""
    flower_pig_pays: int = 16
    """查花猪: a flower pig pays each other active non-pig this many times base_points."""
    _packed: np.ndarray = field(init=False, repr=False, compare=False)
    _packed_view: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in (
            "declare_void",
            "exchange_three",
            "end_on_first_win",
            "pass_win_rule",
            "must_win_last_four",
            "haidi",
            "jingou",
        ):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"RuleConfig.{name} must be True or False, got {value!r}")
        cap = self.fan_cap
        if cap is not None and (not _is_int(cap) or cap < 1):
            raise ValueError(f"RuleConfig.fan_cap must be None or an integer >= 1, got {cap!r}")
        if not _is_int(self.base_points) or self.base_points < 1:
            raise ValueError(
                f"RuleConfig.base_points must be an integer >= 1, got {self.base_points!r}"
            )
        for name in (
            "direct_kong_pays",
            "added_kong_pays",
            "concealed_kong_pays",
            "flower_pig_pays",
        ):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(f"RuleConfig.{name} must be an integer >= 0, got {value!r}")
        if self.self_draw_bonus not in _BONUS:
            raise ValueError(
                f"RuleConfig.self_draw_bonus must be one of {sorted(_BONUS)}, got {self.self_draw_bonus!r}"
            )
        if self.kong_flower_direct_pays not in _KFD:
            raise ValueError(
                "RuleConfig.kong_flower_direct_pays must be one of "
                f"{sorted(_KFD)}, got {self.kong_flower_direct_pays!r}"
            )
        packed = _pack(self)
        view = packed.view()
        view.flags.writeable = False
        object.__setattr__(self, "_packed", packed)  # handed to kernels only
        object.__setattr__(self, "_packed_view", view)

    def as_array(self) -> np.ndarray:
        """The ruleset packed for kernels: ``int64[NUM_RULE_SLOTS]`` (a read-only view)."""
        return self._packed_view

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, JSON-serialisable (the ``rules`` object of a game record)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleConfig:
        """Build from a record's ``rules`` object; missing fields take their defaults.

        Raises:
            ValueError: for unknown field names or invalid values.
        """
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown RuleConfig fields {unknown}; known: {sorted(known)}")
        return cls(**data)

    def replace(self, **changes: Any) -> RuleConfig:
        """A copy with some fields changed (validated)."""
        return replace(self, **changes)

    @staticmethod
    def preset(name: str) -> RuleConfig:
        """A named preset from ``PRESETS``.

        Raises:
            ValueError: for an unknown name.
        """
        try:
            return PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown preset {name!r}; presets: {sorted(PRESETS)}") from None


def kernel_rules(config: RuleConfig) -> np.ndarray:
    """The packed array for kernel calls (writable, so numba's fast dispatch applies).

    Facades only: kernels never write to it, and users get ``as_array()``'s view.
    """
    return config._packed


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _pack(config: RuleConfig) -> np.ndarray:
    arr = np.zeros(L.NUM_RULE_SLOTS, dtype=np.int64)
    arr[L.R_DECLARE_VOID] = config.declare_void
    arr[L.R_EXCHANGE_THREE] = config.exchange_three
    arr[L.R_END_ON_FIRST_WIN] = config.end_on_first_win
    arr[L.R_FAN_CAP] = 0 if config.fan_cap is None else config.fan_cap
    arr[L.R_BASE_POINTS] = config.base_points
    arr[L.R_SELF_DRAW_BONUS] = _BONUS[config.self_draw_bonus]
    arr[L.R_KONG_FLOWER_DIRECT_PAYS] = _KFD[config.kong_flower_direct_pays]
    arr[L.R_PASS_WIN_RULE] = config.pass_win_rule
    arr[L.R_MUST_WIN_LAST_FOUR] = config.must_win_last_four
    arr[L.R_HAIDI] = config.haidi
    arr[L.R_JINGOU] = config.jingou
    arr[L.R_DIRECT_KONG_PAYS] = config.direct_kong_pays
    arr[L.R_ADDED_KONG_PAYS] = config.added_kong_pays
    arr[L.R_CONCEALED_KONG_PAYS] = config.concealed_kong_pays
    arr[L.R_FLOWER_PIG_PAYS] = config.flower_pig_pays
    return arr


XUEZHAN = RuleConfig()
"""The defaults of RULES.md §9: 定缺 on, no 换三张, no cap."""
XUEZHAN_EXCHANGE = RuleConfig(exchange_three=True)
"""Defaults plus 换三张, as most online 血战 tables play."""
XUEZHAN_CAPPED = RuleConfig(exchange_three=True, fan_cap=4, self_draw_bonus="base")
"""A common club table: 换三张, 4-fan cap, 自摸加底."""
XUEZHAN_FULL = RuleConfig(
    exchange_three=True,
    self_draw_bonus="fan",
    haidi=True,
    jingou=True,
    kong_flower_direct_pays="discarder",
)
"""Every optional extra on: 换三张, 自摸加番, 海底, 金钩钓, 杠上花 paid by the kong's discarder."""
FIRST_WIN = RuleConfig(end_on_first_win=True)
"""非血战: the hand ends at the first win."""

PRESETS: dict[str, RuleConfig] = {
    "xuezhan": XUEZHAN,
    "xuezhan_exchange": XUEZHAN_EXCHANGE,
    "xuezhan_capped": XUEZHAN_CAPPED,
    "xuezhan_full": XUEZHAN_FULL,
    "first_win": FIRST_WIN,
}
"""Named presets; ``RuleConfig.preset(name)`` looks one up."""
