"""A population of rule-based opponents with distinct, documented styles (numba, observation v1).

For opponent identification and exploitation research: each style plays
differently in ways a model can learn to tell apart, and all are as fast as
the heuristic (one numba kernel over a batch).

- ``value`` (``ValueAgent``): goes for 清一色 and 对对胡. With 8 or more tiles of
  one kept suit (and no meld outside it) it plays for the flush: tiles of the
  other kept suit go first even at one shanten more, and it pongs only in the
  flush suit. With four or more pairs and triplets it plays for all
  triplets: singles go first and it pongs every pair it can.
- ``defensive`` (``DefensiveAgent``): folds against visible threats. An
  opponent is a threat while it has not won and shows two or more melds,
  or one meld when 32 or fewer tiles are left. Facing a threat when two or
  more tiles from ready, it discards the safest tile: a tile of the threat's
  declared void suit is safe against it (it can never win on it); a tile it
  discarded itself is nearly safe; then terminals before middle tiles. It
  never pongs while folding. Late in the hand (20 or fewer tiles left) every
  active opponent counts as a threat.
- ``heuristic`` and ``random`` (``sichuan_env.agents.rule_based.heuristic``, ``sichuan_env.agents.rule_based.random_agent``)
  complete the population.

Every style always takes a win, declares the same void as the heuristic, and
only ever answers an action its mask allows. ``python -m sichuan_env.agents.rule_based.population
--walls 200`` prints their duplicate results against each other: one match
of the four styles together (value, defensive, heuristic, random), then each
style in one seat against three heuristics.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numba
import numpy as np
from sichuan_env.agents.base import BaseAgent
from sichuan_env.agents.rule_based.heuristic import (
    OBS_MIN_ROWS,
    _claim,
    _first_legal,
    decide,
    hand_of,
    self_kong_within,
    unseen_of,
    void_of,
)

from sichuan_env._jit import njit
from sichuan_env.encoding import observation as O
from sichuan_env.engine.actions import DISCARD, HU, KONG, PASS, PONG
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables
from sichuan_env.kernels.ukeire import discard_table_of

VALUE = 1
DEFENSIVE = 2


@njit
def _melds_of(obs, r: int) -> int:
    n = 0
    for k in range(3):
        for t in range(27):
            n += obs[O.MELDS + 3 * r + k, t] != 0
    return n


@njit
def _meld_suits(obs, r: int) -> int:
    suits = 0
    for k in range(3):
        for t in range(27):
            if obs[O.MELDS + 3 * r + k, t]:
                suits |= 1 << (t // 9)
    return suits


@njit
def _value_mode(hand, void, obs) -> tuple:
    """(flush suit or -1, all-triplets plan)."""
    flush = -1
    for s in range(3):
        if s == void:
            continue
        n = 0
        for r in range(9):
            n += hand[9 * s + r]
        if n >= 8 and (_meld_suits(obs, 0) & ~(1 << s)) == 0:
            flush = s
    pairs = 0
    for t in range(27):
        pairs += hand[t] >= 2
    return flush, pairs >= 4  # melds are always triplets: only the concealed part matters


@njit
def _threats(obs) -> np.ndarray:
    """1 for each opponent (relative 1..3) that is a visible threat."""
    left_cols = 0
    for k in range(27):
        left_cols += obs[O.WALL, k] != 0
    out = np.zeros(4, dtype=np.int64)
    for r in range(1, 4):
        if obs[O.WON + 2 * r, 0]:
            continue
        melds = _melds_of(obs, r)
        if melds >= 2 or (melds >= 1 and left_cols <= 16) or left_cols <= 10:
            out[r] = 1
    return out


@njit
def _danger(obs, t: int, threats) -> int:
    d = 0
    for r in range(1, 4):
        if not threats[r]:
            continue
        if obs[O.VOIDS + r, t]:
            continue  # the threat's void suit: it can never win on this tile
        if obs[O.DISCARDS + 4 * r, t]:
            d += 1
        else:
            rank = t % 9
            d += 3 if 2 <= rank <= 6 else 2
    return d


@njit
def decide_style(obs, mask, dist, style: int) -> int:
    """The action of a population style for one (observation, mask); -1 only for an empty mask."""
    if obs.shape[0] < OBS_MIN_ROWS or obs.shape[1] != 27 or mask.shape[0] != 88:
        return -1
    if mask[HU]:
        return HU
    hand = np.zeros(27, dtype=np.uint8)
    hand_of(obs, hand)
    void = void_of(obs)
    if mask[PONG] or mask[KONG] or mask[PASS]:
        claim_tile = -1
        for u in range(27):
            if obs[O.CLAIM, u]:
                claim_tile = u
        if style == DEFENSIVE and _threats(obs).sum() > 0 and shanten(hand, void, dist) >= 2:
            return PASS if mask[PASS] else _first_legal(mask)
        if style == VALUE and claim_tile >= 0 and mask[PONG] and hand[claim_tile] >= 2:
            flush, triplets = _value_mode(hand, void, obs)
            if (flush >= 0 and claim_tile // 9 == flush) or triplets:
                return PONG
            if flush >= 0:
                return PASS if mask[PASS] else _first_legal(mask)
        if mask[PONG] or mask[KONG]:
            a = _claim(obs, mask, hand, void, dist)
            return a if a >= 0 else _first_legal(mask)
        return PASS if mask[PASS] else _first_legal(mask)
    discards = 0
    for d in range(27):
        discards += mask[DISCARD + d] != 0
    if discards == 0:  # setup decisions (定缺, 换三张): as the heuristic
        return decide(obs, mask, dist)
    unseen = np.zeros(27, dtype=np.int64)
    unseen_of(obs, unseen)
    flush, triplets = -1, False
    threats = np.zeros(4, dtype=np.int64)
    if style == VALUE:
        flush, triplets = _value_mode(hand, void, obs)
    elif style == DEFENSIVE:
        threats = _threats(obs)
    now = 99
    best_a, best_key = -1, 1 << 60
    sh_after = np.zeros(27, dtype=np.int64)
    uk_after = np.zeros(27, dtype=np.int64)
    discard_table_of(hand, void, unseen, dist, mask[DISCARD : DISCARD + 27], sh_after, uk_after)
    for d in range(27):
        if not mask[DISCARD + d] or hand[d] == 0:
            continue
        sh, uk = sh_after[d], uk_after[d]
        now = min(now, sh)
        key = sh * 1000 - uk
        if style == VALUE:
            if flush >= 0 and d // 9 != flush and d // 9 != void:
                key -= 1500  # the other kept suit goes, even one shanten further away
            elif triplets and hand[d] == 1:
                key -= 1500  # singles go
        elif style == DEFENSIVE and threats.sum() > 0:
            key = _danger(obs, d, threats) * 100000 + key
        if key < best_key:
            best_a, best_key = DISCARD + d, key
    if style != DEFENSIVE or threats.sum() == 0 or now < 2:
        kong = self_kong_within(mask, hand, void, dist, now)
        if kong >= 0:
            return kong
    return best_a if best_a >= 0 else _first_legal(mask)


@njit(parallel=True)
def decide_style_batch(obs, masks, dist, style: int, out) -> None:
    """``decide_style`` for every row, parallel over the cores."""
    for i in numba.prange(obs.shape[0]):
        out[i] = decide_style(obs[i], masks[i], dist, style)


class _StyleAgent(BaseAgent):
    style = 0
    obs_version = 1

    def __init__(self, seed: int | None = None) -> None:
        self._dist = get_tables()["DIST"]

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.empty(len(masks), dtype=np.int64)
        decide_style_batch(obs, masks, self._dist, self.style, out)
        return out


class ValueAgent(_StyleAgent):
    """Plays for 清一色 and 对对胡 (see the module docstring)."""

    name = "value"
    style = VALUE


class DefensiveAgent(_StyleAgent):
    """Folds against visible threats (see the module docstring)."""

    name = "defensive"
    style = DEFENSIVE


STYLES = ("value", "defensive", "heuristic", "random")
"""The population, as registered agent names."""


def population_table(walls: int, seed: int = 0, progress: bool = False) -> dict:
    """Duplicate results: the four styles together, then each style against three heuristics."""
    from sichuan_env.agents.eval.evaluate import play_duplicate
    from sichuan_env.agents.eval.match_stats import summarize

    from sichuan_env import RuleConfig

    rules = RuleConfig()
    out = {
        "together": summarize(
            list(STYLES), play_duplicate(list(STYLES), walls, rules, seed, progress), walls
        )
    }
    for style in STYLES[:2] + STYLES[3:]:
        lineup = [style, "heuristic", "heuristic", "heuristic"]
        out[f"{style}_vs_heuristics"] = summarize(
            lineup, play_duplicate(lineup, walls, rules, seed, progress), walls
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the population's duplicate tables (and write JSON with ``--json``)."""
    from sichuan_env.agents.eval.match_stats import print_table

    from sichuan_env._cli import PlainHelp, int_arg, path_problem, write_atomic

    p = argparse.ArgumentParser(prog="python -m sichuan_env.agents.rule_based.population", description=__doc__,
                                formatter_class=PlainHelp)  # fmt: skip
    p.add_argument("--walls", type=int_arg(1, 100_000), default=200)
    p.add_argument("--seed", type=int_arg(0, 2**62), default=0)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if args.json is not None and (problem := path_problem(args.json)):
        p.error(problem)
    tables = population_table(args.walls, args.seed, progress=True)
    for name, summary in tables.items():
        print(f"\n{name} ({args.walls} walls x 4 rotations)")
        print_table(summary)
    if args.json is not None:
        write_atomic(
            args.json, json.dumps({"walls": args.walls, "seed": args.seed, **tables}, indent=1)
        )
    return 0


if __name__ == "__main__":
    from sichuan_env._cli import run

    sys.exit(run(main, "python -m sichuan_env.agents.rule_based.population"))
