"""What a seat knows, for the belief filter: its event tokens parsed into arrays, and its own inputs.

``public_view`` turns a seat's public event tokens
(``sichuan_env.encoding.events``) into the arrays the filter's kernels read:
the public events in order, the declared voids, which seat took each wall
position, and the tiles known to lie at some positions (the seat's own deal
and draws, tiles revealed by 摸切 discards and self-draw wins).
``public_inputs`` collects, for each decision of a seat in a hand, the only
inputs the filter takes: those tokens, the seat's own past actions and its
own v2 observation.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

import research.hand_reading.filter_kernels as K
from sichuan_env.encoding import v2 as _v2
from sichuan_env.encoding.events import VOCAB, event_sequences
from sichuan_env.encoding.observation import obs_shape
from sichuan_env.engine.game import Game
from sichuan_env.rules.config import kernel_rules

_KONGS = ("kong", "added_kong", "concealed_kong")
_BLOCKS = sorted((first, n, name) for name, (first, n) in VOCAB.items())
_FIRSTS = [b[0] for b in _BLOCKS]
_EV_KIND = {
    "pong": K.EV_PONG,
    "kong": K.EV_KONG,
    "added_kong": K.EV_ADDED,
    "concealed_kong": K.EV_CONCEALED,
    "hu_self": K.EV_HU_SELF,
    "hu_on": K.EV_HU_ON,
}


def _decode(tok: int) -> tuple[str, int]:
    first, _, name = _BLOCKS[bisect.bisect_right(_FIRSTS, tok) - 1]
    return name, tok - first


@dataclass
class PublicView:
    """What a seat knows at a decision, as arrays for the kernels.

    Attributes:
        me: the observing seat.
        dealer: the dealer (from the tokens).
        events: ``int16[n, 4]`` public events (kind ``EV_*``, seat, tile, 摸切 flag).
        voids: ``int8[4]`` declared voids known to ``me`` (-1 unknown).
        owner: ``int8[108]`` seat that took each wall position so far (-1: not yet drawn).
        pin: ``int8[108]`` the tile known to be at each position (-1 unknown).
        undrawn: ``int64[k]`` wall positions not drawn yet.
        when: ``int64[108]`` index in ``events`` of each position's draw (-1: dealt).
    """

    me: int
    dealer: int
    events: np.ndarray
    voids: np.ndarray
    owner: np.ndarray
    pin: np.ndarray
    undrawn: np.ndarray
    when: np.ndarray


def public_view(tokens: np.ndarray, me: int) -> PublicView:
    """Parse a seat's event tokens (a prefix) into a ``PublicView``.

    Raises:
        ValueError: tokens that do not start a hand or name unknown ids.
    """
    toks = [int(t) for t in tokens]
    if len(toks) < 2 or _decode(toks[0])[0] != "start" or _decode(toks[1])[0] != "dealer":
        raise ValueError("tokens must begin with start, dealer")
    dealer = (me + _decode(toks[1])[1]) % 4
    owner = np.full(108, -1, dtype=np.int8)
    pin = np.full(108, -1, dtype=np.int8)
    for k in range(52):
        owner[k] = (dealer + k // 13) % 4
    owner[52] = dealer
    when = np.full(108, -1, dtype=np.int64)
    mine = [k for k in range(53) if owner[k] == me]
    voids = np.full(4, -1, dtype=np.int8)
    events: list[tuple[int, int, int, int]] = []
    head, tail, n_hand = 53, 107, 0
    last_draw = [-1] * 4
    prev: tuple[str, int] = ("start", 0)
    for tok in toks[2:]:
        name, i = _decode(tok)
        if name == "hand":
            pin[mine[n_hand]] = i
            n_hand += 1
        elif name == "void":
            voids[(me + i // 3) % 4] = i % 3
        elif name in ("draw", "draw_other"):
            s = me if name == "draw" else (me + i + 1) % 4
            replacement = prev[0] in _KONGS and prev[1] == s
            pos = tail if replacement else head
            tail, head = (tail - 1, head) if replacement else (tail, head + 1)
            owner[pos] = s
            when[pos] = len(events)
            last_draw[s] = pos
            if name == "draw":
                pin[pos] = i
            events.append((K.EV_DRAW, s, i if name == "draw" else -1, 0))
        elif name == "discard":
            r, rest = divmod(i, 54)
            s, tsumo, t = (me + r) % 4, rest // 27, rest % 27
            if tsumo and last_draw[s] >= 0:
                pin[last_draw[s]] = t
            events.append((K.EV_DISCARD, s, t, tsumo))
        elif name in _EV_KIND:
            s, t = (me + i // 27) % 4, i % 27
            if name == "hu_self" and last_draw[s] >= 0:  # 天胡 (no draw yet) names no drawn tile
                pin[last_draw[s]] = t
            events.append((_EV_KIND[name], s, t, 0))
        elif name == "end":
            events.append((K.EV_END, -1, -1, 0))
        elif name in ("pick", "receive", "exchange_dir"):
            raise ValueError("换三张 hands are not supported by the belief filter")
        prev = (name, (me + i // 27) % 4 if name in _KONGS else -1)
    ev = np.array(events, dtype=np.int16).reshape(-1, 4)
    undrawn = np.arange(head, tail + 1, dtype=np.int64)
    return PublicView(me, dealer, ev, voids, owner, pin, undrawn, when)


def public_inputs(game: Game, seat: int) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """``(decision, tokens so far, own past actions, own v2 observation)`` for each decision of ``seat``.

    Every decision ``seat`` took, then the pending one if ``seat`` is to act
    (its index is the number of decisions taken). Only what ``seat`` can know:
    its public event tokens, its own log entries, and the public encoder's
    view for ``seat`` of a shadow replay.
    """
    tokens, offsets = event_sequences(game)
    st = game._st[0]
    log = [divmod(int(x), 128) for x in st["log"][: int(st["n_log"])]]
    shadow = Game(game.rules, wall=st["wall"], dealer=int(st["dealer"]))
    rules = kernel_rules(game.rules)
    out = []
    own: list[int] = []
    for d in range(len(log) + 1):
        if (shadow.to_act() if d == len(log) else log[d][0]) == seat:
            obs = np.zeros(obs_shape(2), dtype=np.uint8)
            _v2.encode_at(shadow._st, 0, seat, False, rules, obs)
            out.append((d, tokens[seat][: offsets[d, seat]], np.array(own, dtype=np.int64), obs))
        if d < len(log):
            if log[d][0] == seat:
                own.append(log[d][1])
            shadow._apply(log[d][1])
    return out
