"""Helpers shared by the viewer tests (``test_viewer.py``, ``test_viewer_browser.py``): records, fixtures, the engine's replay.

A pytest plugin (``conftest.py`` lists it in ``pytest_plugins``), so its fixtures reach both modules.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sichuan_env import Game, RuleConfig
from sichuan_env.tiles import tile_index

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
