"""A short tour of the hand core: ``python -m sichuan_env``.

Scores the worked examples of docs/rules.md §12, shows waits and shanten, then
evaluates a million dealt hands in batch and prints the throughput.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TypedDict

import numpy as np

from . import (
    best_wait_score,
    is_win_batch,
    parse,
    score_win,
    shanten,
    shanten_batch,
    tile_name,
    waits,
    waits_batch,
)
from ._cli import PlainHelp, int_arg, run


class _How(TypedDict, total=False):
    """How an example's hand is won (score_win's keywords; none: on a discard)."""

    self_draw: bool
    after_kong: bool
    robbing_kong: bool


EXAMPLES: list[tuple[str, list[tuple[str, str]], _How]] = [
    ("123m345m222p999p66p", [], {}),
    ("11223344556677m", [], {}),
    ("1111m9999m44p66p88p", [], {}),
    ("555s888s55m", [("pong", "2s"), ("pong", "2m")], {}),
    ("123m345m999p66p", [("kong", "2p")], {"self_draw": True, "after_kong": True}),
    ("12345678999m", [("pong", "9p")], {"robbing_kong": True}),
    ("123m345m222p999p66s", [], {}),
]


def deal(n: int, size: int, seed: int) -> np.ndarray:
    """``n`` hands of ``size`` tiles dealt from shuffled 108-tile walls."""
    rng = np.random.default_rng(seed)
    walls = np.argsort(rng.random((n, 108)), axis=1)[:, :size] // 4
    hands = np.zeros((n, 27), dtype=np.uint8)
    np.add.at(hands, (np.repeat(np.arange(n), size), walls.ravel()), 1)
    return hands


MAX_HANDS = 2_000_000
"""Largest batch of the demo (dealing takes about 2 KB of memory per hand)."""


def main(argv: list[str] | None = None) -> int:
    """Print the tour; ``--hands N`` sets the batch size. Bad usage exits with status 2."""
    parser = argparse.ArgumentParser(
        prog="python -m sichuan_env", description=__doc__, formatter_class=PlainHelp
    )
    parser.add_argument(
        "--hands",
        type=int_arg(1, MAX_HANDS),
        default=1_000_000,
        help=f"hands in the batch demo (1..{MAX_HANDS})",
    )
    args = parser.parse_args(argv)

    print("Worked examples (docs/rules.md §12):")
    print(f"  {'concealed':<22} {'melds':<22} {'how':<22} {'fan':>3}  reading")
    for concealed, melds, ctx in EXAMPLES:
        r = score_win(concealed, melds, **ctx)
        meld_text = " ".join(f"{k} {t}" for k, t in melds) or "-"
        how = ", ".join(ctx) or "discard"
        if r is None:
            print(f"  {concealed:<22} {meld_text:<22} {how:<22} {'-':>3}  not a win")
        else:
            extras = f" + {', '.join(r.extras)}" if r.extras else ""
            print(
                f"  {concealed:<22} {meld_text:<22} {how:<22} {r.fan:>3}  "
                f"{r.base}, roots {r.roots}{extras} -> {r.points} pt"
            )

    print("\nWaits, shanten and 查大叫 (void suit s):")
    for text in (
        "1112345678999m",
        "123m345m222p999p6p",
        "1111m9999m44p66p8p",
        "147m258p369m1p2p3p5p",
    ):
        h = parse(text)
        w = " ".join(tile_name(int(t)) for t in waits(h, "s")) or "-"
        best = best_wait_score(h, void="s")
        best_text = f"best {tile_name(best.tile)} = {best.score.fan} fan" if best else "not tenpai"
        print(f"  {text:<22} shanten {shanten(h, 's'):>2}  waits {w:<28} {best_text}")

    n = args.hands
    hands14 = deal(n, 14, seed=0)
    hands13 = hands14.copy()
    hands13[np.arange(n), np.argmax(hands13 > 0, axis=1)] -= 1
    for func, data in ((is_win_batch, hands14), (shanten_batch, hands14), (waits_batch, hands13)):
        func(data[:1000])  # compile / load outside the timing
    print(f"\nBatched over {n:,} dealt hands:")
    for name, func, data in (
        ("is_win", is_win_batch, hands14),
        ("shanten", shanten_batch, hands14),
        ("waits", waits_batch, hands13),
    ):
        t0 = time.perf_counter()
        out = func(data)
        dt = time.perf_counter() - t0
        summary = {
            "is_win": lambda o: f"{int(o.sum())} complete",
            "shanten": lambda o: (
                "shanten histogram " + str(np.bincount(o.astype(np.int64) + 1).tolist())
            ),
            "waits": lambda o: f"{int(o.any(axis=1).sum())} tenpai",
        }[name](out)
        print(f"  {name:<8} {n / dt / 1e6:7.1f} M hands/s   {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "python -m sichuan_env.demo"))
