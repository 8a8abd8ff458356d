"""``RuleConfig``: one 血战到底 ruleset, the only home of rule variants.

Field names and defaults are those of docs/rules.md §9. Each field is declared
once, here, with its type, default, bounds (``metadata``) and docstring;
everything else is derived from the declaration:

- validation: ``bool`` fields take ``True``/``False`` (numpy booleans are
  normalised to Python's), ``int`` fields integers within ``metadata``'s
  bounds (numpy integers normalised), ``Literal`` fields one of their values;
- packing for the kernels (``as_array()``): one ``int64`` slot per field in
  the order of ``kernels/layout.py``'s ``RULE_FIELDS`` (checked at import),
  ``None`` as 0, a ``Literal`` as the index of its value;
- ``to_dict()`` / ``from_dict()`` for game records.

Adding an option: declare the field here, add its name to ``RULE_FIELDS``
(and an ``R_*`` constant if a kernel reads it), document it in docs/rules.md §9.

**No overflow.** Points are ``int64``. ``base_points`` is at most
``MAX_BASE_POINTS`` and every ``*_pays`` multiplier at most ``MAX_PAYS``;
``payment_bound`` derives from these the most points that can change hands
in one hand (every win at the highest fan, every kong, the whole
settlement), which stays below ``2**50``, far from ``2**63``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

import numpy as np

from ..kernels import layout as L

SelfDrawBonus = Literal["none", "base", "fan"]
KongFlowerPayer = Literal["self_draw", "discarder"]

MAX_BASE_POINTS = 2**20
"""Largest ``base_points``."""
MAX_PAYS = 2**10
"""Largest kong and flower-pig multiplier (``direct_kong_pays`` … ``flower_pig_pays``)."""
MAX_ROOTS = 4
"""Most roots (根) one win can count: four sets of four copies among 14 tiles."""
MAX_FAN = max(L.BASE_FAN) + MAX_ROOTS + len(L.EXTRA_NAMES)
"""An upper bound on the fan of any win before the cap (16)."""
MAX_KONGS = 16
"""Most kongs in one hand: four melds per seat."""


def payment_bound(base_points: int = MAX_BASE_POINTS, pays: int = MAX_PAYS) -> int:
    """An upper bound on the points that change hands in one hand of these limits.

    Per win: at most ``base * 2**(MAX_FAN - 1)`` plus the self-draw base bonus
    plus a 呼叫转移 transfer (one kong's income, ``3 * pays * base``), paid by
    at most 3 seats, for at most 3 winners. Kongs: ``MAX_KONGS`` kongs paid by
    3 seats each, and refunded (退税) at most once more. Settlement: each of
    4 seats pays each other seat at most the flower-pig amount plus the best
    查大叫 win.
    """
    win = base_points << (MAX_FAN - 1)
    kong = 3 * pays * base_points
    wins = 9 * (win + base_points + kong)
    kongs = 2 * MAX_KONGS * kong
    settlement = 12 * (pays * base_points + win)
    return wins + kongs + settlement


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleConfig:
    """One 血战到底 ruleset (docs/rules.md §9); every field has the documented default."""

    declare_void: bool = True
    """定缺: each seat declares a void suit before play and must discard it first."""
    exchange_three: bool = False
    """换三张: before play each seat passes three tiles of one suit (direction by chance)."""
    end_on_first_win: bool = False
    """非血战: the hand ends at the first win (one multi-win on a discard counts as one)."""
    fan_cap: int | None = field(default=None, metadata={"min": 1, "max": 64})
    """封顶: the most fan one win counts (1..64); None = no cap."""
    base_points: int = field(default=1, metadata={"min": 1, "max": MAX_BASE_POINTS})
    """Points of a 1-fan win; a win pays ``base_points * 2 ** (fan - 1)`` (1..2**20)."""
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
    direct_kong_pays: int = field(default=2, metadata={"min": 0, "max": MAX_PAYS})
    """直杠: the discarder pays the konger this many times base_points (0..1024)."""
    added_kong_pays: int = field(default=1, metadata={"min": 0, "max": MAX_PAYS})
    """加杠: each other player who has not won pays this many times base_points (0..1024)."""
    concealed_kong_pays: int = field(default=2, metadata={"min": 0, "max": MAX_PAYS})
    """暗杠: each other player who has not won pays this many times base_points (0..1024)."""
    flower_pig_pays: int = field(default=16, metadata={"min": 0, "max": MAX_PAYS})
    """查花猪: a flower pig pays each other active non-pig this many times base_points (0..1024)."""
    _packed: np.ndarray = field(init=False, repr=False, compare=False)
    _packed_view: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in _FIELDS:
            value = _check(f, getattr(self, f.name))
            object.__setattr__(self, f.name, value)  # numpy scalars become Python's
        packed = np.array([_encode(f, getattr(self, f.name)) for f in _FIELDS], dtype=np.int64)
        view = packed.view()
        view.flags.writeable = False
        object.__setattr__(self, "_packed", packed)  # handed to kernels only
        object.__setattr__(self, "_packed_view", view)

    def as_array(self) -> np.ndarray:
        """The ruleset packed for kernels: ``int64[NUM_RULE_SLOTS]`` (a read-only view)."""
        return self._packed_view

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, JSON-serialisable (the ``rules`` object of a game record)."""
        return {f.name: getattr(self, f.name) for f in _FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleConfig:
        """Build from a record's ``rules`` object; missing fields take their defaults.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: for unknown field names or invalid values.
        """
        if not isinstance(data, dict):
            raise TypeError(f"rules must be a dict of RuleConfig fields, got {type(data).__name__}")
        known = [f.name for f in _FIELDS]
        unknown = sorted(str(k) for k in set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown RuleConfig fields {unknown[:10]}; known: {known}")
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
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; presets: {sorted(PRESETS)}")
        return PRESETS[name]


def kernel_rules(config: RuleConfig) -> np.ndarray:
    """The packed array for kernel calls (writable, so numba's fast dispatch applies).

    Facades only: kernels never write to it, and users get ``as_array()``'s view.
    """
    return config._packed


_FIELDS = tuple(f for f in fields(RuleConfig) if f.init)
_HINTS = typing.get_type_hints(RuleConfig)
if tuple(f.name for f in _FIELDS) != L.RULE_FIELDS:
    raise ImportError("RuleConfig fields and kernels/layout.py RULE_FIELDS disagree")


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check(f: Any, value: Any) -> Any:
    """The field's value validated and normalised to a Python type."""
    hint = _HINTS[f.name]
    where = f"RuleConfig.{f.name}"
    if hint is bool:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{where} must be True or False, got {value!r}")
        return bool(value)
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{where} must be one of {list(choices)}, got {value!r}")
        return value
    optional = type(None) in typing.get_args(hint)
    if value is None and optional:
        return None
    lo, hi = f.metadata["min"], f.metadata["max"]
    if not _is_int(value) or not lo <= value <= hi:
        none = "None or " if optional else ""
        raise ValueError(f"{where} must be {none}an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def _encode(f: Any, value: Any) -> int:
    """The kernel slot value of a (validated) field."""
    hint = _HINTS[f.name]
    if value is None:
        return 0
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint).index(value)
    return int(value)


XUEZHAN = RuleConfig()
"""The defaults of docs/rules.md §9: 定缺 on, no 换三张, no cap."""
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
