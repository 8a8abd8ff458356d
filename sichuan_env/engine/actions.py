"""The action space: a sum of named ranges, and the record syntax of docs/rules.md §10.

The engine takes one decision at a time from the seat to act. 换三张 is three
single-tile picks (``EXCHANGE + t``), logged in a record as one
``exchange 1m2m3m`` action once the third pick is made.
"""

from __future__ import annotations

import operator

import numpy as np

from ..tiles import NUM_TILE_TYPES, SUITS, echo, tile_index, tile_name

# Contiguous ranges; the comments are the spec. ACTION_SPACE is computed, never typed in.
DISCARD = 0  # +t  discard tile t                                    [0, 27)
EXCHANGE = DISCARD + NUM_TILE_TYPES  # +t  pick tile t to pass (换三张)   [27, 54)
VOID = EXCHANGE + NUM_TILE_TYPES  # +s  declare suit s void (定缺)       [54, 57)
SELF_KONG = VOID + 3  # +t  concealed kong, or added kong on a pong, of t  [57, 84)
PONG = SELF_KONG + NUM_TILE_TYPES  # pong the discard                     84
KONG = PONG + 1  # direct kong of the discard                             85
HU = KONG + 1  # win: self-draw, on a discard, or robbing a kong          86
PASS = HU + 1  # decline every claim                                      87
ACTION_SPACE = PASS + 1  # 88


def as_action_id(action: object) -> int:
    """An action id as a plain ``int``: the one check every entry point shares.

    Accepts what RL libraries hand back: a Python ``int``, a numpy integer, or a
    0-d integer array (sb3's ``model.predict`` returns ``array(55)``); anything
    with ``__index__`` and no dimensions (a 0-d integer tensor) works too.

    Raises:
        TypeError: not an integer scalar: a bool, a float, a string, None, a
            list, or an array with dimensions (``array([5])``).
        ValueError: an integer outside ``[0, ACTION_SPACE)``.
    """
    dtype = getattr(action, "dtype", None)
    if (
        isinstance(action, (bool, np.bool_))
        or (dtype is not None and str(dtype) in ("bool", "torch.bool"))
        or getattr(action, "ndim", 0) != 0
    ):
        raise TypeError(_not_an_id(action))
    try:
        a = operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(_not_an_id(action)) from None
    if not 0 <= a < ACTION_SPACE:
        raise ValueError(f"action id must be in [0, {ACTION_SPACE}), got {a}")
    return a


def _not_an_id(action: object) -> str:
    return (
        f"an action id is an integer in [0, {ACTION_SPACE}) (an int, a numpy integer or "
        f"a 0-d integer array), got {echo(action)}"
    )


def action_to_str(action: int, *, added: bool | None = None) -> str:
    """Record syntax of one action id, e.g. ``"discard 7p"``, ``"void s"``, ``"pong"``.

    A self kong is ``"concealed_kong t"`` unless ``added`` says it is an added
    kong (the id alone does not know; ``Game`` passes it). An exchange pick is
    ``"pick t"`` (records join three picks into ``"exchange ..."``).

    Raises:
        TypeError: for anything but an integer id (floats and booleans included).
        ValueError: for an id outside ``[0, ACTION_SPACE)``.
    """
    a = as_action_id(action)
    if a < EXCHANGE:
        return f"discard {tile_name(a - DISCARD)}"
    if a < VOID:
        return f"pick {tile_name(a - EXCHANGE)}"
    if a < SELF_KONG:
        return f"void {SUITS[a - VOID]}"
    if a < PONG:
        return f"{'added_kong' if added else 'concealed_kong'} {tile_name(a - SELF_KONG)}"
    return {PONG: "pong", KONG: "kong", HU: "hu", PASS: "pass"}[a]


def action_from_str(text: str) -> list[int]:
    """Action ids of one record action: one id, or three picks for ``exchange``.

    Raises:
        ValueError: for text that is not an action of docs/rules.md §10.
    """
    if not isinstance(text, str):
        raise ValueError(f"an action is a string such as 'discard 5p', not {text!r}")
    parts = text.split()
    if not parts:
        raise ValueError("empty action")
    word, args = parts[0], parts[1:]
    simple = {"pong": PONG, "kong": KONG, "hu": HU, "pass": PASS}
    if word in simple and not args:
        return [simple[word]]
    if len(args) != 1:
        raise ValueError(f"malformed action {text!r}")
    arg = args[0]
    if word == "discard":
        return [DISCARD + tile_index(arg)]
    if word in ("concealed_kong", "added_kong"):
        return [SELF_KONG + tile_index(arg)]
    if word == "void":
        if arg not in SUITS or len(arg) != 1:
            raise ValueError(f"void takes one suit letter m, p or s, got {arg!r}")
        return [VOID + SUITS.index(arg)]
    if word == "pick":
        return [EXCHANGE + tile_index(arg)]
    if word == "exchange":
        if len(arg) != 6:
            raise ValueError(f"exchange takes three tiles such as '1m2m3m', got {arg!r}")
        return [EXCHANGE + tile_index(arg[i : i + 2]) for i in (0, 2, 4)]
    raise ValueError(f"unknown action {text!r}")
