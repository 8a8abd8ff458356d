"""``score_win`` and ``best_wait_score``: the typed facades over the fan kernel.

A hand is given as its concealed part (including the winning tile) and its
exposed or declared melds, a sequence of ``(kind, tile)`` with kind
``"pong"``, ``"kong"`` (direct or added, exposed) or ``"concealed_kong"``
and the tile as ``"5p"`` or an index. docs/rules.md §5 decides whether it is a
legal win and §6 what it is worth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..hand import as_batch, void_code, voids_array
from ..kernels import fan as _fan
from ..kernels import layout as L
from ..kernels.agari import any_over_four
from ..kernels.tables import get_tables
from ..tiles import InputTypeError, as_counts, count_error, echo, tile_index, tile_name, to_str
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
    """The value of one win (docs/rules.md §6, identifiers of §10)."""

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


def melds_array(melds: Sequence[MeldSpec], *, name: str = "melds") -> np.ndarray:
    """Validate melds and pack them into ``int8[4, 2]`` rows of ``(kind, tile)``.

    ``melds`` is a list or tuple of at most 4 ``(kind, tile)`` pairs (each a
    tuple or list), kind one of ``MELD_KINDS`` and tile ``"5p"`` or 0..26.

    Raises:
        InputTypeError: (a TypeError and a ValueError) for a value of the wrong
            type: a numpy array or string for ``melds``, a bool or float tile.
        ValueError: naming the meld for a bad value: more than 4 melds, an
            unknown kind, a tile outside 0..26.
    """
    if not isinstance(melds, (list, tuple)):
        raise InputTypeError(
            f"{name} must be a list of (kind, tile) pairs such as [('pong', '5p')], "
            f"not {type(melds).__name__}"
        )
    if len(melds) > 4:
        raise ValueError(f"a hand has at most 4 melds, got {len(melds)}")
    out = np.zeros((4, 2), dtype=np.int8)
    for i, meld in enumerate(melds):
        if not isinstance(meld, (tuple, list)):
            raise InputTypeError(f"meld {i} must be a (kind, tile) pair, got {echo(meld)}")
        if len(meld) != 2:
            raise ValueError(f"meld {i} must be a (kind, tile) pair, got {echo(meld)}")
        kind, tile = meld
        code = MELD_KINDS.get(kind) if type(kind) is str else None
        if code is None:
            error = ValueError if isinstance(kind, str) else InputTypeError
            raise error(f"meld {i}: kind must be one of {sorted(MELD_KINDS)}, got {echo(kind)}")
        index = _TILE_CODES.get(tile) if type(tile) is str else None
        out[i, 0] = code
        out[i, 1] = tile_index(tile, name=f"meld {i} tile") if index is None else index
    return out


def _prepare(concealed: object, melds: Sequence[MeldSpec], size: int) -> tuple:
    counts = as_counts(concealed, name="concealed")
    packed = melds_array(melds)
    n_melds = len(melds)
    n = int(counts.astype(np.int64).sum())
    want = size - 3 * n_melds
    if n != want:
        raise ValueError(
            f"concealed must hold {want} tiles with {n_melds} meld(s), got {n}: {to_str(counts)!r}"
        )
    held = counts.astype(np.int64)
    for kind, tile in packed[:n_melds]:
        held[tile] += 3 if kind == L.MELD_PONG else 4
    over = np.flatnonzero(held > 4)
    if over.size:
        names = ", ".join(tile_name(int(t)) for t in over)
        raise ValueError(f"more than 4 copies of {names} in the concealed part and melds")
    return counts, packed, n_melds


def win_points(fan: int, base_points: int) -> int:
    """Points one payer owes for a win of ``fan`` fan: ``base_points * 2 ** (fan - 1)``.

    The one formula ``WinScore.points`` and ``WinScores.points`` both use
    (exact in ``int64`` for every ``RuleConfig``: see ``config.payment_bound``).
    """
    return base_points << (fan - 1) if fan > 0 else 0


@lru_cache(maxsize=4096)
def _win_score(fan: int, base: int, roots: int, extras: int, base_points: int) -> WinScore:
    # WinScore is immutable, so equal scores share one object
    names = tuple(name for i, name in enumerate(L.EXTRA_NAMES) if (extras >> i) & 1)
    return WinScore(
        fan=int(fan),
        base=L.BASE_NAMES[base],
        roots=int(roots),
        extras=names,
        points=win_points(int(fan), base_points),
    )


_FLAG_NAMES = (
    "self_draw",
    "after_kong",
    "kong_discard",
    "robbing_kong",
    "heavenly",
    "earthly",
    "last_tile",
)
_FLAG_BITS = (
    L.CTX_SELF_DRAW,
    L.CTX_AFTER_KONG,
    L.CTX_KONG_DISCARD,
    L.CTX_ROBBING_KONG,
    L.CTX_HEAVENLY,
    L.CTX_EARTHLY,
    L.CTX_LAST_TILE,
)


def _context(*flags: object, has_melds: bool) -> int:
    """Check the win-context flags (booleans, no contradictions); pack them into ``CTX_*`` bits."""
    for name, flag in zip(_FLAG_NAMES, flags, strict=True):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {echo(flag)}")
    self_draw, after_kong, kong_discard, robbing_kong, heavenly, earthly, last_tile = map(
        bool, flags
    )
    if heavenly and earthly:
        raise ValueError("a win cannot be both heavenly (天胡) and earthly (地胡)")
    if heavenly or earthly:
        self_draw = True  # 天胡/地胡 are self-draw wins (docs/rules.md §10.1.3)
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
    values = (self_draw, after_kong, kong_discard, robbing_kong, heavenly, earthly, last_tile)
    return sum(bit for bit, flag in zip(_FLAG_BITS, values, strict=True) if flag)


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
    """Score a win, or return None when the hand is not a legal win (docs/rules.md §5, §6).

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
        InputTypeError: (a TypeError and a ValueError) for an argument of the wrong
            type, e.g. ``self_draw="no"``, a numpy ``melds`` array, ``rules={}``.
        ValueError: for malformed tiles or melds, wrong sizes, more than four copies,
            or contradictory context flags.
    """
    if type(rules) is not RuleConfig and not isinstance(rules, RuleConfig):
        raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    if type(melds) is tuple and not melds:  # the default: no melds
        packed = _NO_MELDS
        n_melds = 0
    else:
        packed = melds_array(melds)
        n_melds = len(melds)
    if (
        self_draw is False
        and after_kong is False
        and kong_discard is False
        and robbing_kong is False
        and heavenly is False
        and earthly is False
        and last_tile is False
    ):
        ctx = 0  # the common case, decided by identity alone
    else:
        ctx = _context(
            self_draw,
            after_kong,
            kong_discard,
            robbing_kong,
            heavenly,
            earthly,
            last_tile,
            has_melds=n_melds > 0,
        )
    v = -1 if void is None else void_code(void)
    if not (
        type(concealed) is np.ndarray
        and concealed.dtype is _U8
        and concealed.ndim == 1
        and concealed.flags.c_contiguous
        and concealed.flags.writeable
    ):
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


class BestWait(NamedTuple):
    """``best_wait_score``'s answer: the wait that scores highest, and its score.

    A named tuple, so ``tile, score = best_wait_score(...)`` unpacks it too.
    """

    tile: int
    """The winning tile's index (0..26: ``tile_name(best.tile)`` is e.g. ``"8p"``), not points."""
    score: WinScore
    """The win it makes (``score.fan``, ``score.points``)."""

    def __repr__(self) -> str:
        return f"BestWait(tile={self.tile} ({tile_name(self.tile)}), score={self.score!r})"


def best_wait_score(
    concealed: object,
    melds: Sequence[MeldSpec] = (),
    *,
    void: object = None,
    rules: RuleConfig = _DEFAULT_RULES,
) -> BestWait | None:
    """查大叫 (docs/rules.md §7.3): the highest-fan win a tenpai hand could make.

    Every wait (a tile with fewer than 4 copies in the hand and melds that
    makes a legal win) is scored as a win on a discard with roots, no extra
    fan, capped by ``rules.fan_cap``. Returns ``BestWait(tile, score)`` (a named
    tuple: the tile index and its ``WinScore``) of the best (the lowest tile on
    ties), or None when the hand is not tenpai.

    Raises:
        InputTypeError: (a TypeError and a ValueError) for an argument of the wrong type.
        ValueError: for malformed tiles or melds or a concealed part that is not
            13 tiles minus 3 per meld.
    """
    if not isinstance(rules, RuleConfig):
        raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    counts, packed, n_melds = _prepare(concealed, melds, 13)
    fan, tile, base, roots = _fan.best_wait(
        counts, packed, n_melds, void_code(void), kernel_rules(rules), _T["FLAGS"], _T["WAITS"]
    )
    if fan < 0:
        return None
    return BestWait(int(tile), _win_score(fan, base, roots, 0, rules.base_points))


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
        InputTypeError: (a TypeError and a ValueError) for an argument of the wrong
            type, e.g. float ``melds`` or ``self_draw="no"``.
        ValueError: naming the first bad row.
    """
    if not isinstance(rules, RuleConfig):
        raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
    c = as_batch(concealed, name="concealed")
    if c.size and any_over_four(c.reshape(-1)):
        raise count_error(c, "concealed")
    n = c.shape[0]
    m = _batch_melds(melds, n)
    used = m[:, :, 0] > 0
    if n and (used[:, 1:] & ~used[:, :-1]).any():
        raise ValueError("melds must fill rows from the first one (kind 0 only at the end)")
    n_melds = used.sum(axis=1).astype(np.int64)
    ctx = np.where(_batch_flags(self_draw, n, "self_draw"), L.CTX_SELF_DRAW, 0).astype(np.int64)
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
    # win_points, vectorised: base_points << (fan - 1), exact (config bounds base_points)
    shift = np.maximum(fan.astype(np.int64), 1) - 1
    pts = np.where(fan > 0, np.left_shift(np.int64(rules.base_points), shift), 0)
    return WinScores(fan=fan, base=base, roots=roots, extras=extras, points=pts)


def _batch_melds(melds: object, n: int) -> np.ndarray:
    """``melds`` of ``score_win_batch`` as a writable C-contiguous ``int8[n, 4, 2]``."""
    if melds is None:
        return np.zeros((n, 4, 2), dtype=np.int8)
    m = melds if isinstance(melds, np.ndarray) else np.asarray(melds)
    if m.dtype.kind not in "iu":
        raise InputTypeError(
            f"melds must be an integer array of shape ({n}, 4, 2), got dtype {m.dtype}"
        )
    if m.shape != (n, 4, 2):
        raise ValueError(f"melds must be an integer array of shape ({n}, 4, 2), got {m.shape}")
    if m.size and (m.min() < 0 or m.max() > 26):
        raise ValueError("meld rows must hold a kind code 0..3 and a tile 0..26")
    return np.array(m, dtype=np.int8)  # a copy: writable and C-contiguous


def _batch_flags(flags: object, n: int, name: str) -> np.ndarray:
    """One boolean for all rows or ``bool[n]`` (numpy bool dtype only), as ``bool[n]``."""
    if isinstance(flags, (bool, np.bool_)):
        return np.full(n, bool(flags))
    arr = flags if isinstance(flags, np.ndarray) else np.asarray(flags)
    if arr.dtype != np.bool_:
        raise InputTypeError(
            f"{name} must be True, False or a bool array of shape ({n},), got {echo(flags)}"
        )
    if arr.shape != (n,):
        raise ValueError(f"{name} must be one flag or one per row (shape ({n},)), got {arr.shape}")
    return arr
