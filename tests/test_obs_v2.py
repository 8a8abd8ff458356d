"""Observation v2: v1 plus discard sequences, 摸切/手切, who took what, meld order and turns."""

import re

import numpy as np
from engine_helpers import game_with, scripted, voids

from sichuan_env import Game, tile_index
from sichuan_env.encoding import v2
from sichuan_env.encoding.registry import get
from sichuan_env.envs.vector import VectorEnv

SEAT3 = "1224445666899s"
VOIDS = voids("s", "s", "s", "m")


def _obs(game: Game, me: int, version: int = 2, oracle: bool = False) -> np.ndarray:
    spec = get(version)
    out = np.zeros(spec.shape(oracle), np.uint8)
    spec.encode_at(game._st, 0, me, oracle, game._r, out)
    return out


def test_docstring_table_matches_the_layout():
    rows = re.findall(r"^\| ([\w@()]+) \| (\d+)(?: x (\d+))? \|", v2.__doc__, flags=re.MULTILINE)
    sizes = {name: int(a) * int(b or 1) for name, a, b in rows}
    assert sizes.pop("(v1)") == 83
    assert sizes == {name: n for name, n in v2.BLOCKS[len(get(1).blocks) :]}


def test_v2_starts_with_v1_and_appends_the_same_oracle_rows():
    venv = VectorEnv(16, obs_version=2, oracle=True, seed=8)
    obs, mask, _ = venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(150):
        obs, mask, *_ = venv.step((rng.random(mask.shape) * mask).argmax(axis=1))
    v1 = venv.observe(1, oracle=True)
    assert obs.shape == (16, 232 + 67, 27)
    assert np.array_equal(obs[:, :83], v1[:, :83])
    assert np.array_equal(obs[:, v2.ORACLE_HANDS :], v1[:, 83:])


def test_discard_sequence_tsumogiri_and_takers():
    # robbed-kong scenario: seat 0 discards 5p from its hand (手切, dealer's first turn),
    # seat 2 pongs it; seat 3 discards the 9s it drew (摸切); seat 2's added kong is robbed
    g = game_with(
        ("5p66p77p88p99p55m66m", "123m456m789m11p46p", "55p111m222m333m44m", SEAT3),
        "7m",
        draws="9s8m9m5p",
    )
    script = [*VOIDS, (0, "discard 5p"), (1, "pass"), (2, "pong"), (2, "discard 1m")]
    scripted(g, [*script, (3, "discard 9s"), (0, "discard 8m"), (1, "discard 9m")])
    scripted(g, [(2, "added_kong 5p"), (1, "hu")])
    st = g.state
    assert st["river_tsumo"][0, :2].tolist() == [0, 1]  # 5p from the hand; the 8m just drawn
    assert st["river_tsumo"][3, 0] == 1 and st["river_tsumo"][2, 0] == 0  # after a pong: 手切
    assert st["river_by"][0, 0] == 1 << 2  # seat 0's 5p taken by seat 2 (pong)
    assert st["river_by"][2, 1] == 1 << 1  # seat 2's robbed 5p taken by seat 1 (hu)
    me = 1
    obs = _obs(g, me)
    rel = {s: (s - me) % 4 for s in range(4)}
    for s in range(4):
        r = rel[s]
        for k in range(int(st["n_river"][s])):
            row = obs[v2.RIVER + v2.RIVER_SLOTS * r + k]
            assert row.tolist() == np.eye(27, dtype=np.uint8)[st["river"][s, k]].tolist()
            assert obs[v2.RIVER_TSUMO + r, k] == st["river_tsumo"][s, k]
    # seat 0 (relative 3 to seat 1): discard 0 taken by seat 2 (relative 1)
    assert obs[v2.RIVER_TAKEN + 4 * rel[0] + rel[2], 0] == 1
    assert obs[v2.RIVER_TAKEN + 4 * rel[0] :][:4, 0].sum() == 1
    # seat 2's melds: the 5p pong first (turn 2: seat 1's... the pong started seat 2's turn)
    assert obs[v2.MELD_ORDER + 4 * rel[2], tile_index("5p")] == 1
    assert obs[v2.MELD_TURN + 4 * rel[2]].sum() == (int(st["meld_turn"][2, 0]) + 2) // 3
    assert obs[v2.TURN].sum() == (int(st["turn"]) + 2) // 3 > 0


def test_turn_counts_own_turns():
    """A turn begins at every draw (the dealer's 14th included) and every pong."""
    rng = np.random.default_rng(2)
    pongs_seen = 0
    for seed in range(20):
        g = Game(seed=seed)
        pongs = 0
        while not g.is_over():
            legal = g.legal_ids()
            a = 84 if 84 in legal else int(rng.choice(legal))  # pong whenever possible
            pongs += a == 84
            g.step_id(a)
            st = g.state
            if g.phase() in ("turn", "claim", "rob", "over") and st["turn"] > 0:
                assert st["turn"] == int(st["draws"].sum()) + pongs
        pongs_seen += pongs
    assert pongs_seen > 10
