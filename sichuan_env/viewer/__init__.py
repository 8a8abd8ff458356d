"""A replay viewer in the browser: one self-contained HTML page per game record.

``python -m sichuan_env.viewer RECORD.json [-o replay.html] [--seat S] [--agent NAME]``
(console script ``sichuan-viewer``) reads the record (``sources.py``: regular
files and JSON Lines, bounded), replays it with the engine,
snapshots the table after every decision (``snapshot.py``) and writes a page
(``build.py``: ``page.html``, ``page.css``, ``page.js`` inlined) that shows
those snapshots: hands, rivers with 摸切/手切 and claimed tiles, melds, voids,
wins, the wall, scores, the legal actions and the chosen one, and the result
with payments. The page's script renders data only; the rules live in the
engine.
"""

from .agent import AgentAnnotator, load_agent
from .build import embed_json, render_index, render_page
from .snapshot import replay_snapshots, validate_record

__all__ = [
    "AgentAnnotator",
    "embed_json",
    "load_agent",
    "render_index",
    "render_page",
    "replay_snapshots",
    "validate_record",
]
