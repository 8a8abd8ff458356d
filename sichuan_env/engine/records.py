"""Game records (docs/rules.md §10): building them from a hand, and replaying them with full checks.

A record is plain JSON. ``RECORD_SCHEMA`` (``sichuan_env/data/record.schema.json``,
published as ``docs/record.schema.json``) fixes its shape; ``replay`` trusts
nothing in it: the record is validated against the schema first, every
action is replayed through the engine, and every field of the record's
``result`` must equal the replay's.

The action strings and the payment ledger are not kept while a hand is
played: ``history`` rebuilds them from the engine's decision log by
replaying it on a copy of the deal.

This module reads a hand through the ``Hand`` protocol and never imports
``game.py`` (``Game`` imports this module and satisfies the protocol): the
two do not import each other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol, TypeVar

import jsonschema
import numpy as np

from ..kernels.layout import BASE_NAMES, EXTRA_NAMES
from ..rules.config import RuleConfig
from ..tiles import tile_name
from .actions import SELF_KONG, action_to_str
from .errors import IllegalActionError
from .state import END_FIRST_WIN, END_THREE_WON, END_WALL, MAX_LOG, PH_EXCHANGE


class Hand(Protocol):
    """What records read of a hand and replay through (``sichuan_env.engine.game.Game`` is one).

    ``type(hand)(rules, wall=..., dealer=..., exchange_offset=...)`` deals the same
    hand again (``history`` replays the log on such a copy).
    """

    rules: RuleConfig
    _st: np.ndarray

    def is_over(self) -> bool: ...  # noqa: D102
    def to_act(self) -> int | None: ...  # noqa: D102
    def legal(self) -> list[str]: ...  # noqa: D102
    def step(self, action: str) -> None: ...  # noqa: D102
    def result(self) -> dict[str, Any]: ...  # noqa: D102
    def _apply(self, action: int) -> None: ...


H = TypeVar("H", bound=Hand)

RECORD_FORMAT = "sichuan-mahjong-record/1"
END_NAMES = {END_THREE_WON: "three_won", END_WALL: "wall_empty", END_FIRST_WIN: "first_win"}


@lru_cache(maxsize=1)
def record_schema() -> dict[str, Any]:
    """The JSON Schema of a game record (draft 2020-12)."""
    text = resources.files("sichuan_env").joinpath("data/record.schema.json").read_text("utf-8")
    return json.loads(text)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with its local ``#/$defs/...`` references replaced by their targets."""
    if isinstance(node, dict):
        if set(node) == {"$ref"} and node["$ref"].startswith("#/$defs/"):
            return _inline(defs[node["$ref"].removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = record_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(_inline(schema, schema.get("$defs", {})))  # no $ref lookups: 2-3x faster


def validate_record(record: object) -> None:
    """Check a record against ``record_schema()``.

    Raises:
        ValueError: naming the first offending field (its JSON path) and why.
    """
    validator = _validator()
    try:
        if validator.is_valid(record):
            return
        error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    except RecursionError:
        raise ValueError(f"not a valid {RECORD_FORMAT} record: nested too deeply") from None
    if error is not None:
        where = "".join(f"[{p!r}]" for p in error.absolute_path) or "(the record itself)"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        raise ValueError(f"not a valid {RECORD_FORMAT} record: at {where}: {message}")


def history(game: Hand) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    """The record's actions and the payment ledger of ``game`` so far, rebuilt from its log.

    Raises:
        RuntimeError: the decision log overflowed (no hand of the rules comes near).
    """
    st = game._st[0]
    n = int(st["n_log"])
    if n >= MAX_LOG:
        raise RuntimeError(f"the decision log is full ({MAX_LOG}); the record is incomplete")
    offset = int(st["exchange_offset"]) if game.rules.exchange_three else None
    deal: Callable[..., Hand] = type(game)
    shadow = deal(game.rules, wall=st["wall"], dealer=int(st["dealer"]), exchange_offset=offset)
    sst = shadow._st[0]
    actions: list[list[Any]] = []
    ledger: list[dict[str, Any]] = []
    for code in st["log"][:n]:
        seat, a = divmod(int(code), 128)
        phase = int(sst["phase"])
        added = SELF_KONG <= a < SELF_KONG + 27 and sst["hands"][seat, a - SELF_KONG] < 4
        text = action_to_str(a, added=bool(added)) if phase != PH_EXCHANGE else None
        before = sst["scores"].copy()
        shadow._apply(a)
        if phase == PH_EXCHANGE:
            if int(sst["n_picks"][seat]) < 3:
                continue
            picks = sorted(int(t) for t in sst["picks"][seat])
            text = "exchange " + "".join(tile_name(t) for t in picks)
        actions.append([seat, text])
        delta = (sst["scores"] - before).tolist()
        if any(delta):
            ledger.append({"action": len(actions) - 1, "seat": seat, "move": text, "deltas": delta})
    return actions, ledger


def wins(game: Hand) -> list[dict[str, Any]]:
    """Every win so far, in the order they happened (docs/rules.md §10 fields)."""
    st = game._st[0]
    out = []
    for k in range(int(st["n_won"])):
        s = int(st["win_order"][k])
        tile = int(st["win_tile"][s])
        frm = int(st["win_from"][s])
        extras = int(st["win_extras"][s])
        out.append(
            {
                "seat": s,
                "tile": tile_name(tile) if tile >= 0 else None,
                "from": frm if frm >= 0 else None,
                "fan": int(st["win_fan"][s]),
                "points": int(st["win_points"][s]),
                "base": BASE_NAMES[int(st["win_base"][s])],
                "roots": int(st["win_roots"][s]),
                "extras": [n for i, n in enumerate(EXTRA_NAMES) if (extras >> i) & 1],
            }
        )
    return out


def result(game: Hand, ledger: list[dict[str, Any]]) -> dict[str, Any]:
    """Scores, wins, the payment ledger and, once over, the end, next dealer and 流局 settlement."""
    st = game._st[0]
    res: dict[str, Any] = {
        "scores": [int(x) for x in st["scores"]],
        "wins": wins(game),
        "payments": ledger,
    }
    if game.is_over():
        res["next_dealer"] = int(st["next_dealer"])
        res["end"] = END_NAMES[int(st["end_reason"])]
        if int(st["end_reason"]) == END_WALL:
            res["settlement"] = {
                "flower_pigs": [s for s in range(4) if st["settle_pig"][s]],
                "tenpai": [s for s in range(4) if st["settle_tenpai"][s]],
                "deltas": [int(x) for x in st["settle_delta"]],
            }
    return res


def replay(cls: Callable[..., H], record: object, *, check_result: bool = True) -> H:
    """Replay a record through the engine: ``cls`` deals (``Game``); see ``Game.from_record``."""
    validate_record(record)
    assert isinstance(record, dict)  # the schema says so
    rules = RuleConfig.from_dict(record["rules"])
    game = cls(
        rules,
        wall=record["wall"],
        dealer=record["dealer"],
        exchange_offset=record.get("exchange_offset"),
    )
    for i, (seat, action) in enumerate(record["actions"]):
        if game.is_over():
            raise IllegalActionError(f"the hand is already over at action {i}", [], index=i)
        if seat != game.to_act():
            raise IllegalActionError(
                f"seat {seat} acted but seat {game.to_act()} was to act", game.legal(), index=i
            )
        try:
            game.step(action)
        except IllegalActionError as exc:
            raise IllegalActionError(
                f"{action!r} is not legal for seat {seat}", exc.legal, index=i
            ) from None
    expected = record.get("result")
    if check_result and expected is not None:
        got = game.result()
        for key, value in expected.items():
            if key in got and got[key] != value:
                raise ValueError(
                    f"the record's result[{key!r}] differs from the replay: "
                    f"record {_short(value)}, replay {_short(got[key])}"
                )
            if key not in got and key in ("end", "next_dealer", "settlement"):
                raise ValueError(
                    f"the record's result has {key!r} but the replayed hand "
                    + ("is not over" if not game.is_over() else "has none")
                )
        for key in ("end", "next_dealer", "settlement"):
            if key in got and key not in expected and "end" in expected:
                raise ValueError(f"the record's result lacks {key!r} that the replay has")
    return game


def _short(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 300 else text[:300] + "..."
