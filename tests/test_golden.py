"""Golden records replay to exactly their recorded results (regenerate: tests/data/make_golden.py)."""

import json
from pathlib import Path

import pytest

from sichuan_env import Game, IllegalActionError, RuleConfig

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.json"))


def test_golden_files_exist():
    assert len(GOLDEN) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_replay(path):
    record = json.loads(path.read_text())
    game = Game.from_record(record)
    assert game.is_over()
    assert game.result() == record["result"]
    assert game.record() == record
    assert RuleConfig(**record["rules"]) == game.rules


def test_tampered_record_names_the_first_illegal_action():
    record = json.loads(GOLDEN[0].read_text())
    k = next(i for i, (_, a) in enumerate(record["actions"]) if a.startswith("discard"))
    record["actions"][k][1] = "hu"
    with pytest.raises(IllegalActionError) as err:
        Game.from_record(record)
    assert err.value.index == k
    assert f"action {k}:" in str(err.value)


def test_changed_result_is_detected():
    record = json.loads(GOLDEN[0].read_text())
    record["result"]["scores"][0] += 1
    with pytest.raises(ValueError, match="differs"):
        Game.from_record(record)


HAND_WORKED = sorted((Path(__file__).parent / "data" / "hand_worked").glob("*.json"))


def test_hand_worked_records_exist_and_match_their_builder():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_hand_worked", Path(__file__).parent / "data" / "make_hand_worked.py"
    )
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    assert {p.stem for p in HAND_WORKED} == set(builder.CASES) and len(HAND_WORKED) >= 4
    for path in HAND_WORKED:
        assert json.loads(path.read_text()) == builder.record(builder.CASES[path.stem])


@pytest.mark.parametrize("path", HAND_WORKED, ids=lambda p: p.stem)
def test_hand_worked_results(path):
    """Results typed in by hand from docs/rules.md: every field must equal the engine's replay."""
    record = json.loads(path.read_text())
    game = Game.from_record(record)  # compares scores, wins, payments, end, next_dealer
    got = game.result()
    for key, value in record["result"].items():
        assert got[key] == value, key
