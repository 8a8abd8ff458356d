"""Terminal play and replay: scripted input, bad input, bad files, the installed scripts."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sichuan_env.agents import RandomAgent

from sichuan_env import RuleConfig
from sichuan_env.play import ask, make_bots, play
from sichuan_env.replay import main as replay_main

ROOT = Path(__file__).resolve().parents[1]
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
    lines = ["nonsense", "?", "99", "", "²", "٣"]
    assert play(2, RuleConfig(exchange_three=True), 9, _reader(lines)) == 0
    out = capsys.readouterr().out
    assert "'nonsense' is not legal now" in out and "The hand is over." in out and "scores:" in out
    assert "'²' is not legal now" in out and "'٣' is not legal now" in out


def test_play_numbers_the_actions_from_the_first_prompt_and_sets_the_draw_apart(capsys):
    assert play(0, RuleConfig(), 3, _reader(["0"] * 6 + ["q"])) == 1
    out = capsys.readouterr().out
    first = out[: out.index("seat 0 > ") if "seat 0 > " in out else len(out)]
    assert "legal: [0] " in first  # before any mistake or "?"
    drew = re.findall(r"seat 0 \(      me\) void \w score [+-]\d+  (\S+) \+ drew (\w\w)", out)
    assert drew, out  # the tile drawn this turn is shown apart from the hand
    for hand, _ in drew:  # the rest of a turn's 14 - 3k tiles, then the one drawn
        assert (sum(c.isdigit() for c in hand) + 1) % 3 == 2


def test_quit_and_end_of_input(capsys):
    assert play(0, RuleConfig(), 1, _reader(["q"])) == 1

    def raiser(exc):
        def read(prompt):
            raise exc

        return read

    for exc in (EOFError(), RuntimeError("input(): lost sys.stdin"), OSError(9, "bad fd")):
        assert play(0, RuleConfig(), 1, raiser(exc)) == 1


def test_ask_skips_undecodable_lines(capsys):
    lines = iter([UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "1"])

    def read(prompt):
        x = next(lines)
        if isinstance(x, Exception):
            raise x
        return x

    assert ask("> ", ["pass", "pong"], read) == "pong"
    assert "not UTF-8" in capsys.readouterr().out


def test_play_rejects_bad_arguments():
    with pytest.raises(ValueError, match="seat"):
        play(4, RuleConfig(), 1)
    with pytest.raises(ValueError, match="seed"):
        play(0, RuleConfig(), -1)
    with pytest.raises(ValueError, match="3 agents"):
        play(0, RuleConfig(), 1, opponents=[RandomAgent(0)])
    with pytest.raises(ValueError, match="obs_version"):
        play(0, RuleConfig(), 1, opponents=[object()] * 3)
    with pytest.raises(ValueError, match="1 or 3"):
        make_bots(["random", "random"])
    assert [b.name for b in make_bots(["random"])] == ["random"] * 3


def test_play_is_the_same_hand_for_the_same_seed(capsys):
    outs = []
    for _ in range(2):
        play(3, RuleConfig(), 11, _reader([]), opponents=make_bots(["random"], 11))
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "The hand is over." in outs[0]


def test_replay_all(capsys):
    assert replay_main([str(GOLDEN[0]), "--all"]) == 0
    out = capsys.readouterr().out
    record = json.loads(GOLDEN[0].read_text())
    assert f"result: {record['result']['scores']}" in out


def test_replay_bad_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert replay_main([str(bad), "--all"]) == 1
    bad.write_text(json.dumps({"format": "other"}))
    assert replay_main([str(bad), "--all"]) == 1
    assert replay_main([str(tmp_path / "missing.json"), "--all"]) == 1
    assert replay_main([str(tmp_path), "--all"]) == 1
    err = capsys.readouterr().err
    assert "not JSON" in err and f"{bad}: " in err and "cannot read" in err


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


def test_sichuan_env_never_imports_agents():
    # the layering: only the CLI entry of play imports agents, lazily
    code = (
        "import sys, sichuan_env, sichuan_env.play, sichuan_env.replay\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'agents'], 'agents imported'\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr


def test_console_scripts_point_at_entry_points():
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    scripts = dict(re.findall(r'^([\w-]+) = "([\w.:]+)"$', section, flags=re.MULTILINE))
    assert set(scripts) == {
        "sichuan-play",
        "sichuan-replay",
        "sichuan-eval",
        "sichuan-ladder",
        "sichuan-viewer",
    }
    for target in scripts.values():
        module, _, attr = target.partition(":")
        fn = getattr(__import__(module, fromlist=[attr]), attr)
        assert callable(fn)


def test_one_version_everywhere():
    from importlib.metadata import version

    import sichuan_env

    declared = re.search(
        r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE
    )
    assert declared and sichuan_env.__version__ == declared.group(1) == version("sichuan-env")
