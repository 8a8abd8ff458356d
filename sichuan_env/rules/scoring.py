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
from functools import lru_cache

import numpy as np

from ..hand import as_batch, void_code, voids_array
from ..kernels import fan as _fan
from ..kernels import layout as L
from ..kernels.tables import get_tables
from ..tiles import as_counts, tile_index, tile_name, to_str
from .config import RuleConfig, kernel_rules

MELD_KINDS = {"pong": L.MELD_PONG, "kong": L.MELD_KONG, "concealed_kong": L.MELD_CONCEALED_KONG}
"""Meld kind names and their kernel codes."""
MeldSpec = tuple[str, "str | int"]
_KIND_NAMES = {code: name for name, code in MELD_KINDS.items()}

_T = get_tables()
_FLAGS = _T["FLAGS"]
_DEFAULT_RULES = RuleConfig()
_NO_MELDS = np.zeros((4, 2), dtype=np.int8)
_U8 = np.dtype(np.uint8)
_TILE_CODES = {tile_name(t): t for t in range(27)}
_score_code = _fan.score_code


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
    if not isinstance(melds, Sequence):
        raise ValueError(
            f"melds must be a sequence of (kind, tile) pairs, not {type(melds).__name__}"
        )
    rows = list(melds)
    if len(rows) > 4:
        raise ValueError(f"a hand has at most 4 melds, got {len(rows)}")
    out = np.zeros((4, 2), dtype=np.int8)
    for i, meld in enumerate(rows):
        try:
            kind, tile = meld
        except (TypeError, ValueError):
            raise ValueError(f"meld {i} must be a (kind, tile) pair, got {meld!r}") from None
        code = MELD_KINDS.get(kind) if isinstance(kind, str) else None
        if code is None:
            raise ValueError(f"meld {i}: kind must be one of {sorted(MELD_KINDS)}, got {kind!r}")
        index = _TILE_CODES.get(tile) if type(tile) is str else None
        out[i, 0] = code
        out[i, 1] = tile_index(tile) if index is None else index
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


@lru_cache(maxsize=4096)
def _win_score(fan: int, base: int, roots: int, extras: int, base_points: int) -> WinScore:
    # WinScore is immutable, so equal scores share one object
    names = tuple(name for i, name in enumerate(L.EXTRA_NAMES) if (extras >> i) & 1)
    return WinScore(
        fan=int(fan),
        base=L.BASE_NAMES[base],
        roots=int(roots),
        extras=names,
        points=base_points << (int(fan) - 1),
    )


def _context(
    self_draw: bool,
    after_kong: bool,
    kong_discard: bool,
    robbing_kong: bool,
    heavenly: bool,
    earthly: bool,
    last_tile: bool,
    has_melds: bool,
) -> int:
    """Check the win-context flags for contradictions and pack them into ``CTX_*`` bits."""
    if heavenly and earthly:
        raise ValueError("a win cannot be both heavenly (天胡) and earthly (地胡)")
    if heavenly or earthly:
        self_draw = True  # 天胡/地胡 are self-draw wins (RULES.md §10.1.3)
        if has_melds:
            raise ValueError("天胡/地胡 are won on the initial tiles: no melds")
        if after_kong:
            raise ValueError("a win after a kong replacement is 杠上花, not 天胡/地胡")
    if after_kong and not self_draw:
        raise ValueError("after_kong (杠上花) is a self-draw win: pass self_draw=True")
    if self_draw and (kong_discard or robbing_kong):
        raise ValueError("kong_discard and robbing_kong are wins on another player's tile")
    if kong_discard and robbing_kong:
        raise ValueError("a win cannot be both 杠上炮 and 抢杠胡")
    flags = (self_draw, after_kong, kong_discard, robbing_kong, heavenly, earthly, last_tile)
    bits = (
        L.CTX_SELF_DRAW,
        L.CTX_AFTER_KONG,
        L.CTX_KONG_DISCARD,
        L.CTX_ROBBING_KONG,
        L.CTX_HEAVENLY,
        L.CTX_EARTHLY,
        L.CTX_LAST_TILE,
    )
    return sum(bit for bit, flag in zip(bits, flags, strict=True) if flag)


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
    if type(rules) is not RuleConfig and not isinstance(rules, RuleConfig):
        raise ValueError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if self_draw or after_kong or kong_discard or robbing_kong or heavenly or earthly or last_tile:
        ctx = _context(
            self_draw,
            after_kong,
            kong_discard,
            robbing_kong,
            heavenly,
            earthly,
            last_tile,
            bool(melds),
        )
    else:
        ctx = 0
    if melds:
        packed = melds_array(melds)
        n_melds = len(melds)
    else:
        packed = _NO_MELDS
        n_melds = 0
    v = -1 if void is None else void_code(void)
    if not (type(concealed) is np.ndarray and concealed.dtype is _U8 and concealed.ndim == 1):
        concealed = as_counts(concealed, name="concealed")  # the kernel validates the rest
    fan, base, roots, extras = _score_code(
        concealed, packed, n_melds, v, ctx, kernel_rules(rules), _FLAGS
    )
    if fan < -1:
        _prepare(concealed, melds, 14)  # raises the detailed error
        raise ValueError(f"not a valid hand: {to_str(concealed)!r} with melds {list(melds)}")
    if fan < 0:
        return None
    return _win_score(fan, base, roots, extras, rules.base_points)


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
        counts, packed, n_melds, void_code(void), kernel_rules(rules), _T["FLAGS"], _T["WAITS"]
    )
    if fan < 0:
        return None
    return int(tile), _win_score(fan, base, roots, 0, rules.base_points)


@dataclass(frozen=True, slots=True)
class WinScores:
    """Batched scores: one entry per hand (``fan == -1``: not a legal win)."""

    fan: np.ndarray
    """``int8[N]`` total fan after extras and cap, -1 for hands that are not wins."""
    base: np.ndarray
    """``int8[N]`` base pattern index into ``BASE_NAMES`` (-1 for non-wins)."""
    roots: np.ndarray
    """``int8[N]`` roots counted."""
    extras: np.ndarray
    """``uint8[N]`` extra-fan bit set (bit i = ``EXTRA_NAMES[i]``)."""
    points: np.ndarray
    """``int64[N]`` points of each win (0 for non-wins)."""


BASE_NAMES = L.BASE_NAMES
EXTRA_NAMES = L.EXTRA_NAMES


def score_win_batch(
    concealed: object,
    melds: object = None,
    *,
    self_draw: object = False,
    void: object = None,
    rules: RuleConfig = _DEFAULT_RULES,
) -> WinScores:
    """``score_win`` over ``uint8[N, 27]`` concealed parts, parallel over the cores.

    Args:
        concealed: ``uint8[N, 27]`` concealed parts including the winning tile.
        melds: None (no melds) or ``int8[N, 4, 2]`` rows ``(kind code, tile)``
            with kind codes of ``MELD_KINDS`` and 0 for unused rows.
        self_draw: one flag for all hands or ``bool[N]``.
        void: one suit for all hands or a code per hand (-1 none, 0..2).
        rules: the ruleset.

    Raises:
        ValueError: naming the first bad row.
    """
    if not isinstance(rules, RuleConfig):
        raise ValueError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    c = as_batch(concealed)
    n = c.shape[0]
    if melds is None:
        m = np.zeros((n, 4, 2), dtype=np.int8)
    else:
        m = np.ascontiguousarray(melds)
        if m.shape != (n, 4, 2) or not np.issubdtype(m.dtype, np.integer):
            raise ValueError(f"melds must be an integer array of shape ({n}, 4, 2), got {m.shape}")
        if m.size and (m.min() < 0 or m.max() > 26):
            raise ValueError("meld rows must hold a kind code 0..3 and a tile 0..26")
        m = m.astype(np.int8)
    used = m[:, :, 0] > 0
    if n and (used[:, 1:] & ~used[:, :-1]).any():
        raise ValueError("melds must fill rows from the first one (kind 0 only at the end)")
    n_melds = used.sum(axis=1).astype(np.int64)
    sd = np.broadcast_to(np.asarray(self_draw, dtype=np.bool_), (n,))
    ctx = np.where(sd, L.CTX_SELF_DRAW, 0).astype(np.int64)
    v = voids_array(void, n)
    fan, base, roots, extras = _fan.score_batch(c, m, n_melds, v, ctx, kernel_rules(rules), _FLAGS)
    bad = np.flatnonzero(fan < -1)
    if bad.size:
        row = int(bad[0])
        melds_row = [
            (_KIND_NAMES.get(int(k), f"kind {int(k)}"), int(t)) for k, t in m[row, : n_melds[row]]
        ]
        try:
            _prepare(c[row], melds_row, 14)
        except ValueError as exc:
            raise ValueError(f"row {row}: {exc}") from None
        raise ValueError(f"row {row}: not a valid hand")
    pts = np.where(fan > 0, rules.base_points * (2 ** np.maximum(fan.astype(np.int64) - 1, 0)), 0)
    return WinScores(fan=fan, base=base, roots=roots, extras=extras, points=pts)
