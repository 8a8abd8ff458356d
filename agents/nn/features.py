"""Hand-analysis inputs of the policy network, computed in numba from observation v1.

- ``aux_features``: for each tile, the shanten and ukeire after discarding it,
  whether a kong of it keeps the shanten, and the shanten after a pong or kong
  of the claimable tile: the quantities the heuristic ranks its choices by.
- ``heuristic_choices``: ``HeuristicAgent``'s action for each row (the
  ``prior`` a ``PolicyConfig(prior=True)`` network adds to its logits).

Both read only the public rows of observation v1 (``sichuan_env.agents.rule_based.heuristic``'s kernels).
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.rule_based.heuristic import (
    decide,
    decide_batch,
    decide_with,
    hand_of,
    void_of,
)

from sichuan_env._jit import njit
from sichuan_env.encoding import observation as O
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables
from sichuan_env.kernels.ukeire import discard_table

SH_BINS = 6
"""Shanten one-hot bins: -1 (complete), 0 (tenpai), 1, 2, 3, 4 or more."""
AUX_PER_TILE = SH_BINS + 2
AUX_SIZE = 27 * AUX_PER_TILE + 3 * SH_BINS
"""Length of the ``aux_features`` vector."""


@njit
def _bin(out, at: int, sh: int) -> None:
    out[at + min(max(sh + 1, 0), SH_BINS - 1)] = 1.0


@njit
def _aux_one(obs, dist, out) -> None:
    """Hand-analysis features of one observation (v1 public rows), written to ``out``.

    Per tile type ``t`` (own turn, ``3k+2`` tiles): the shanten after
    discarding ``t`` (one-hot), its ukeire (unseen tiles that lower it) / 20,
    and whether a kong of ``t`` keeps the shanten. Globally: the shanten of a
    ``3k+1`` hand, and after ponging / konging the claimable tile.
    """
    sh = np.zeros(27, dtype=np.int64)
    uk = np.zeros(27, dtype=np.int64)
    _aux_fill(obs, dist, out, sh, uk)


@njit
def decide_aux(obs, mask, dist, out) -> int:
    """The heuristic's action (``decide``) and ``_aux_one``'s features (into ``out``), in one pass.

    A network with both the prior and the aux features needs both: on an own
    turn they share the (shanten, ukeire) after each discard, computed once
    here. Exactly ``decide(obs, mask, dist)`` and ``_aux_one(obs, dist, out)``
    (``tests/test_net_cache.py``); ``out`` must be zero on entry.
    """
    sh = np.zeros(27, dtype=np.int64)
    uk = np.zeros(27, dtype=np.int64)
    if _aux_fill(obs, dist, out, sh, uk):
        return decide_with(obs, mask, dist, sh, uk)
    return decide(obs, mask, dist)


@njit
def _aux_fill(obs, dist, out, sh, uk) -> bool:
    """``_aux_one``'s features into ``out``; True when ``sh``/``uk`` hold every held tile's discard.

    On an own turn (``3k+2`` tiles) ``sh[t]``, ``uk[t]`` are ``ukeire`` of the
    hand less one ``t`` for each ``t`` it holds (``kernels.ukeire.discard_table``):
    ``decide_with``'s table.
    """
    hand = np.zeros(27, dtype=np.uint8)
    hand_of(obs, hand)
    void = void_of(obs)
    unseen = np.zeros(27, dtype=np.int64)
    n = 0
    for t in range(27):
        seen = 0
        for k in range(4):
            seen += obs[O.VISIBLE + k, t] != 0
        unseen[t] = 4 - seen
        n += hand[t]
    g = 27 * AUX_PER_TILE
    if n % 3 == 2:
        now = shanten(hand, void, dist)
        discard_table(hand, void, unseen, dist, sh, uk)
        for t in range(27):
            if hand[t] == 0:
                continue
            hand[t] -= 1
            _bin(out, t * AUX_PER_TILE, sh[t])
            out[t * AUX_PER_TILE + SH_BINS] = min(uk[t] / 20.0, 1.0)
            if hand[t] == 3:  # a concealed kong of all four
                hand[t] -= 3
                out[t * AUX_PER_TILE + SH_BINS + 1] = shanten(hand, void, dist) <= now
                hand[t] += 3
            else:  # one t less: the hand less one t, whose shanten the table holds
                out[t * AUX_PER_TILE + SH_BINS + 1] = sh[t] <= now
            hand[t] += 1
        return True
    if n % 3 == 1:
        now = shanten(hand, void, dist)
        _bin(out, g, now)
        c = -1
        for t in range(27):
            if obs[O.CLAIM, t]:
                c = t
        if c >= 0 and hand[c] >= 2:
            # the best discard after the pong: min over held d of shanten(h - d) for the
            # 3k+2 <= 14 tiles h left (any hand met in play), which is shanten(h), or 0
            # when h is complete (one call, not one per held tile; tests/test_aux_shortcuts.py)
            hand[c] -= 2
            _bin(out, g + SH_BINS, max(shanten(hand, void, dist), 0))
            hand[c] += 2
            if hand[c] >= 3:
                hand[c] -= 3
                _bin(out, g + 2 * SH_BINS, shanten(hand, void, dist))
                hand[c] += 3
    return False


@njit
def aux_into(obs, dist, out) -> None:
    """``_aux_one`` into ``out`` of any prior content (zeroed first)."""
    out[:] = 0.0
    _aux_one(obs, dist, out)


@njit(parallel=True)
def _aux_batch(obs, dist, out) -> None:
    for i in numba.prange(obs.shape[0]):
        _aux_one(obs[i], dist, out[i])


def aux_features(obs: np.ndarray) -> np.ndarray:
    """``float32[N, AUX_SIZE]`` hand-analysis features of v1 observations ``uint8[N, rows, 27]``.

    The quantities the heuristic ranks its choices by (shanten and ukeire
    after each discard, shanten after a claim), handed to the network as
    inputs so that it need not rediscover shanten arithmetic from planes.
    """
    obs = np.ascontiguousarray(obs, dtype=np.uint8)
    out = np.zeros((len(obs), AUX_SIZE), dtype=np.float32)
    if len(obs):
        _aux_batch(obs, get_tables()["DIST"], out)
    return out


def heuristic_choices(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``int64[N]``: ``HeuristicAgent``'s action for each (v1 observation, mask) row.

    -1 marks a row whose mask has no legal action. This is the ``prior`` that
    ``PolicyConfig(prior=True)`` networks add to their logits.
    """
    obs = np.ascontiguousarray(obs, dtype=np.uint8)
    masks = np.ascontiguousarray(masks, dtype=np.int8)
    if obs.ndim != 3 or masks.ndim != 2 or len(obs) != len(masks):
        raise ValueError(
            f"obs {obs.shape} and masks {masks.shape} must be (N, rows, 27) and (N, 88)"
        )
    out = np.full(len(obs), -1, dtype=np.int64)
    if len(obs):
        decide_batch(obs, masks, get_tables()["DIST"], out)
    return out
