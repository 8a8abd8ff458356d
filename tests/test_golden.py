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
