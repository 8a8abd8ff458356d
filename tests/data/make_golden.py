"""Regenerate the golden game records: ``python tests/data/make_golden.py``.

Each record is a whole hand played by the engine's greedy self-play policy
through the ``Game`` facade; ``tests/test_golden.py`` replays them and
compares every result field. Regenerate only when a rule change is intended,
and say so in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sichuan_env import Game, RuleConfig
from sichuan_env.engine import selfplay
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import PRESETS, kernel_rules

OUT = Path(__file__).parent / "golden"
CASES = [(name, seed) for name in sorted(PRESETS) for seed in (1, 2)] + [
    ("no_void", 3),
]


def play(rules: RuleConfig, seed: int) -> dict:
    """One greedy hand through the facade; returns its record."""
    tables = get_tables()
    game = Game(rules, seed=seed)
    mask = np.zeros(ACTION_SPACE, dtype=np.int8)
    rng = np.uint64(seed)
    while not game.is_over():
        mask[:] = 0
        legal = game.legal_ids()
        mask[legal] = 1
        action, rng = selfplay.choose(
            game._st[0], mask, len(legal), rng, selfplay.GREEDY, kernel_rules(rules), tables["DIST"]
        )
        rng = np.uint64(rng)
        game.step_id(int(action))
    return game.record()


def main() -> None:
    """Write one JSON record per case."""
    OUT.mkdir(exist_ok=True)
    for name, seed in CASES:
        rules = RuleConfig(declare_void=False) if name == "no_void" else PRESETS[name]
        record = play(rules, seed)
        path = OUT / f"{name}-{seed}.json"
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(path, record["result"]["scores"], len(record["result"]["wins"]), "wins")


if __name__ == "__main__":
    main()
