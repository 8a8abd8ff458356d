"""Game records are never trusted: schema validation, full result comparison, mutated records."""

import copy
import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sichuan_env import Game, IllegalActionError, RuleConfig
from sichuan_env.engine.records import END_NAMES, record_schema, validate_record
from sichuan_env.kernels.layout import BASE_NAMES, EXTRA_NAMES

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "tests" / "data" / "golden").glob("*.json"))
RECORDS = {p.stem: json.loads(p.read_text()) for p in GOLDEN}


def _record(name="xuezhan-2"):
    return copy.deepcopy(RECORDS[name])


def test_the_published_schema_is_the_one_the_package_uses():
    published = json.loads((ROOT / "docs" / "record.schema.json").read_text())
    assert published == record_schema()
    jsonschema.Draft202012Validator.check_schema(published)


def test_schema_rules_are_the_rule_config_fields():
    fields = {f.name for f in dataclasses.fields(RuleConfig) if f.init}
    assert set(record_schema()["properties"]["rules"]["properties"]) == fields


def test_schema_names_are_the_engine_tables():
    """A new base pattern, extra or end reason needs its name in the schema too: this test says so."""
    win = record_schema()["$defs"]["win"]["properties"]
    assert tuple(win["base"]["enum"]) == BASE_NAMES
    assert tuple(win["extras"]["items"]["enum"]) == EXTRA_NAMES
    assert set(record_schema()["properties"]["result"]["properties"]["end"]["enum"]) == set(
        END_NAMES.values()
    )


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_golden_record_validates_and_replays(name):
    validate_record(RECORDS[name])
    assert Game.from_record(RECORDS[name]).record() == RECORDS[name]


def _set(path, value):
    def mutate(rec):
        target = rec
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path):
    def mutate(rec):
        target = rec
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


MALFORMED = [
    ("actions={}", _set(["actions"], {}), "actions"),
    ("actions=5", _set(["actions"], 5), "actions"),
    ("wall null", _set(["wall"], None), "wall"),
    ("wall short", _set(["wall"], list(range(27)) * 3), "wall"),
    ("wall tile 27", _set(["wall", 0], 27), "wall"),
    ("wall float", _set(["wall", 0], 1.5), "wall"),
    ("seat as a string", _set(["actions", 0, 0], "1"), "actions"),
    ("seat 4", _set(["actions", 0, 0], 4), "actions"),
    ("action entry of 3", _set(["actions", 0], [0, "void s", 1]), "actions"),
    ("unknown action", _set(["actions", 0, 1], "chow 1m"), "actions"),
    ("rules null", _set(["rules"], None), "rules"),
    ("unknown rule", _set(["rules", "fan_limit"], 3), "rules"),
    ("rule of the wrong type", _set(["rules", "haidi"], 1), "rules"),
    ("dealer bool", _set(["dealer"], True), "dealer"),
    ("dealer 1.0", _set(["dealer"], 1.0), "dealer"),
    ("exchange offset bool", _set(["exchange_offset"], True), "exchange_offset"),
    ("no format", _delete(["format"]), "format"),
    ("other format", _set(["format"], "tenhou/6"), "format"),
    ("no wall", _delete(["wall"]), "wall"),
    ("result scores of 3", _set(["result", "scores"], [0, 0, 0]), "result"),
    ("win base unknown", _set(["result", "wins", 0, "base"], "kokushi"), "result"),
    ("not a dict", lambda rec: rec.clear() or rec.update({"x": 1}), "format"),
]


@pytest.mark.parametrize(("case", "mutate", "where"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_records_are_rejected_by_the_schema(case, mutate, where):
    rec = _record()
    mutate(rec)
    with pytest.raises(ValueError, match=where):
        Game.from_record(rec)


@pytest.mark.parametrize("bad", [None, [], "record", 5, {"format": None}])
def test_non_records(bad):
    with pytest.raises(ValueError, match="not a valid"):
        Game.from_record(bad)


@pytest.mark.parametrize("key", ["scores", "wins", "payments", "next_dealer", "end", "settlement"])
def test_every_result_field_is_compared(key):
    candidates = [r for r in RECORDS.values() if r["result"].get(key) not in (None, [])]
    assert candidates, f"no golden record has result[{key!r}]"
    rec = copy.deepcopy(candidates[0])
    value = rec["result"][key]
    if key == "scores":
        value[0] += 1
        value[1] -= 1
    elif key == "wins":
        value[0]["fan"] += 1
    elif key == "payments":
        value[0]["deltas"] = [-d for d in value[0]["deltas"]]
    elif key == "next_dealer":
        rec["result"][key] = (value + 1) % 4
    elif key == "end":
        rec["result"][key] = "three_won" if value != "three_won" else "wall_empty"
    else:
        value["deltas"][0] += 1
        value["deltas"][1] -= 1
    with pytest.raises(ValueError, match=f"result\\[{key!r}\\] differs"):
        Game.from_record(rec)
    assert Game.from_record(rec, check_result=False).is_over()


def test_actions_cut_short_are_checked_against_the_result():
    rec = _record()
    rec["actions"] = rec["actions"][:-3]
    with pytest.raises(ValueError, match=r"differs|is not over"):
        Game.from_record(rec)
    # a record taken mid-hand, with its own mid-hand result, replays
    game = Game.from_record(rec, check_result=False)
    assert not game.is_over()
    assert Game.from_record(game.record()).record() == game.record()


def test_a_seat_that_is_not_to_act_is_named():
    rec = _record()
    seat = rec["actions"][0][0]
    rec["actions"][0][0] = (seat + 1) % 4
    with pytest.raises(IllegalActionError, match=f"seat {(seat + 1) % 4} acted but seat {seat}"):
        Game.from_record(rec)


def test_actions_after_the_end_are_rejected():
    rec = _record()
    rec["actions"].append([0, "pass"])
    with pytest.raises(IllegalActionError, match="already over"):
        Game.from_record(rec)


def test_deeply_nested_json_is_a_clear_error():
    nested: object = []
    for _ in range(5000):
        nested = [nested]
    rec = _record()
    rec["actions"] = nested
    with pytest.raises(ValueError, match="not a valid"):
        Game.from_record(rec)


# ---------------------------------------------------------------- fuzzing: mutated records

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-2, 110),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["hu", "pass", "pong", "discard 5p", "void m", "added_kong 1s"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3)
    ),
    max_leaves=6,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_records_are_rejected_or_replay_consistently(data):
    name = data.draw(st.sampled_from(sorted(RECORDS)))
    rec = copy.deepcopy(RECORDS[name])
    paths = [p for p in _paths(rec) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        target = rec
        try:
            for key in path[:-1]:
                target = target[key]
            op = data.draw(st.sampled_from(["set", "delete", "swap"]))
            if op == "delete" and isinstance(target, dict):
                del target[path[-1]]
            elif op == "swap" and isinstance(target, list) and len(target) > 1:
                j = data.draw(st.integers(0, len(target) - 1))
                target[path[-1]], target[j] = target[j], target[path[-1]]
            else:
                target[path[-1]] = data.draw(VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    try:
        game = Game.from_record(rec)
    except (ValueError, IllegalActionError):
        return
    # accepted: then the record is exactly what the engine replays
    got = game.record()
    for key in ("rules", "dealer", "wall", "actions"):
        assert got[key] == rec[key] or (
            key == "rules" and RuleConfig.from_dict(rec[key]) == game.rules
        )
    for key, value in rec.get("result", {}).items():
        if key in got["result"]:
            assert got["result"][key] == value
