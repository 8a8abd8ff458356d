r"""Assemble the self-contained HTML page of a replay, and the index of a directory of replays.

The page is ``page.html`` with ``page.css`` and ``page.js`` inlined and the
snapshots (``snapshot.py``) and the record embedded as JSON in a
``<script type="application/json">`` element. The JSON is escaped so that no
string in it can close that element (``<``, ``>``, ``&`` and the JavaScript
line separators are written as ``\uXXXX``); the page script only ever puts
data into the document with ``textContent``.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any
from urllib.parse import quote

from .agent import AgentAnnotator
from .snapshot import replay_snapshots

PAGE_FILES = ("page.html", "page.css", "page.js")
"""The template files, package data of ``sichuan_env.viewer``."""

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_PLACEHOLDER = re.compile(r"\{\{(TITLE|CSS|JS|DATA)\}\}")


def asset(name: str) -> str:
    """The text of one template file (``page.html``, ``page.css`` or ``page.js``).

    Raises:
        ValueError: for a name that is not a template file.
    """
    if name not in PAGE_FILES:
        raise ValueError(f"asset must be one of {PAGE_FILES}, got {name!r}")
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """JSON text that is safe inside a ``<script>`` element (no ``</script>`` can appear)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _ESCAPES[m.group(0)], text)


def _fill(template: str, values: dict[str, str]) -> str:
    # one pass, so a value that happens to contain "{{JS}}" is never expanded
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def render_page(
    record: dict[str, Any],
    *,
    title: str = "Sichuan Mahjong replay",
    seat: int | None = None,
    annotator: AgentAnnotator | None = None,
) -> str:
    """The HTML page of one record.

    Args:
        record: a game record (docs/rules.md §10); replayed and validated by the engine.
        title: the page title (escaped).
        seat: open in this seat's view (others' hands hidden); None shows all hands.
        annotator: annotates each decision of its seats with an agent's choice.

    Returns:
        One self-contained HTML document (inline CSS and JS, no network access).

    Raises:
        ValueError: an invalid record, a bad seat or a bad title.
    """
    if seat is not None and (isinstance(seat, bool) or seat not in (0, 1, 2, 3)):
        raise ValueError(f"seat must be 0..3 or None, got {seat!r}")
    if not isinstance(title, str):
        raise ValueError(f"title must be a string, got {type(title).__name__}")
    replay = replay_snapshots(record, agent_hook=annotator)
    data = {
        "title": title,
        "view": seat,
        "meta": replay["meta"],
        "steps": replay["steps"],
        "agent": annotator.describe() if annotator is not None else None,
        "record": record,
    }
    js = asset("page.js")
    css = asset("page.css")
    if "</" in js or "</" in css:  # our own files; a stray close tag would end the element
        raise ValueError("page.js and page.css must not contain '</'")
    return _fill(
        asset("page.html"),
        {"TITLE": html.escape(title), "CSS": css, "JS": js, "DATA": embed_json(data)},
    )


def render_index(entries: list[dict[str, Any]], *, title: str = "Sichuan Mahjong replays") -> str:
    """An index page linking replay pages.

    Args:
        entries: ``{"href", "name", "actions", "scores", "wins", "end"}`` per page.
        title: the page title (escaped).

    Returns:
        One self-contained HTML document.
    """
    rows = []
    for e in entries:
        scores = " / ".join(f"{x:+d}" for x in e.get("scores") or [])
        rows.append(
            "<tr>"
            f'<td><a href="{html.escape(quote(e["href"]), quote=True)}">{html.escape(e["name"])}</a></td>'
            f"<td>{int(e['actions'])}</td>"
            f"<td>{html.escape(scores)}</td>"
            f"<td>{int(e.get('wins') or 0)}</td>"
            f"<td>{html.escape(str(e.get('end') or 'not over'))}</td>"
            "</tr>"
        )
    body = (
        f'<header id="top"><h1>{html.escape(title)}</h1></header>'
        '<table class="index"><tr><th>record</th><th>decisions</th><th>scores</th>'
        "<th>wins</th><th>end</th></tr>" + "".join(rows) + "</table>"
    )
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{asset('page.css')}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )
