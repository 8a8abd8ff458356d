"""The whole-table value network's rows: states as tile counts, torch-free.

A row is one state of a hand at a chance event (the deal, or right after a draw
from the wall), as ``luck_events.extract`` replays it: every seat's concealed,
melded and discarded tiles, the undrawn wall's *composition* (never its order),
the void suits, the points so far, the ``luck_features`` summary of each seat,
and which policy plays each seat (``VOCAB``). ``rows_of`` turns replayed hands into
training rows with the points each seat still won from there (the target);
``sichuan_env.agents.eval.table_value`` reads the same arrays at play time.

Seats are absolute here; the network makes them relative to the seat it scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sichuan_env.agents.eval.luck_events import Events
from sichuan_env.agents.eval.luck_features import NF

VOCAB = (
    "unknown",
    "random",
    "heuristic",
    "value",
    "defensive",
    "bc",
    "ppo",
    "distill",
    "distill-sample",
    "exit",
    "distill-guard",
    "search",
    "distill-search64-after-win",
)
"""The policies the network knows by name; ``unknown`` (id 0) stands for any other."""
UNKNOWN = 0
ALIASES: dict[str, str] = {}
"""Names that stand for a ``VOCAB`` entry (kept in step with the registry's aliases).

Empty: the targets of ``strongest`` (``ensemble6-guard-search64-after-win``) and
``strongest-net`` (``ensemble6-guard``) came after the network's vocabulary, so both are
``unknown`` to it, as every agent outside ``VOCAB`` is. (``strongest`` stood for
``distill-search64-after-win``, in ``VOCAB``, until it was re-pointed.)"""

ROW_FIELDS = {
    "tiles": ((4, 3, 27), np.uint8),
    "wallc": ((27,), np.uint8),
    "voids": ((4,), np.int8),
    "feats": ((4, NF), np.float16),
    "so_far": ((4,), np.int32),
    "lineup": ((4,), np.int8),
    "deal": ((), np.bool_),
    "y": ((4,), np.float32),
}
"""Each row array: its shape after the row axis, and its dtype."""


def vocab_id(name: str, *, aliases: dict[str, str] | None = None) -> int:
    """The ``VOCAB`` id of an agent spec; ``UNKNOWN`` for names the network was not trained on.

    Aliases (``strongest``) resolve to their target first (``aliases`` defaults to
    ``ALIASES``); a checkpoint path, a plugin or a misspelling is unknown.
    """
    table = ALIASES if aliases is None else aliases
    name = table.get(name, name)
    return VOCAB.index(name) if name in VOCAB else UNKNOWN


def seat_ids(lineup: Sequence[str], rotation: int) -> np.ndarray:
    """``int8[4]``: the vocabulary id of the agent in each seat of a duplicate match's hand.

    In rotation ``r`` seat ``s`` is played by ``lineup[(s + r) % 4]`` (``evaluate``).
    """
    return np.array([vocab_id(lineup[(s + rotation) % 4]) for s in range(4)], dtype=np.int8)


def rows_of(ev: Events, lineups: np.ndarray) -> dict[str, np.ndarray]:
    """Training rows of every event of the hands of ``ev``: the states that happened.

    Args:
        ev: replayed hands (``luck_events.extract``).
        lineups: ``int8[H, 4]``: the vocabulary id of each hand's seats.

    Returns:
        One array per ``ROW_FIELDS`` key, rows of every hand in order; ``y`` is the points
        each seat won from the event to the end of the hand.
    """
    h = ev.final.shape[0]
    if lineups.shape != (h, 4):
        raise ValueError(f"lineups must be [{h}, 4], got {lineups.shape}")
    hand = np.repeat(np.arange(h), ev.n_events)
    event = np.concatenate([np.arange(n) for n in ev.n_events]) if h else np.zeros(0, int)
    slot = ev.actual[hand, event]
    return {
        "tiles": ev.tiles[hand, event],
        "wallc": ev.wallc[hand, event],
        "voids": ev.voids[hand, event],
        "feats": ev.feats[hand, event, slot].astype(np.float16),
        "so_far": ev.scores_at[hand, event].astype(np.int32),
        "lineup": lineups[hand].astype(np.int8),
        "deal": event == 0,
        "y": (ev.final[hand] - ev.scores_at[hand, event]).astype(np.float32),
    }


def counterfactual(
    tiles: np.ndarray, wallc: np.ndarray, drawer: int, drawn: int, t: int
) -> tuple[np.ndarray, np.ndarray]:
    """The state had ``drawer`` drawn ``t`` instead of ``drawn``: ``(tiles, wallc)`` copies."""
    tiles = tiles.copy()
    wallc = wallc.copy()
    tiles[drawer, 0, drawn] -= 1
    wallc[drawn] += 1
    tiles[drawer, 0, t] += 1
    wallc[t] -= 1
    return tiles, wallc
