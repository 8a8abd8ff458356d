"""The replay viewer: snapshots, the CLI, escaping, agents, and the page driven in headless Chromium.

The browser tests need Debian's ``chromium`` and ``chromium-driver`` and the
``selenium`` package; they skip when those are missing, except under CI
(``CI`` set), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sichuan_env import Game, RuleConfig
from sichuan_env.tiles import tile_index
from sichuan_env.viewer import (
    AgentAnnotator,
    embed_json,
    load_agent,
    render_page,
    replay_snapshots,
)
from sichuan_env.viewer.__main__ import main as viewer_main

GOLDEN = sorted((Path(__file__).parent / "data" / "golden").glob("*.json"))
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _policy_record(seed: int, rules: RuleConfig, *, claim_first: bool = True) -> dict:
    """A seeded hand whose players take every kong and pong (and every win when ``claim_first``)."""
    rng = np.random.default_rng(seed)
    game = Game(rules, seed=seed)
    while not game.is_over():
        legal = game.legal()
        phase = game.phase()
        if phase in ("claim", "rob"):
            order = ("hu", "kong", "pong") if claim_first else ("kong", "pong")
            game.step(
                next((a for a in order if a in legal), "pass" if "pass" in legal else legal[0])
            )
            continue
        if phase == "turn":
            kongs = [a for a in legal if "kong" in a]
            if kongs or (claim_first and "hu" in legal):
                game.step(kongs[0] if kongs else "hu")
                continue
            discards = [a for a in legal if a.startswith("discard")] or legal
            hand = game.state["hands"][game.to_act()]
            singles = [a for a in discards if a != "hu" and hand[tile_index(a.split()[1])] == 1]
            pool = singles or discards
            game.step(pool[int(rng.integers(len(pool)))])
            continue
        game.step(legal[int(rng.integers(len(legal)))])
    return game.record()


@pytest.fixture(scope="module")
def kong_record() -> dict:
    """Concealed, added and direct kongs, pongs and wins (seed 10 of the kong-happy policy)."""
    rec = _policy_record(10, RuleConfig())
    acts = [a for _, a in rec["actions"]]
    assert any(a.startswith("concealed_kong") for a in acts), "pick a seed with a concealed kong"
    assert any(a.startswith("added_kong") for a in acts), "pick a seed with an added kong"
    assert "kong" in acts and "pong" in acts and rec["result"]["wins"], "pick another seed"
    return rec


@pytest.fixture(scope="module")
def robbed_record() -> dict:
    """An added kong robbed by a win (seed 131 of the kong-happy policy)."""
    rec = _policy_record(131, RuleConfig())
    game = Game.from_record(rec)
    assert any(f == "robbed" for s in range(4) for _, f in game.discards(s)), "pick another seed"
    return rec


@pytest.fixture(scope="module")
def long_record() -> dict:
    """A long hand: every pong taken, wins passed (no pass-win block), 换三张."""
    rules = RuleConfig(pass_win_rule=False, exchange_three=True)
    rec = _policy_record(75, rules, claim_first=False)
    assert len(rec["actions"]) >= 90, len(rec["actions"])
    return rec


# ------------------------------------------------------------- the engine's replay, independently
def expected_steps(record: dict) -> list[dict]:
    """What the page must show after each decision, from a fresh ``Game`` stepped here.

    摸切 is derived independently of the viewer: the tile a seat drew is the one
    tile its concealed counts gained since the previous decision.
    """
    game = Game(
        RuleConfig.from_dict(record["rules"]),
        wall=record["wall"],
        dealer=record["dealer"],
        exchange_offset=record.get("exchange_offset"),
    )
    mo: list[list[int]] = [[] for _ in range(4)]
    added: set[tuple[int, str]] = set()
    prev_hands = game.state["hands"].astype(int)

    def now() -> dict:
        wins = {w["seat"]: w for w in game.wins()}
        hands = game.state["hands"]
        seats = []
        for s in range(4):
            labels = []
            for kind, tile in game.melds(s):
                name = {"pong": "pong", "kong": "kong", "concealed_kong": "concealed kong"}[kind]
                if kind == "kong" and (s, tile) in added:
                    name = "added kong"
                labels.append(f"{name} {tile}")
            seats.append(
                {
                    "hand_text": game.hand(s),
                    "tiles": sorted(
                        f"{t % 9 + 1}{'mps'[t // 9]}"
                        for t in range(27)
                        for _ in range(int(hands[s][t]))
                    ),
                    "river": [[t, f, mo[s][k]] for k, (t, f) in enumerate(game.discards(s))],
                    "melds": labels,
                    "win": wins.get(s),
                }
            )
        return {
            "legal": [] if game.is_over() else game.legal(),
            "wall": game.wall_left(),
            "scores": game.scores(),
            "to_act": game.to_act(),
            "seats": seats,
        }

    out = [now()]
    for seat, action in record["actions"]:
        out[-1]["chosen"] = action
        hands = game.state["hands"].astype(int)
        flag = -1
        if game.phase() == "turn" and action.startswith("discard "):
            gained = hands[seat] - prev_hands[seat]
            drawn = int(np.argmax(gained)) if gained[gained > 0].sum() == 1 else None
            flag = int(drawn == tile_index(action.split()[1]))
        if action.startswith("added_kong "):
            added.add((seat, action.split()[1]))
        prev_hands = hands
        game.step(action)
        for s in range(4):
            while len(mo[s]) < len(game.discards(s)):
                mo[s].append(flag if s == seat and flag >= 0 else -1)
        out.append(now())
    return out


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
class _Probs:
    """An agent with a distribution: prefers the lowest legal ids."""

    obs_version = 1

    def __init__(self) -> None:
        self.calls = 0

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[0])

    def action_probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        assert obs.shape == (83, 27) and obs.dtype == np.uint8
        self.calls += 1
        w = np.where(mask > 0, 1.0 / (1.0 + np.arange(88)), 0.0)
        return w / w.sum()


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


# ------------------------------------------------------------------------------- the browser
EXTRACT_FN = """
function extract() {
  const q = (r, s) => Array.from(r.querySelectorAll(s));
  const seat = (s) => {
    const p = document.getElementById('seat-' + s);
    return {
      hand: q(p, '.hand .tile').map((t) => t.querySelector('.nt').textContent),
      backs: q(p, '.hand .tile.back').length,
      hand_text: p.querySelector('.hand-text').textContent,
      river: q(p, '.river .tile').map((t) => [t.querySelector('.nt').textContent, t.className]),
      melds: q(p, '.meld-label').map((e) => e.textContent),
      score: p.querySelector('.score').textContent,
      act: !p.querySelector('.badge.act').hidden,
      win: p.querySelector('.win').textContent,
    };
  };
  const res = document.getElementById('result');
  return {
    step: Number(document.body.dataset.step), hash: location.hash,
    wall: document.getElementById('wall').textContent,
    stepno: document.getElementById('stepno').textContent,
    seats: [0, 1, 2, 3].map(seat),
    result: res.hidden ? null : q(res, 'tr.final td').map((e) => e.textContent),
    payments: q(res, 'table.payments tr').length - 1,
    settled: res.textContent.includes('Draw settlement'),
    legal: q(document, '#decision ul.legal li').map((e) => e.textContent),
    chosen: q(document, '#decision ul.legal li.chosen').map((e) => e.textContent),
  };
}
"""
EXTRACT = EXTRACT_FN + "return extract();"
WALK = (
    EXTRACT_FN
    + """
const steps = arguments[0], done = arguments[arguments.length - 1], out = [];
let i = 0;
const visit = () => {
  if (i === steps.length) { done(out); return; }
  const target = '#step=' + steps[i];
  const read = () => { out.push(extract()); i += 1; visit(); };
  if (location.hash === target) { read(); return; }
  window.addEventListener('hashchange', read, {once: true});
  location.hash = target;
};
visit();
"""
)
"""Visit the steps ``arguments[0]`` by setting the URL hash; the page as seen at each."""
WALK_NOW = (
    EXTRACT_FN
    + """
return arguments[0].map((n) => {
  history.replaceState(null, '', '#step=' + n);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
  return extract();
});
"""
)
"""``WALK`` in one task: the URL hash is set and the page told at once, with no frame between steps."""


def assert_page_shows(got: dict, exp: dict, where: str) -> None:
    """The page's text equals the engine's table (every seat's hand shown)."""
    assert int(got["wall"].split()[1]) == exp["wall"], where
    assert got["legal"] == exp["legal"], where
    assert got["chosen"] == ([exp["chosen"]] if exp["legal"] else []), where
    for s in range(4):
        g, e = got["seats"][s], exp["seats"][s]
        assert g["hand_text"] == e["hand_text"], (where, s)
        assert sorted(g["hand"]) == e["tiles"], (where, s)
        assert int(g["score"]) == exp["scores"][s], (where, s)
        assert g["act"] == (exp["to_act"] == s), (where, s)
        assert [m.split(" from ")[0] for m in g["melds"]] == e["melds"], (where, s)
        river = [
            (t, "fate-" in c and c.split("fate-")[1][0], " mo" in f" {c}") for t, c in g["river"]
        ]
        want = [
            (t, {"live": False, "melded": "m", "won_on": "w", "robbed": "r"}[f], m == 1)
            for t, f, m in e["river"]
        ]
        assert river == want, (where, s)
        w = e["win"]
        if w is None:
            assert g["win"] == "", (where, s)
        else:
            assert f"on {w['tile']}" in g["win"] and f"{w['fan']} fan {w['base']}" in g["win"]
            assert ("self-draw" in g["win"]) == (w["from"] is None), (where, s)


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None
    if webdriver is None or CHROMIUM is None or not Path(DRIVER).exists():
        missing = "selenium" if webdriver is None else "chromium / chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(f"{missing} missing in CI: apt-get install chromium chromium-driver")
        pytest.skip(f"{missing} not installed")
    opts = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    opts.add_argument("--window-size=1280,900")
    opts.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    driver.set_script_timeout(10)
    yield driver
    driver.quit()


def _open(browser, tmp_path: Path, name: str, page: str, hash_: str = "") -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri() + hash_)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_page_agrees_with_the_engine_at_every_step_of_every_golden_record(browser, tmp_path):
    checked = 0
    for path in GOLDEN:
        rec = _load(path)
        exp = expected_steps(rec)
        _open(browser, tmp_path, path.stem, render_page(rec, title=path.name))
        order = [*range(1, len(exp)), 0, len(exp) - 1]
        sample = order[::9] + order[-2:]  # real navigations; all steps in one task
        seen = browser.execute_async_script(WALK, sample) + browser.execute_script(WALK_NOW, order)
        for n, got in zip(sample + order, seen, strict=True):
            assert got["step"] == n and got["hash"] == f"#step={n}", path.name
            assert_page_shows(got, exp[n], f"{path.name} step {n}")
            assert (got["result"] is None) == (n != len(exp) - 1)
            checked += 1
        assert [int(x) for x in got["result"]] == rec["result"]["scores"], path.name
        assert got["payments"] == len(rec["result"]["payments"]), path.name
        assert got["settled"] == ("settlement" in rec["result"]), path.name
    assert checked >= sum(len(_load(p)["actions"]) + 2 for p in GOLDEN)


def test_click_through_a_golden_record_with_buttons_and_keys(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    path = next(p for p in GOLDEN if p.stem == "xuezhan-2")
    exp = expected_steps(_load(path))
    last = len(exp) - 1
    _open(browser, tmp_path, path.stem, render_page(_load(path)))
    nxt, prev = browser.find_element(By.ID, "next"), browser.find_element(By.ID, "prev")
    body = browser.find_element(By.TAG_NAME, "body")
    assert_page_shows(browser.execute_script(EXTRACT), exp[0], "load")
    at = 0
    for n in [*range(1, last + 1), *range(last - 1, last - 11, -1)]:
        forward, at = n > at, n
        if n % 2:
            (nxt if forward else prev).click()
        else:
            body.send_keys(Keys.ARROW_RIGHT if forward else Keys.ARROW_LEFT)
        got = browser.execute_script(EXTRACT)
        assert got["step"] == n and got["hash"] == f"#step={n}"
        assert got["stepno"] == f"step {n} / {last}"
        assert_page_shows(got, exp[n], f"{path.name} click {n}")


def test_jumps_slider_and_clamping(browser, tmp_path, kong_record):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    exp = expected_steps(kong_record)
    last = len(exp) - 1
    _open(browser, tmp_path, "kongs", render_page(kong_record), "#step=3")
    read = lambda: browser.execute_script(EXTRACT)
    assert read()["step"] == 3
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.END)
    assert read()["step"] == last and read()["result"] is not None
    browser.find_element(By.ID, "next").click()  # disabled at the end: nothing happens
    assert read()["step"] == last
    body.send_keys(Keys.HOME)
    assert_page_shows(read(), exp[0], "home")
    # jump to each kong and each win in turn (where the engine's melds and wins grow)
    kongs = lambda e: sum("kong" in m for seat in e["seats"] for m in seat["melds"])
    wins = lambda e: sum(seat["win"] is not None for seat in e["seats"])
    for kind, count in (("kong", kongs), ("win", wins)):
        body.send_keys(Keys.HOME)
        want = [n for n in range(1, last + 1) if count(exp[n]) > count(exp[n - 1])]
        seen = []
        while browser.find_element(By.ID, f"next-{kind}").is_enabled():
            browser.find_element(By.ID, f"next-{kind}").click()
            seen.append(read()["step"])
        assert seen == want and len(want) >= 2, kind
        assert_page_shows(read(), exp[want[-1]], kind)
    # the slider
    browser.execute_script(
        "const s = document.getElementById('slider'); s.value = '20';"
        "s.dispatchEvent(new Event('input'));"
    )
    assert_page_shows(read(), exp[20], "slider")
    # out of range and junk clamp (and the URL says where we are)
    for target, want in (("99999", last), ("-4", 0), ("abc", 0), (str(last + 1), last)):
        browser.execute_script("location.hash = arguments[0];", "#step=" + target)
        time.sleep(0.05)
        got = read()
        assert got["step"] == want and got["hash"] == f"#step={want}", target
    # a fresh load at an out-of-range step clamps too
    browser.get((tmp_path / "kongs.html").as_uri() + "#step=12345")
    assert read()["step"] == last and read()["hash"] == f"#step={last}"


def test_seat_view_hides_the_other_hands(browser, tmp_path, kong_record):
    exp = expected_steps(kong_record)
    _open(browser, tmp_path, "seat1", render_page(kong_record, seat=1), "#step=30")
    got = browser.execute_script(EXTRACT)
    assert got["hash"] == "#step=30&view=1"
    for s in range(4):
        g, e = got["seats"][s], exp[30]["seats"][s]
        if s == 1:
            assert g["hand_text"] == e["hand_text"] and g["backs"] == 0
        else:
            assert g["backs"] == len(e["tiles"]) and set(g["hand"]) == {""}
            assert e["hand_text"] not in g["hand_text"]
        assert [m.split(" from ")[0] for m in g["melds"]] == e["melds"]  # melds are public
    browser.execute_script("location.hash = '#step=30&view=all';")
    time.sleep(0.05)
    got = browser.execute_script(EXTRACT)
    assert got["hash"] == "#step=30" and all(g["backs"] == 0 for g in got["seats"])


def test_agent_panel_and_escaped_strings_in_the_browser(browser, tmp_path, kong_record):
    evil = "</script><script>window.pwned=1</script>"
    rec = {**kong_record, "comment": evil}
    page = render_page(rec, title=evil, annotator=AgentAnnotator(_Probs(), [0], "x<b>y</b>"))
    seat0 = next(k for k, (s, _) in enumerate(rec["actions"]) if s == 0 and k > 8)
    _open(browser, tmp_path, "evil", page, f"#step={seat0}")
    assert browser.execute_script("return window.pwned === undefined && document.title") == evil
    saved = browser.execute_async_script(
        "const done = arguments[0], a = document.getElementById('download');"
        "a.addEventListener('click', (e) => e.preventDefault(), {once: true}); a.click();"
        "fetch(a.href).then((r) => r.json()).then(done, (e) => done(String(e)));"
    )
    assert saved == rec  # the record travels inside the page intact
    text = browser.execute_script("return document.getElementById('decision').innerText")
    assert "agent x<b>y</b>" in text and "chosen: " + rec["actions"][seat0][1] in text
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('.agent-top li .act')).map(e => e.textContent)"
    )
    snap = replay_snapshots(rec, agent_hook=AgentAnnotator(_Probs(), [0], "p"))["steps"][seat0]
    assert rows == [a for a, _ in snap["agent"]["top"]] and len(rows) >= 1


def test_first_paint_of_a_long_record(browser, tmp_path, long_record):
    page = render_page(
        long_record, annotator=AgentAnnotator(load_agent("heuristic"), range(4), "h")
    )
    path = tmp_path / "long.html"
    path.write_text(page, encoding="utf-8")
    browser.get(path.as_uri())
    paint = None
    for _ in range(50):
        paint = browser.execute_script(
            "const e = performance.getEntriesByName('first-contentful-paint')[0];"
            "return e ? e.startTime : null;"
        )
        if paint is not None:
            break
        time.sleep(0.05)
    assert paint is not None, "no first-contentful-paint entry"
    n = len(long_record["actions"])
    print(f"\nfirst contentful paint: {paint:.0f} ms ({n} decisions, {len(page) // 1024} KiB page)")
    assert 0 < paint < 5000
    assert browser.execute_script("return Number(document.body.dataset.step)") == 0
