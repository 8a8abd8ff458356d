"""The replay viewer: snapshots, the CLI, escaping and agents (the browser tests are in ``test_viewer_browser.py``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from viewer_support import GOLDEN, ROOT, _load, _Probs, expected_steps

from sichuan_env import Game
from sichuan_env.viewer import (
    AgentAnnotator,
    embed_json,
    load_agent,
    render_page,
    replay_snapshots,
)
from sichuan_env.viewer.__main__ import main as viewer_main


# ------------------------------------------------------------------------ snapshots (no browser)
def test_snapshots_have_one_step_per_decision_and_the_result():
    rec = _load(GOLDEN[0])
    snaps = replay_snapshots(rec)
    steps = snaps["steps"]
    assert len(steps) == len(rec["actions"]) + 1
    assert steps[0]["last"] is None and steps[-1]["next"] is None
    for k, (seat, action) in enumerate(rec["actions"]):
        assert steps[k]["next"]["seat"] == seat and steps[k]["next"]["chosen"] == action
        assert action in steps[k]["next"]["legal"]
        assert steps[k + 1]["last"] == {"seat": seat, "action": action}
    assert steps[-1]["result"] == Game.from_record(rec).result()


def test_tsumogiri_marks_agree_with_the_hands(kong_record):
    # every discard is marked 摸切 exactly when it is the tile the seat's hand gained by a draw
    for rec in [*(_load(p) for p in GOLDEN), kong_record]:
        exp = expected_steps(rec)[-1]
        got = replay_snapshots(rec)["steps"][-1]
        marks = []
        for s in range(4):
            fates = {"live": "", "melded": "m", "won_on": "w", "robbed": "r"}
            want = [[t, fates[f], m] for t, f, m in exp["seats"][s]["river"]]
            assert got["seats"][s]["river"] == want, (rec["rules"], s)
            marks += [m for _, _, m in want]
        assert 1 in marks and 0 in marks  # both kinds happen in every hand


def test_melds_carry_their_source_and_kongs_are_events(kong_record, robbed_record):
    snaps = replay_snapshots(kong_record)["steps"]
    melds = [m for seat in snaps[-1]["seats"] for m in seat["melds"]]
    assert {m["kind"] for m in melds} == {"pong", "kong", "concealed_kong"}
    assert all((m["from"] is None) == (m["kind"] == "concealed_kong") for m in melds)
    assert any(m["added"] for m in melds)
    kongs = [k for k, s in enumerate(snaps) if s["event"] == "kong"]
    assert kongs and all("kong" in snaps[k]["last"]["action"] for k in kongs)
    robbed = replay_snapshots(robbed_record)["steps"][-1]
    assert any(fate == "r" and mo == -1 for s in robbed["seats"] for _, fate, mo in s["river"])


def test_partial_record_has_no_result():
    rec = _load(GOLDEN[0])
    rec = {k: v for k, v in rec.items() if k != "result"}
    rec["actions"] = rec["actions"][:20]
    steps = replay_snapshots(rec)["steps"]
    assert len(steps) == 21 and "result" not in steps[-1]
    assert steps[-1]["next"] is None


# ------------------------------------------------------------------------------- the page itself
def _embedded(page: str) -> dict:
    m = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.DOTALL
    )
    assert m is not None
    return json.loads(m.group(1))


def test_page_is_self_contained_and_offline():
    page = render_page(_load(GOLDEN[0]), title="g")
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page, re.IGNORECASE)
    assert "@import" not in page and "<link" not in page and "url(" not in page
    assert "{{" not in page.split('id="replay-data"')[0]


def test_record_strings_cannot_break_out_of_the_script_element():
    rec = _load(GOLDEN[0])
    evil = "</script><script>window.pwned=1</script><!-- & \u2028 \u2029 </SCRIPT >"
    rec = {**rec, "comment": evil, "actions": [list(a) for a in rec["actions"]]}
    page = render_page(rec, title=evil)
    assert page.count("<script") == 2 and page.lower().count("</script") == 2
    assert "pwned=1</" not in page
    assert _embedded(page)["record"]["comment"] == evil
    assert "<title>&lt;/script&gt;" in page
    text = embed_json({"s": evil})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"s": evil}


def test_bad_records_are_value_errors():
    rec = _load(GOLDEN[0])
    bad = [
        [],
        {},
        {**rec, "actions": [[0, "discard 5z"]]},
        {**rec, "actions": [[3, rec["actions"][0][1]], *rec["actions"][1:]]},
        {**rec, "actions": 5},
        {**rec, "wall": rec["wall"][:-1]},
        {**rec, "rules": "xuezhan"},
        {**rec, "dealer": "zero"},
        {**rec, "result": {"scores": [9, 9, 9, -27], "wins": []}},
    ]
    for r in bad:
        with pytest.raises(ValueError):
            render_page(r)
    with pytest.raises(ValueError, match="seat"):
        render_page(rec, seat=4)


# ----------------------------------------------------------------------------------- agents
def test_agent_annotations_top3_and_act_only(kong_record):
    agent = _Probs()
    steps = replay_snapshots(kong_record, agent_hook=AgentAnnotator(agent, [1, 2], "probs"))
    steps = steps["steps"]
    annotated = [s for s in steps if s.get("agent")]
    assert annotated and agent.calls == len(annotated)
    for s in steps[:-1]:
        ag = s["agent"]
        assert (ag is not None) == (s["next"]["seat"] in (1, 2))
        if ag is None:
            continue
        probs = [p for _, p in ag["top"]]
        assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1.0001
        assert len(ag["top"]) == min(3, len(s["next"]["legal"])) or ag["first_pick"]
        if not ag["first_pick"]:
            assert all(a in s["next"]["legal"] for a, _ in ag["top"])
    heuristic = AgentAnnotator(load_agent("heuristic"), [0], "heuristic")
    assert not heuristic.describe()["exact"]
    steps = replay_snapshots(kong_record, agent_hook=heuristic)["steps"]
    mine = [s for s in steps if s.get("agent")]
    assert mine and all(
        len(s["agent"]["top"]) == 1 and s["agent"]["top"][0][1] == 1.0 for s in mine
    )
    assert any(s["agent"]["agrees"] for s in mine)
    with pytest.raises(ValueError, match="unknown agent"):
        load_agent("no-such-agent")
    with pytest.raises(ValueError, match="seats"):
        AgentAnnotator(agent, [4])
    future = type("Future", (_Probs,), {"obs_version": 999})()
    with pytest.raises(ValueError, match="observation version"):
        AgentAnnotator(future, [0])


# --------------------------------------------------------------------------------------- CLI
def test_cli_writes_a_page_and_an_index(tmp_path, capsys):
    out = tmp_path / "one.html"
    assert viewer_main([str(GOLDEN[0]), "-o", str(out), "--seat", "2"]) == 0
    assert _embedded(out.read_text(encoding="utf-8"))["view"] == 2
    folder = tmp_path / "recs"
    folder.mkdir()
    for p in GOLDEN[:3]:
        shutil.copy(p, folder / p.name)
    (folder / "broken.json").write_text('{"format": 1}', encoding="utf-8")
    hostile = '<img src=x onerror="alert(1)"> & co.json'
    shutil.copy(GOLDEN[0], folder / hostile)
    site = tmp_path / "site"
    capsys.readouterr()
    assert viewer_main([str(folder), "-o", str(site), "--agent", "heuristic"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "broken.json" in err and "Traceback" not in err
    index = (site / "index.html").read_text(encoding="utf-8")
    for p in GOLDEN[:3]:
        assert (site / p.with_suffix(".html").name).is_file()
        assert f'href="{p.with_suffix(".html").name}"' in index
    assert "broken" not in index and "<img" not in index
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; co.json</a>" in index
    assert (site / hostile.replace(".json", ".html")).is_file()
    assert "<img" not in (site / hostile.replace(".json", ".html")).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "args", "code", "needle"),
    [
        ("{not json", [], 1, "not JSON"),
        ("[1, 2]", [], 1, "JSON object"),
        ('{"format": "sichuan-mahjong-record/1"}', [], 1, "rec.json: "),
        ('{"format": "sichuan-mahjong-record/1", "rules": 1}', [], 1, "rec.json: "),
        (None, [], 1, "cannot read"),
        ("GOLDEN", ["--seat", "7"], 2, "--seat"),
        ("GOLDEN", ["--agent", "nobody"], 2, "--agent"),
        ("GOLDEN", ["--agent-seats", "1"], 2, "--agent"),
        ("GOLDEN", ["-o", "SELF"], 2, "overwrite"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, content, args, code, needle):
    path = tmp_path / "rec.json"
    if content == "GOLDEN":
        shutil.copy(GOLDEN[0], path)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    argv = [str(path), "-o", str(tmp_path / "o.html"), *args]
    argv = [str(path) if a == "SELF" else a for a in argv]
    if code == 2:
        with pytest.raises(SystemExit) as exc:
            viewer_main(argv)
        assert exc.value.code == 2
    else:
        assert viewer_main(argv) == 1
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    if code == 1:
        assert err.strip().count("\n") == 0
    assert not (tmp_path / "o.html").exists()


def test_cli_process_exit_status(tmp_path):
    path = tmp_path / "rec.json"
    path.write_text('{"format": "sichuan-mahjong-record/1", "wall": []}', encoding="utf-8")
    run = lambda *a: subprocess.run(
        [sys.executable, "-m", "sichuan_env.viewer", *a],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    bad = run(str(path))
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1, bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "rec.html").exists()


def test_illegal_action_names_its_index(tmp_path, capsys):
    rec = _load(GOLDEN[0])
    legal = replay_snapshots(rec)["steps"][5]["next"]["legal"]
    illegal = next(
        f"discard {t}" for t in ("1m", "9m", "1p", "9p", "1s", "9s") if f"discard {t}" not in legal
    )
    rec["actions"][5] = [rec["actions"][5][0], illegal]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    assert viewer_main([str(path), "-o", str(tmp_path / "bad.html")]) == 1
    assert "action 5" in capsys.readouterr().err
