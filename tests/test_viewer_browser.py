"""The replay viewer's page driven in headless Chromium.

The browser tests need Debian's ``chromium`` and ``chromium-driver`` and the
``selenium`` package; they skip when those are missing, except under CI
(``CI`` set), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from viewer_support import CHROMIUM, DRIVER, GOLDEN, _load, _Probs, expected_steps

from sichuan_env.viewer import (
    AgentAnnotator,
    load_agent,
    render_page,
    replay_snapshots,
)

pytestmark = pytest.mark.browser  # the browser tier: pytest -m browser

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


# ---------------------------------------------------------------- legible without CJK fonts
GLYPHS = """
const blank = document.createElement('canvas');
blank.width = 48; blank.height = 32;
const g = blank.getContext('2d', {willReadFrequently: true});
const draw = (ch, font) => {
  g.clearRect(0, 0, 48, 32);
  g.font = font;
  g.fillText(ch, 4, 24);
  return g.getImageData(0, 0, 48, 32).data.join(',');
};
const seen = {};
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const p = n.parentElement;
  if (!p || p.closest('script, style') || !p.getClientRects().length) continue;
  for (const ch of n.data) if (ch.trim() && !(ch in seen)) seen[ch] = getComputedStyle(p).font;
}
for (const e of document.querySelectorAll('body *')) {
  for (const pseudo of ['::before', '::after']) {
    const c = getComputedStyle(e, pseudo).content;
    if (!c || c === 'none' || c === 'normal') continue;
    for (const ch of c.replace(/^"|"$/g, '')) {
      if (ch.trim() && !(ch in seen)) seen[ch] = getComputedStyle(e, pseudo).font;
    }
  }
}
const tofu = (font) => draw(String.fromCodePoint(0x378), font);  // unassigned: no font has it
return Object.entries(seen).map(([ch, font]) => [ch, draw(ch, font) === tofu(font)]);
"""
"""Every character drawn as text (text nodes of rendered elements, ``::before``/``::after``
content) and whether this machine's fonts draw it as the missing-glyph box."""


def test_every_visible_character_is_drawn_without_cjk_or_symbol_fonts(
    browser, tmp_path, kong_record
):
    """Text and pseudo-element content is Latin-1 and no character renders as a box here.

    The browser draws each visible character next to an unassigned code point in the
    element's own font; equal pixels mean no installed font has it (the same test the
    page's ``glyphsWork`` uses). Then a screenshot: the four step buttons are four distinct
    drawings (missing-glyph boxes for the old symbol characters were identical).
    """
    import io

    from PIL import Image
    from selenium.webdriver.common.by import By

    drawn: dict[str, bool] = {}
    settled = next(p for p in GOLDEN if "settlement" in _load(p)["result"])
    for name, rec in (("kongs", kong_record), ("settled", _load(settled))):
        last = len(rec["actions"])
        _open(browser, tmp_path, name, render_page(rec, title=name))
        for step in (0, 1, last // 2, last):
            browser.execute_script("location.hash = arguments[0];", f"#step={step}")
            time.sleep(0.05)
            drawn.update(dict(browser.execute_script(GLYPHS)))
    tiles = {chr(c) for c in range(0x1F000, 0x1F02C)}  # shown only where a font draws them
    latin = {chr(c) for c in (*range(0x20, 0x7F), *range(0xA0, 0x100))}
    assert "l" in drawn and "q" in drawn  # "liu ju" and "ding que" were among the texts
    assert not set(drawn) - latin - tiles, sorted(set(drawn) - latin)
    assert not [ch for ch, box in drawn.items() if box], drawn
    browser.execute_script("location.hash = '#step=1';")  # every step button enabled
    time.sleep(0.05)
    shots = [
        browser.find_element(By.ID, b).screenshot_as_png for b in ("first", "prev", "next", "last")
    ]
    images = [Image.open(io.BytesIO(s)).convert("L") for s in shots]
    assert len({im.tobytes() for im in images}) == 4  # four different icons, no twin boxes
    for im in images:  # each has ink: light icon pixels on the dark button
        assert sum(im.histogram()[150:]) >= 12, im.histogram()
