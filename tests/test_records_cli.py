"""Game records end to end: ``sichuan-eval --records``, ``sichuan-play --record``, the viewer.

The viewer reads a record file, a folder, and a JSON Lines file (``sichuan-eval``'s
and the dataset's ``records.jsonl``), trusting nothing in them.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sichuan_env.agents.eval import cli as eval_cli

from sichuan_env import RuleConfig
from sichuan_env.play import play
from sichuan_env.viewer import __main__ as viewer_cli
from sichuan_env.viewer import sources as viewer_sources
from sichuan_env.viewer import validate_record
from sichuan_env.viewer.__main__ import main as viewer_main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.json"))
LINEUP = ["heuristic", "random", "random", "random"]


def _embedded(page: str) -> dict:
    m = re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.DOTALL
    )
    assert m, "no embedded replay data"
    return json.loads(m.group(1))


def _hrefs(index: Path) -> list[str]:
    return re.findall(r'<a href="([^"]+)">', index.read_text(encoding="utf-8"))


def _reader(lines):
    it = iter(lines)
    return lambda prompt: next(it)


def _golden_line(k: int = 0, **fields) -> str:
    record = json.loads(GOLDEN[k].read_text(encoding="utf-8"))
    return json.dumps({**fields, "record": record} if fields else record)


# ------------------------------------------------------------------ sichuan-eval --records
@pytest.fixture(scope="module")
def match(tmp_path_factory):
    out = tmp_path_factory.mktemp("match") / "runs" / "m1"  # parents are created
    doc = eval_cli.main(["--walls", "1", "--lineup", *LINEUP, "--quiet", "--records", str(out)])
    return out, doc


def test_eval_writes_one_line_per_hand_in_wall_and_rotation_order(match):
    out, doc = match
    lines = [json.loads(x) for x in (out / "records.jsonl").read_text("utf-8").splitlines()]
    assert [(x["wall"], x["rotation"]) for x in lines] == [(0, r) for r in range(4)]
    heuristic_points = 0
    for x in lines:
        r = x["rotation"]
        assert x["seats"] == [LINEUP[(s + r) % 4] for s in range(4)]
        game = validate_record(x["record"])  # replays, and the result agrees
        assert game.is_over()
        seat = x["seats"].index("heuristic")
        heuristic_points += x["record"]["result"]["scores"][seat]
    # the seats written are the seats the match statistics count
    assert heuristic_points / 4 == pytest.approx(doc["agents"]["heuristic"]["points_per_hand"])


def test_viewer_pages_for_eval_records_folder_and_file(match, tmp_path, capsys):
    out, _ = match
    lines = (out / "records.jsonl").read_text("utf-8").splitlines()
    for src, site in ((out, tmp_path / "a"), (out / "records.jsonl", tmp_path / "b")):
        assert viewer_main([str(src), "-o", str(site)]) == 0
        assert "4 of 4 pages" in capsys.readouterr().out
        pages = [f"records-line{k}.html" for k in range(1, 5)]
        assert _hrefs(site / "index.html") == pages
        assert sorted(p.name for p in site.iterdir()) == sorted([*pages, "index.html"])
        index = (site / "index.html").read_text(encoding="utf-8")
        assert "records.jsonl line 2 (wall=0, rotation=1, seats=[" in index
        for k, page in enumerate(pages):
            data = _embedded((site / page).read_text(encoding="utf-8"))
            assert data["record"] == json.loads(lines[k])["record"]
            assert data["title"].startswith(f"records.jsonl line {k + 1} (wall=0")


def test_viewer_reads_the_datasets_records_jsonl(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from sichuan_env.train.data.make_dataset import main as make_dataset

    ds = tmp_path / "ds"
    make_dataset(["--lineup", *["random"] * 4, "--hands", "2", "--out", str(ds), "--quiet"])
    site = tmp_path / "site"
    assert viewer_main([str(ds / "records.jsonl"), "-o", str(site)]) == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "records.jsonl line 1 (game_id=0)" in index and "line 2 (game_id=1)" in index
    assert _hrefs(site / "index.html") == ["records-line1.html", "records-line2.html"]


def test_eval_records_path_is_checked_before_any_hand(tmp_path, capsys, monkeypatch):
    def never(*a, **k):
        raise AssertionError("a hand was played")

    monkeypatch.setattr(eval_cli, "play_duplicate", never)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for bad in (blocker, blocker / "sub", tmp_path / "d"):
        if bad.name == "d":
            (bad / "records.jsonl").mkdir(parents=True)  # the records file is a directory
        with pytest.raises(SystemExit) as exc:
            eval_cli.main(["--walls", "1", "--quiet", "--records", str(bad)])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "--records" in err and "Traceback" not in err
        assert err.strip().splitlines()[-1].startswith("sichuan-eval: error: --records")
    assert blocker.read_text() == "x"


# ------------------------------------------------------------------ sichuan-play --record
def test_play_from_scripted_stdin_saves_the_record_for_the_viewer(tmp_path):
    rec = tmp_path / "hands" / "h.json"
    argv = ["--seed", "3", "--seat", "1", "--opponents", "random", "--record", str(rec)]
    proc = subprocess.run(
        [sys.executable, "-m", "sichuan_env.play", *argv],
        input="?\nnonsense\n" + "0\n" * 400,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "The hand is over." in proc.stdout and f"record saved to {rec}" in proc.stdout
    record = json.loads(rec.read_text(encoding="utf-8"))
    assert validate_record(record).is_over() and "end" in record["result"]
    page = tmp_path / "h.html"
    assert viewer_main([str(rec), "-o", str(page)]) == 0
    assert _embedded(page.read_text(encoding="utf-8"))["record"] == record


def test_play_saves_the_hand_so_far_when_the_player_quits_or_stops(tmp_path, capsys):
    rec = tmp_path / "quit.json"
    assert play(0, RuleConfig(), 5, _reader(["0", "0", "q"]), record_to=rec) == 1
    record = json.loads(rec.read_text(encoding="utf-8"))
    game = validate_record(record)
    assert not game.is_over() and "end" not in record["result"] and record["actions"]
    assert viewer_main([str(rec), "-o", str(tmp_path / "quit.html")]) == 0

    def interrupt(prompt):
        raise KeyboardInterrupt

    rec2 = tmp_path / "ctrl-c.json"
    with pytest.raises(KeyboardInterrupt):
        play(2, RuleConfig(), 5, interrupt, record_to=rec2)
    assert not validate_record(json.loads(rec2.read_text(encoding="utf-8"))).is_over()
    assert "record saved to" in capsys.readouterr().out


def test_play_record_path_is_checked_before_the_hand(tmp_path, capsys):
    from sichuan_env.play import main as play_main

    with pytest.raises(SystemExit) as exc:
        play_main(["--seed", "1", "--record", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--record" in err and "is a directory" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="record_to"):
        play(0, RuleConfig(), 1, _reader([]), record_to=tmp_path)
    with pytest.raises(TypeError, match="record_to"):
        play(0, RuleConfig(), 1, _reader([]), record_to=5)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ JSON Lines: bad and hostile
def test_a_bad_line_is_named_and_the_others_still_get_pages(tmp_path, capsys):
    src = tmp_path / "recs.jsonl"
    lines = [
        _golden_line(0, game_id=0),
        "",  # blank lines are skipped (but counted)
        "{not json",
        "[1, 2]",
        '{"record": 5}',
        '{"format": "sichuan-mahjong-record/1"}',
        _golden_line(1),  # a bare record
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    site = tmp_path / "site"
    assert viewer_main([str(src), "-o", str(site)]) == 1
    out, err = capsys.readouterr()
    assert "2 of 6 pages" in out
    errs = err.strip().splitlines()
    assert len(errs) == 4 and "Traceback" not in err
    needles = {3: "not JSON", 4: "JSON object", 5: "JSON object", 6: "not a valid"}
    for line, needle in needles.items():
        msg = next(e for e in errs if f"recs.jsonl line {line}:" in e)
        assert needle in msg and msg.startswith("sichuan-viewer: ")
    assert _hrefs(site / "index.html") == ["recs-line1.html", "recs-line7.html"]


def test_bounds_too_long_line_too_many_records_and_too_many_errors(tmp_path, capsys, monkeypatch):
    good = _golden_line(0)
    monkeypatch.setattr(viewer_sources, "MAX_BYTES", len(good) + 10)
    long = tmp_path / "long.jsonl"
    long.write_text(f"{good}\n{good}{' ' * 20}\n{good}\n", encoding="utf-8")
    assert viewer_main([str(long), "-o", str(tmp_path / "l")]) == 1
    out, err = capsys.readouterr()
    assert "long.jsonl line 2: cannot read: larger than" in err and "rest is not read" in err
    assert "1 of 2 pages" in out  # line 3 is not read

    many = tmp_path / "many.jsonl"
    many.write_text(f"{good}\n" * 3, encoding="utf-8")
    for module in (viewer_cli, viewer_sources):  # records per run; blank lines per file
        monkeypatch.setattr(module, "MAX_RECORDS", 2)
    assert viewer_main([str(many), "-o", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert "more than 2 records" in err and "--limit" in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()
    assert viewer_main([str(many), "-o", str(tmp_path / "m"), "--limit", "2"]) == 0
    assert _hrefs(tmp_path / "m" / "index.html") == ["many-line1.html", "many-line2.html"]

    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n" * 5, encoding="utf-8")
    assert viewer_main([str(blank), "-o", str(tmp_path / "b")]) == 1
    assert "more than 2 blank lines" in capsys.readouterr().err

    for module in (viewer_cli, viewer_sources):
        monkeypatch.setattr(module, "MAX_RECORDS", 100)
    monkeypatch.setattr(viewer_cli, "MAX_ERRORS", 3)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("x\n" * 50, encoding="utf-8")
    assert viewer_main([str(junk), "-o", str(tmp_path / "j")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and err[-1] == "sichuan-viewer: stopped after 3 bad records"


def test_hostile_lines_cannot_break_the_pages_or_the_tool(tmp_path, capsys):
    src = tmp_path / "h.jsonl"
    lines = [
        _golden_line(0, name='<img src=x onerror="alert(1)">', note="a" * 5000, x=1, y=2, z=3),
        "[" * 100_000 + "]" * 100_000,  # nested too deeply
        "\xff\xfe",  # not UTF-8 (written as latin-1)
        json.dumps({"record": {"format": "sichuan-mahjong-record/1", "wall": "</script>"}}),
    ]
    src.write_bytes(b"\n".join(x.encode("latin-1") for x in lines) + b"\n")
    site = tmp_path / "site"
    assert viewer_main([str(src), "-o", str(site)]) == 1
    err = capsys.readouterr().err
    assert "line 2: not JSON: nested too deeply" in err
    assert "line 3: cannot read: not UTF-8" in err and "line 4: not a valid" in err
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "<img" not in index and "name=&quot;&lt;img src=x onerror=\\&quot;alert(1)" in index
    assert "a" * 100 not in index and "..." in index  # labels are bounded
    page = (site / "h-line1.html").read_text(encoding="utf-8")
    assert "<img" not in page and _embedded(page)["title"].startswith("h.jsonl line 1 (name=")
    assert _hrefs(site / "index.html") == ["h-line1.html"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_fifo_jsonl_is_refused_at_once_alone_or_in_a_folder(tmp_path):
    folder = tmp_path / "recs"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "good.jsonl").write_text(_golden_line(2) + "\n", encoding="utf-8")
    shutil.copy(GOLDEN[1], folder / "good-line1.json")  # its page name collides with a line's
    t0 = time.perf_counter()
    for argv, code in (([str(folder / "pipe.jsonl")], 1), ([str(folder)], 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "sichuan_env.viewer", *argv, "-o", str(tmp_path / "o")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        assert proc.returncode == code and "a FIFO" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert time.perf_counter() - t0 < 120
    hrefs = _hrefs(tmp_path / "o" / "index.html")
    assert hrefs == ["good-line1.html", "good-line1-1.html"]


def test_limit_is_only_for_collections(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        viewer_main([str(GOLDEN[0]), "-o", str(tmp_path / "p.html"), "--limit", "3"])
    assert exc.value.code == 2 and "--limit" in capsys.readouterr().err
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert viewer_main([str(empty), "-o", str(tmp_path / "e")]) == 1
    assert "no records" in capsys.readouterr().err
