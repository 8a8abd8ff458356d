"""Terminal play and replay: scripted input, bad input, bad files."""

import json
import subprocess
import sys
from pathlib import Path

from sichuan_env import RuleConfig
from sichuan_env.play import play
from sichuan_env.replay import main as replay_main

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.json"))


def _reader(lines):
    it = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            return "0"  # then always the first legal action

    return read


def test_play_a_whole_hand_with_bad_input(capsys):
    assert play(2, RuleConfig(exchange_three=True), 9, _reader(["nonsense", "?", "99", ""])) == 0
    out = capsys.readouterr().out
    assert "'nonsense' is not legal now" in out and "The hand is over." in out and "scores:" in out


def test_quit_and_end_of_input(capsys):
    assert play(0, RuleConfig(), 1, _reader(["q"])) == 1

    def eof(prompt):
        raise EOFError

    assert play(0, RuleConfig(), 1, eof) == 1


def test_replay_all(capsys):
    assert replay_main([str(GOLDEN[0]), "--all"]) == 0
    out = capsys.readouterr().out
    record = json.loads(GOLDEN[0].read_text())
    assert f"result: {record['result']['scores']}" in out


def test_replay_bad_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert replay_main([str(bad), "--all"]) == 2
    bad.write_text(json.dumps({"format": "other"}))
    assert replay_main([str(bad), "--all"]) == 2
    assert replay_main([str(tmp_path / "missing.json"), "--all"]) == 2


def test_play_module_runs_from_the_shell():
    out = subprocess.run(
        [sys.executable, "-m", "sichuan_env.play", "--seed", "3", "--seat", "1"],
        input="?\n" + "0\n" * 400,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0 and "The hand is over." in out.stdout
