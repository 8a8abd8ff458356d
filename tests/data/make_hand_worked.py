"""Golden records whose results were worked out by hand from docs/rules.md: ``python tests/data/make_hand_worked.py``.

Unlike ``make_golden.py`` (whole hands played by the engine, results
recorded from it), every ``result`` below is typed in by hand, with the
reasoning beside it; the engine only lays out the wall from the hands
written in tile notation (``engine_helpers.build_wall``, no rules involved).
``tests/test_golden.py`` replays each file and ``Game.from_record`` compares
every result field with the engine's.

Common set-up: dealer 0, default rules (docs/rules.md §9) unless said, voids
s/s/s/m (seat 3 holds only s tiles and never claims), base_points 1, so a
win of ``f`` fan pays ``2 ** (f - 1)`` (§6).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from engine_helpers import build_wall

from sichuan_env import RuleConfig

OUT = HERE / "hand_worked"
SEAT3 = "1224445666899s"
VOIDS = [[0, "void s"], [1, "void s"], [2, "void s"], [3, "void m"]]


def win(seat, tile, frm, fan, base, extras=(), roots=0):
    """A win entry (§10): its points are its own 2 ** (fan - 1)."""
    return {
        "seat": seat,
        "tile": tile,
        "from": frm,
        "fan": fan,
        "points": 2 ** (fan - 1),
        "base": base,
        "roots": roots,
        "extras": list(extras),
    }


CASES = {
    # 一炮多响 under end_on_first_win. Seat 0 discards 5p (action 4). Seat 1 holds
    # 123m456m789m11p46p: +5p = 123m 456m 789m 456p 11p, 平胡 1 fan, pays 1 (§6.1).
    # Seat 2 holds 111m222m333m444m5p: +5p = four triplets + 55p, 对对胡 2 fan, pays 2.
    # Both hu (actions 5, 6): one win event, the discarder pays both (§7.1): [-3, 1, 2, 0].
    # The hand ends at the first win event (§9); several winners on one discard: the
    # discarder deals next (§8).
    "multi_win_first_win": {
        "rules": {"end_on_first_win": True},
        "hands": ("66p77p88p99p55m66m7m", "123m456m789m11p46p", "111m222m333m444m5p", SEAT3),
        "fourteenth": "5p",
        "draws": "",
        "tail": "",
        "actions": [*VOIDS, [0, "discard 5p"], [1, "hu"], [2, "hu"]],
        "result": {
            "scores": [-3, 1, 2, 0],
            "wins": [win(1, "5p", 0, 1, "pinghu"), win(2, "5p", 0, 2, "duidui")],
            "payments": [{"action": 6, "seat": 2, "move": "hu", "deltas": [-3, 1, 2, 0]}],
            "next_dealer": 0,
            "end": "first_win",
        },
    },
    # 抢杠胡. Seat 0 discards 5p; seat 1 (waiting on 5p) passes (过胡, §4.4), seat 2
    # pongs and discards 1m. Draws: seat 3 9s, seat 0 8m, seat 1 9m (its next draw ends
    # the 过胡 block), seat 2 the fourth 5p and declares 加杠 5p (action 11). Seat 1 robs
    # it (action 12): 123m456m789m 456p 11p = 平胡 1 + 抢杠 1 = 2 fan, 2 points, paid by
    # the konger as a discarder (§4.3, §7.1). No kong payment: the kong never happened.
    "robbed_kong": {
        "rules": {},
        "hands": ("5p66p77p88p99p55m66m", "123m456m789m11p46p", "55p111m222m333m44m", SEAT3),
        "fourteenth": "7m",
        "draws": "9s8m9m5p",
        "tail": "",
        "actions": [
            *VOIDS,
            [0, "discard 5p"],
            [1, "pass"],
            [2, "pong"],
            [2, "discard 1m"],
            [3, "discard 9s"],
            [0, "discard 8m"],
            [1, "discard 9m"],
            [2, "added_kong 5p"],
            [1, "hu"],
        ],
        "result": {
            "scores": [0, 2, -2, 0],
            "wins": [win(1, "5p", 2, 2, "pinghu", ["qiang_gang"])],
            "payments": [{"action": 12, "seat": 1, "move": "hu", "deltas": [0, 2, -2, 0]}],
        },
    },
    # 杠上炮 and 呼叫转移. Seat 0 (dealer, 14 tiles) declares 暗杠 1m (action 4): each
    # other player pays concealed_kong_pays (2) x base (§7.2): [6, -2, -2, -2]. Its
    # replacement draw is 2m (from the tail); it discards 7m (action 5), and seat 1
    # (234m456m89m11p456p) wins on it (action 6): 234m 456m 789m 456p 11p = 平胡 1 +
    # 杠上炮 1 = 2 fan, 2 points, plus the whole kong income 6 handed on (§7.1, §10.1.7):
    # seat 0 pays 8. Scores [-2, 6, -2, -2].
    "kong_discard_transfer": {
        "rules": {},
        "hands": ("1111m7m22m33p55p8p9p", "234m456m89m11p456p", "333m666m999m77p8p2p", SEAT3),
        "fourteenth": "6p",
        "draws": "",
        "tail": "2m",
        "actions": [*VOIDS, [0, "concealed_kong 1m"], [0, "discard 7m"], [1, "hu"]],
        "result": {
            "scores": [-2, 6, -2, -2],
            "wins": [win(1, "7m", 0, 2, "pinghu", ["gang_shang_pao"])],
            "payments": [
                {"action": 4, "seat": 0, "move": "concealed_kong 1m", "deltas": [6, -2, -2, -2]},
                {"action": 6, "seat": 1, "move": "hu", "deltas": [-8, 8, 0, 0]},
            ],
        },
    },
    # 天胡 with 自摸加底. The dealer's 14 tiles after 定缺 are 123m456m789m11p234p: its
    # very first action is hu (§10.1.3). 天胡 is a 6-fan base pattern: 2 ** 5 = 32
    # points; a self-draw: every other active player pays 32 plus the base bonus 1
    # (self_draw_bonus = base, §7.1). No tile for 天胡 (§10). Scores [99, -33, -33, -33].
    "heavenly_with_base_bonus": {
        "rules": {"self_draw_bonus": "base"},
        "hands": ("123m456m789m11p23p", "258m258m333p999p6p", "369m369m44p66p7p11p", SEAT3),
        "fourteenth": "4p",
        "draws": "",
        "tail": "",
        "actions": [*VOIDS, [0, "hu"]],
        "result": {
            "scores": [99, -33, -33, -33],
            "wins": [win(0, None, None, 6, "tianhu")],
            "payments": [{"action": 4, "seat": 0, "move": "hu", "deltas": [99, -33, -33, -33]}],
        },
    },
}


def record(case: dict) -> dict:
    """The game record of one case (the wall laid out from the hands written above)."""
    rules = RuleConfig(**case["rules"])
    wall = build_wall(case["hands"], case["fourteenth"], case["draws"], case["tail"])
    return {
        "format": "sichuan-mahjong-record/1",
        "rules": rules.to_dict(),
        "dealer": 0,
        "exchange_offset": None,
        "wall": wall,
        "actions": case["actions"],
        "result": case["result"],
    }


def main() -> None:
    """Write one JSON record per case."""
    OUT.mkdir(exist_ok=True)
    for name, case in CASES.items():
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(record(case), indent=1, ensure_ascii=False) + "\n")
        print(path)


if __name__ == "__main__":
    main()
