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
from sichuan_env.viewer.build import asset


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


LATIN = frozenset(map(chr, [9, 10, 13, *range(0x20, 0x7F), *range(0xA0, 0x100)]))
"""What every Latin font draws: printable ASCII and Latin-1 (the page uses ``·`` and ``§``)."""


def _not_latin(text: str) -> set[str]:
    return set(text) - LATIN


def test_visible_text_needs_no_cjk_or_symbol_font():
    """No glyph outside Latin-1 where text is drawn: controls are SVG, fate marks CSS shapes.

    The Chinese terms (摸切, 流局, ...) are spelled in pinyin in the text and kept only as
    tooltips: in ``title`` attributes of the HTML, and in page.js's ``ZH`` table, whose every
    use sets a ``.title``. Tile glyphs (U+1F007...) are code points computed at run time and
    shown only when ``glyphsWork()`` finds a font that draws them.
    """
    page = render_page(_load(GOLDEN[0]), title="g")
    html_part = re.sub(
        r"<script\b.*?</script>|<style>.*?</style>|<!--.*?-->", "", page, flags=re.DOTALL
    )
    html_part = re.sub(r'\btitle="[^"]*"', "", html_part)
    assert not _not_latin(html_part), _not_latin(html_part)
    assert 'title="摸切"' in page and "mo qie" in page  # the term, spelled and as a tooltip
    assert "<svg" in page.split("<main")[0]  # the step controls
    css = re.sub(r"/\*.*?\*/", "", asset("page.css"), flags=re.DOTALL)
    assert not _not_latin(css), _not_latin(css)
    js_lines = asset("page.js").splitlines()
    zh = [line for line in js_lines if line.lstrip().startswith("const ZH = ")]
    assert len(zh) == 1 and _not_latin(zh[0])
    for line in js_lines:
        if line is zh[0]:
            continue
        assert not _not_latin(line), line
        if re.search(r"\bZH\b", line):
            assert ".title = " in line, line  # the Chinese only ever becomes a tooltip


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


# ------------------------------------------------------------- hostile files: input and output
def test_a_page_that_cannot_be_written_leaves_the_old_page_byte_identical(tmp_path, capsys):
    out = tmp_path / "page.html"
    assert viewer_main([str(GOLDEN[0]), "-o", str(out)]) == 0
    before = out.read_bytes()
    rec = {**_load(GOLDEN[0]), "note": "\ud800"}  # a lone surrogate: valid JSON, no UTF-8
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec), encoding="ascii")
    capsys.readouterr()
    assert viewer_main([str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "not valid Unicode" in err and err.count("\n") == 1 and "Traceback" not in err
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "page.html"]  # no temp file


def test_a_new_page_gets_the_usual_permissions(tmp_path):
    out = tmp_path / "page.html"
    umask = os.umask(0o022)
    try:
        assert viewer_main([str(GOLDEN[0]), "-o", str(out)]) == 0
    finally:
        os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
    out.chmod(0o640)
    assert viewer_main([str(GOLDEN[0]), "-o", str(out)]) == 0
    assert out.stat().st_mode & 0o777 == 0o640  # a replaced page keeps its mode


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_only_regular_files_are_read_and_quickly(tmp_path):
    """/dev/zero and a FIFO with no writer (each would read forever) are refused at once."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    cases = {"fifo": ([str(fifo)], "a FIFO"), "dir-fifo": ([str(tmp_path)], "a FIFO")}
    if os.path.exists("/dev/zero"):
        cases["zero"] = (["/dev/zero"], "a character device")
    shutil.copy(GOLDEN[0], tmp_path / "good.json")
    procs = {
        k: subprocess.Popen(
            [sys.executable, "-m", "sichuan_env.viewer", *argv, "-o", str(tmp_path / f"{k}.out")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for k, (argv, _) in cases.items()
    }
    for k, proc in procs.items():
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"{k}: still reading after 120 s")
        assert proc.returncode == 1, (k, proc.returncode, err)
        assert cases[k][1] in err and "Traceback" not in err, (k, err)
        assert err.count("\n") == 1, (k, err)
    assert not (tmp_path / "fifo.out").exists() and not (tmp_path / "zero.out").exists()
    site = tmp_path / "dir-fifo.out"  # the folder's good record still got its page
    assert (site / "good.html").is_file() and not (site / "fifo.html").exists()
    assert 'href="good.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_records_are_read_up_to_a_bound(tmp_path, capsys, monkeypatch):
    import sichuan_env.viewer.sources as viewer_sources

    monkeypatch.setattr(viewer_sources, "MAX_BYTES", 1 << 20)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"pad": "x" * (2 << 20)}))
    assert viewer_main([str(big), "-o", str(tmp_path / "big.html")]) == 1
    err = capsys.readouterr().err
    assert "larger than 1 MB" in err and err.count("\n") == 1
    assert not (tmp_path / "big.html").exists()


def test_no_page_is_written_over_a_device_or_a_fifo(tmp_path, capsys):
    targets = [tmp_path]  # a directory
    if os.path.exists("/dev/null"):
        targets.append("/dev/null")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "out.fifo")
        targets.append(tmp_path / "out.fifo")
    for target in targets:
        with pytest.raises(SystemExit) as exc:
            viewer_main([str(GOLDEN[0]), "-o", str(target)])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "not a page to replace" in err and "Traceback" not in err, err
    assert os.path.isdir(tmp_path) and (
        not hasattr(os, "mkfifo") or (tmp_path / "out.fifo").is_fifo()
    )


def test_a_record_named_index_gets_its_own_page(tmp_path, capsys):
    folder = tmp_path / "recs"
    folder.mkdir()
    shutil.copy(GOLDEN[0], folder / "index.json")
    shutil.copy(GOLDEN[1], folder / "INDEX-1.json")  # sorted first: takes index-1 (in any case)
    shutil.copy(GOLDEN[2], folder / "other.json")
    site = tmp_path / "site"
    assert viewer_main([str(folder), "-o", str(site)]) == 0
    assert "wrote" in capsys.readouterr().out
    index = (site / "index.html").read_text(encoding="utf-8")
    assert '<table class="index">' in index and 'id="replay-data"' not in index
    assert '<a href="INDEX-1.html">INDEX-1.json</a>' in index
    assert '<a href="index-2.html">index.json</a>' in index
    assert '<a href="other.html">other.json</a>' in index
    names = sorted(p.name for p in site.iterdir())
    assert names == ["INDEX-1.html", "index-2.html", "index.html", "other.html"]
    assert _embedded((site / "index-2.html").read_text(encoding="utf-8"))["title"] == "index.json"


def test_the_viewer_shows_progress_and_limit_bounds_the_pages(tmp_path, capsys, monkeypatch):
    import sichuan_env.viewer.__main__ as viewer_cli

    monkeypatch.setattr(viewer_cli, "_on_a_terminal", lambda: True)
    lines = tmp_path / "records.jsonl"
    lines.write_text("".join(json.dumps(_load(g)) + "\n" for g in GOLDEN[:3]))
    site = tmp_path / "pages"
    assert viewer_main([str(lines), "-o", str(site), "--limit", "2"]) == 0
    out, err = capsys.readouterr()
    assert "pages" in err and "2/2" in err  # the progress bar, on stderr
    assert f"wrote {site / 'index.html'} and 2 of 2 pages" in out
    assert sorted(p.name for p in site.iterdir()) == [
        "index.html", "records-line1.html", "records-line2.html"
    ]  # fmt: skip
    assert viewer_main([str(lines), "-o", str(tmp_path / "quiet"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
