"""``score_win`` and ``best_wait_score``: the typed facades over the fan kernel.

A hand is given as its concealed part (including the winning tile) and its
exposed or declared melds, a sequence of ``(kind, tile)`` with kind
``"pong"``, ``"kong"`` (direct or added, exposed) or ``"concealed_kong"``
and the tile as ``"5p"`` or an index. RULES.md §5 decides whether it is a
legal win and §6 what it is worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..hand import void_code
from ..kernels import fan as _fan
from ..kernels import layout as L
from ..kernels.tables import get_tables
from ..tiles import as_counts, tile_index, tile_name, to_str
from .config import RuleConfig

MELD_KINDS = {"pong": L.MELD_PONG, "kong": L.MELD_KONG, "concealed_kong": L.MELD_CONCEALED_KONG}
"""Meld kind names and their kernel codes."""
MeldSpec = tuple[str, "str | int"]

_T = get_tables()
_DEFAULT_RULES = RuleConfig()


@dataclass(frozen=True, slots=True)
class WinScore:
    """The value of one win (RULES.md §6, identifiers of §10)."""

    fan: int
    """Total fan: base pattern + roots + extras, after the cap."""
    base: str
    """Base pattern identifier, e.g. ``"qing_duidui"``."""
    roots: int
    """Roots (根) counted, after the 龙七对 reduction."""
    extras: tuple[str, ...]
    """Extra-fan identifiers in §10 order, e.g. ``("gang_shang_hua",)``."""
    points: int
    """``base_points * 2 ** (fan - 1)``: what one payer owes (before any self-draw base bonus)."""


def melds_array(melds: Sequence[MeldSpec]) -> np.ndarray:
    """Validate melds and pack them into ``int8[4, 2]`` rows of ``(kind, tile)``.

    Raises:
        ValueError: more than 4 melds, an unknown kind or a bad tile.
    """
    if isinstance(melds, (str, bytes)):
        raise ValueError("melds must be a sequence of (kind, tile) pairs, not a string")
    rows = list(melds)
    if len(rows) > 4:
        raise ValueError(f"a hand has at most 4 melds, got {len(rows)}")
    out = np.zeros((4, 2), dtype=np.int8)
    for i, meld in enumerate(rows):
        try:
            kind, tile = meld
        except (TypeError, ValueError):
            raise ValueError(f"meld {i} must be a (kind, tile) pair, got {meld!r}") from None
        if kind not in MELD_KINDS:
            raise ValueError(f"meld {i}: kind must be one of {sorted(MELD_KINDS)}, got {kind!r}")
        out[i] = (MELD_KINDS[kind], tile_index(tile))
    return out


def _prepare(concealed: object, melds: Sequence[MeldSpec], size: int) -> tuple:
    counts = as_counts(concealed, name="concealed")
    packed = melds_array(melds)
    n_melds = len(list(melds))
    n = int(counts.astype(np.int64).sum())
    want = size - 3 * n_melds
    if n != want:
        raise ValueError(
            f"with {n_melds} meld(s) the concealed part must hold {want} tiles, "
            f"got {n}: {to_str(counts)!r}"
        )
    held = counts.astype(np.int64)
    for kind, tile in packed[:n_melds]:
        held[tile] += 3 if kind == L.MELD_PONG else 4
    over = np.flatnonzero(held > 4)
    if over.size:
        names = ", ".join(tile_name(int(t)) for t in over)
        raise ValueError(f"more than 4 copies of {names} in the concealed part and melds")
    return counts, packed, n_melds


def _win_score(fan: int, base: int, roots: int, extras: int, rules: RuleConfig) -> WinScore:
    names = tuple(name for i, name in enumerate(L.EXTRA_NAMES) if (extras >> i) & 1)
    return WinScore(
        fan=int(fan),
        base=L.BASE_NAMES[base],
        roots=int(roots),
        extras=names,
        points=rules.base_points << (int(fan) - 1),
    )


def score_win(
    concealed: object,
    melds: Sequence[MeldSpec] = (),
    *,
    self_draw: bool = False,
    after_kong: bool = False,
    kong_discard: bool = False,
    robbing_kong: bool = False,
    heavenly: bool = False,
    earthly: bool = False,
    last_tile: bool = False,
    void: object = None,
    rules: RuleConfig = _DEFAULT_RULES,
) -> WinScore | None:
    """Score a win, or return None when the hand is not a legal win (RULES.md §5, §6).

    Args:
        concealed: the concealed tiles including the winning tile (counts or notation);
            14 tiles minus 3 per meld.
        melds: exposed or declared melds as ``(kind, tile)``.
        self_draw: won by self-draw (otherwise on a discard or by robbing a kong).
        after_kong: the winning tile is a kong replacement (杠上花; needs self_draw).
        kong_discard: won on a discard made right after the discarder's kong (杠上炮).
        robbing_kong: won by robbing an added kong (抢杠胡).
        heavenly: 天胡, the dealer's initial 14 tiles (a self-draw; no melds).
        earthly: 地胡, a non-dealer's first draw (a self-draw; no melds).
        last_tile: 海底, the last tile of the wall or the discard after it.
        void: the winner's void suit (None, 0..2 or "m"/"p"/"s").
        rules: the ruleset (fan cap, base points, optional extras).

    Raises:
        ValueError: for malformed tiles or melds, wrong sizes, more than four copies,
            or contradictory context flags.
    """
    if not isinstance(rules, RuleConfig):
        raise ValueError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if heavenly and earthly:
        raise ValueError("a win cannot be both heavenly (天胡) and earthly (地胡)")
    if heavenly or earthly:
        self_draw = True  # 天胡/地胡 are self-draw wins (RULES.md §10.1.3)
        if melds:
            raise ValueError("天胡/地胡 are won on the initial tiles: no melds")
        if after_kong:
            raise ValueError("a win after a kong replacement is 杠上花, not 天胡/地胡")
    if after_kong and not self_draw:
        raise ValueError("after_kong (杠上花) is a self-draw win: pass self_draw=True")
    if self_draw and (kong_discard or robbing_kong):
        raise ValueError("kong_discard and robbing_kong are wins on another player's tile")
    if kong_discard and robbing_kong:
        raise ValueError("a win cannot be both 杠上炮 and 抢杠胡")
    counts, packed, n_melds = _prepare(concealed, melds, 14)
    ctx = (
        L.CTX_SELF_DRAW * bool(self_draw)
        | L.CTX_AFTER_KONG * bool(after_kong)
        | L.CTX_KONG_DISCARD * bool(kong_discard)
        | L.CTX_ROBBING_KONG * bool(robbing_kong)
        | L.CTX_HEAVENLY * bool(heavenly)
        | L.CTX_EARTHLY * bool(earthly)
        | L.CTX_LAST_TILE * bool(last_tile)
    )
    fan, base, roots, extras = _fan.score(
        counts, packed, n_melds, void_code(void), ctx, rules.as_array(), _T["COMPLETE"]
    )
    if fan < 0:
        return None
    return _win_score(fan, base, roots, extras, rules)


def best_wait_score(
    concealed: object,
    melds: Sequence[MeldSpec] = (),
    *,
    void: object = None,
    rules: RuleConfig = _DEFAULT_RULES,
) -> tuple[int, WinScore] | None:
    """查大叫 (RULES.md §7.3): the highest-fan win a tenpai hand could make.

    Every wait (a tile with fewer than 4 copies in the hand and melds that
    makes a legal win) is scored as a win on a discard with roots, no extra
    fan, capped by ``rules.fan_cap``. Returns ``(tile index, WinScore)`` of the
    best (the lowest tile on ties), or None when the hand is not tenpai.

    Raises:
        ValueError: for malformed tiles or melds or a concealed part that is not
            13 tiles minus 3 per meld.
    """
    if not isinstance(rules, RuleConfig):
        raise ValueError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    counts, packed, n_melds = _prepare(concealed, melds, 13)
    fan, tile, base, roots = _fan.best_wait(
        counts, packed, n_melds, void_code(void), rules.as_array(), _T["COMPLETE"], _T["WAITS"]
    )
    if fan < 0:
        return None
    return int(tile), _win_score(fan, base, roots, 0, rules)
