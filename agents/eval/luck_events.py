"""Game records to chance events: each hand replayed once, its deal and draws as feature blocks.

``extract(records, rules)`` is the Python face of ``luck_features.replay_events``:
it turns records (``docs/rules.md`` §10: the wall, the dealer, the 换三张 offset
and the actions in record syntax) into the engine's decision logs, replays
them in numba (in parallel over hands) and returns an ``Events`` block. The
luck-adjusted estimator (``sichuan_env.agents.eval.luck``) and the value
model's training data (``sichuan_env.train.value``) both read it.

Nothing in a record is trusted: a record whose actions are not legal where
they stand, or that stops before the hand ends, is a ``ValueError`` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from sichuan_env.agents.eval import luck_features as K
from sichuan_env.agents.eval import luck_replay as R

from sichuan_env.engine.actions import action_from_str
from sichuan_env.engine.state import MAX_LOG, STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import RuleConfig, kernel_rules

CHUNK = 64
"""Hands replayed per numba call (the feature block of one is about 0.8 MB)."""


@dataclass
class Events:
    """The chance events of ``H`` hands; event 0 of each hand is its deal.

    Attributes:
        feats: ``float32[H, MAX_EVENTS, 27, 4, NF]``: per event, per slot (tile the drawer
            could have drawn; slot 0 only for the deal), per seat, the features.
        probs: ``float32[H, MAX_EVENTS, 27]``: each slot's probability (0: impossible).
        actual: ``int64[H, MAX_EVENTS]``: the slot that happened.
        drawer: ``int64[H, MAX_EVENTS]``: the seat that drew (-1 for the deal).
        scores_at: ``int64[H, MAX_EVENTS, 4]``: points so far at the event.
        final: ``int64[H, 4]``: the hand's points.
        n_events: ``int64[H]``: events per hand (the deal included).
        dealer: ``int64[H]``.
        tiles: ``uint8[H, MAX_EVENTS, 4, 3, 27]``: the state that happened, per seat its
            concealed, melded and discarded tiles (``luck_replay.table_planes``).
        wallc: ``uint8[H, MAX_EVENTS, 27]``: the undrawn wall's composition after the event.
        voids: ``int8[H, MAX_EVENTS, 4]``: the declared void suits (-1: none yet).
    """

    feats: np.ndarray
    probs: np.ndarray
    actual: np.ndarray
    drawer: np.ndarray
    scores_at: np.ndarray
    final: np.ndarray
    n_events: np.ndarray
    dealer: np.ndarray
    tiles: np.ndarray
    wallc: np.ndarray
    voids: np.ndarray


@lru_cache(maxsize=4096)
def _ids(text: str) -> tuple[int, ...]:
    return tuple(action_from_str(text))


def record_log(record: Any) -> tuple[np.ndarray, int, int, np.ndarray]:
    """``(wall uint8[108], dealer, offset, log int16[n])`` of one record (the engine's log).

    Raises:
        ValueError: a record without a wall, a dealer or actions of the expected shape.
    """
    try:
        wall = np.asarray(record["wall"], dtype=np.int64)
        dealer = int(record["dealer"])
        offset = record.get("exchange_offset")
        offset = 0 if offset is None else int(offset)
        log: list[int] = []
        for seat, text in record["actions"]:
            seat = int(seat)
            if not 0 <= seat < 4 or not isinstance(text, str):
                raise ValueError("an action is not [seat 0..3, text]")
            log.extend(seat * 128 + a for a in _ids(" ".join(text.split())))
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"not a game record that can be replayed: {exc}") from None
    if wall.shape != (108,) or wall.min() < 0 or wall.max() > 26:
        raise ValueError("not a game record that can be replayed: its wall is not 108 tile ids")
    if np.bincount(wall, minlength=27).max() != 4 or not 0 <= dealer < 4 or not 0 <= offset < 4:
        raise ValueError("not a game record that can be replayed: a bad wall, dealer or offset")
    if len(log) > MAX_LOG:
        raise ValueError(f"not a game record that can be replayed: over {MAX_LOG} decisions")
    return wall.astype(np.uint8), dealer, offset, np.asarray(log, dtype=np.int16)


def record_logs(
    records: Sequence[Any], rules: RuleConfig | None = None, first: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``record_log`` of every record, packed for the replay kernels.

    Returns ``(walls uint8[H, 108], dealers int64[H], offsets int64[H], logs
    int16[H, MAX_LOG], n_logs int64[H])``.

    Args:
        records: game records.
        rules: when given, every record's own ``rules`` must equal them.
        first: the index of ``records[0]`` in the caller's list (for messages).

    Raises:
        ValueError: a record of other rules, or one ``record_log`` refuses.
    """
    h = len(records)
    walls = np.zeros((h, 108), dtype=np.uint8)
    dealers = np.zeros(h, dtype=np.int64)
    offsets = np.zeros(h, dtype=np.int64)
    logs = np.zeros((h, MAX_LOG), dtype=np.int16)
    n_logs = np.zeros(h, dtype=np.int64)
    want = None if rules is None else rules.to_dict()
    for i, rec in enumerate(records):
        if want is not None and (not isinstance(rec, dict) or rec.get("rules") != want):
            raise ValueError(f"record {first + i} is not a record of these rules")
        try:
            walls[i], dealers[i], offsets[i], log = record_log(rec)
        except ValueError as exc:
            raise ValueError(f"record {first + i}: {exc}") from None
        logs[i, : log.size] = log
        n_logs[i] = log.size
    return walls, dealers, offsets, logs, n_logs


def _empty(h: int) -> Events:
    e = K.MAX_EVENTS
    return Events(
        feats=np.zeros((h, e, 27, 4, K.NF), dtype=np.float32),
        probs=np.zeros((h, e, 27), dtype=np.float32),
        actual=np.zeros((h, e), dtype=np.int64),
        drawer=np.full((h, e), -1, dtype=np.int64),
        scores_at=np.zeros((h, e, 4), dtype=np.int64),
        final=np.zeros((h, 4), dtype=np.int64),
        n_events=np.zeros(h, dtype=np.int64),
        dealer=np.zeros(h, dtype=np.int64),
        tiles=np.zeros((h, e, 4, 3, 27), dtype=np.uint8),
        wallc=np.zeros((h, e, 27), dtype=np.uint8),
        voids=np.full((h, e, 4), -1, dtype=np.int8),
    )


def extract(records: Sequence[Any], rules: RuleConfig, *, first: int = 0) -> Events:
    """Replay ``records`` (all of ``rules``) and return their chance events (see ``Events``).

    Args:
        records: game records of finished hands.
        rules: their ruleset (each record's own ``rules`` must equal it).
        first: the index of ``records[0]`` in the caller's list (for messages).

    Raises:
        ValueError: a record of other rules, one that cannot be replayed, or one that is
            not a finished hand.
    """
    h = len(records)
    out = _empty(h)
    if h == 0:
        return out
    want = rules.to_dict()
    for i, rec in enumerate(records):  # said in the value model's words
        if not isinstance(rec, dict) or rec.get("rules") != want:
            raise ValueError(f"record {first + i} is not a record of the value model's rules")
    walls, dealers, offsets, logs, n_logs = record_logs(records, first=first)
    t = get_tables()
    states = np.zeros(h, dtype=STATE_DTYPE)
    status = np.zeros(h, dtype=np.int64)
    R.replay_events(
        states, walls, dealers, offsets, logs, n_logs, kernel_rules(rules), t["FLAGS"], t["WAITS"],
        t["DIST"], out.feats, out.probs, out.actual, out.drawer, out.scores_at, out.final, status,
        out.n_events, out.tiles, out.wallc, out.voids,
    )  # fmt: skip
    bad = np.flatnonzero(status != R.OK)
    if bad.size:
        why = {R.BAD_ACTION: "an action is not legal where it stands",
               R.NOT_OVER: "its actions stop before the hand ends",
               R.TOO_MANY: "more chance events than a hand can have"}  # fmt: skip
        i = int(bad[0])
        raise ValueError(f"record {first + i} cannot be replayed: {why[int(status[i])]}")
    for i, rec in enumerate(records):  # the replay must end where the record says it did
        scores = (
            rec.get("result", {}).get("scores") if isinstance(rec.get("result"), dict) else None
        )
        if not isinstance(scores, list) or [int(x) for x in out.final[i]] != scores:
            raise ValueError(f"record {first + i}: its result's scores are not its replay's")
    out.dealer[:] = dealers
    return out
