"""Does searching the claim answers (or 定缺) add points? The rollout search with and without, same walls.

    python -m research.exit.claims_search --walls 400 --out research/exit/results/claims_search.json
    python -m research.exit.claims_search --scope setup --walls 400 --out research/exit/results/setup_search.json

One searching seat against three heuristics (``sichuan_env.agents.search.play``), every
wall played with the searcher in each of the four seats, once searching own
turns only and once own turns and claim answers (hu / pong / kong / pass).
A wall's figure is the mean of its four seats (the all-heuristic game is
zero-sum, so it estimates the gain over the heuristic); intervals are 95%
over walls, the difference paired wall by wall. Also: decisions searched,
deviations from the heuristic and searched decisions per second, and the
advantage estimate: each deviation's gain over the heuristic's action on the
true hands with the undrawn wall reshuffled 32 times, summed per hand
(``sichuan_env.agents.search.play.advantage``; by the performance-difference
identity an unbiased estimate of the gain per hand, with far less variance
than the match result).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.search.play import play_batch

from sichuan_env import RuleConfig
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables


def play(walls: int, seed: int, samples: int, draws: int, z: float, claims: bool,
         setup: bool = False) -> dict:  # fmt: skip
    """Per-wall mean points of the searching seat, and the search's counters."""
    t = get_tables()
    env = (np.zeros(4, np.int64), RuleConfig().as_array(), t["FLAGS"], t["WAITS"], t["DIST"])
    n = 4 * walls
    seeds = np.repeat(np.arange(walls, dtype=np.uint64) + np.uint64(seed) * np.uint64(1 << 32), 4)
    seats = np.tile(np.arange(4), walls)
    out = [np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n)]
    games, scratch = np.zeros(n, STATE_DTYPE), np.zeros((n, 2), STATE_DTYPE)
    t0 = time.perf_counter()
    play_batch(games, scratch, seeds, seats, (samples, draws, 1, z, claims, setup), env, *out)
    secs = time.perf_counter() - t0
    points, searched, deviations, gain = out
    return {"per_wall": points.reshape(walls, 4).mean(1), "adv_per_wall": gain.reshape(walls, 4).mean(1),
            "searched": int(searched.sum()), "deviations": int(deviations.sum()), "seconds": secs}  # fmt: skip


def _ci(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x)))


def main(argv: list[str] | None = None) -> int:
    """Play both searches on the same walls, print the table, write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--walls", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--draws", type=int, default=8)
    p.add_argument("--z", type=float, default=1.0)
    p.add_argument("--out", type=Path)
    p.add_argument("--scope", choices=("claims", "setup"), default="claims", help="what the second search also searches: claim answers, or the 定缺 declaration")  # fmt: skip
    args = p.parse_args(argv)
    if args.walls < 2:
        p.error("--walls must be at least 2 (an interval needs two walls)")
    claims, setup = args.scope == "claims", args.scope == "setup"
    play(
        2, args.seed + 1, 2, 1, args.z, claims, setup
    )  # compile (or load the cache) outside the timing
    res = {
        c: play(args.walls, args.seed, args.samples, args.draws, args.z, c and claims, c and setup)
        for c in (False, True)
    }
    rows = {}
    for c, name in ((False, "own turns"), (True, f"own turns + {args.scope}")):
        r = res[c]
        m, e = _ci(r["per_wall"])
        a, ae = _ci(r["adv_per_wall"])
        rows[name] = {"points_per_hand": m, "ci95": e, "advantage_per_hand": a, "advantage_ci95": ae,
                      "searched": r["searched"],
                      "deviations": r["deviations"], "seconds": round(r["seconds"], 1),
                      "searched_per_s": r["searched"] / r["seconds"]}  # fmt: skip
    d, de = _ci(res[True]["per_wall"] - res[False]["per_wall"])
    ad, ade = _ci(res[True]["adv_per_wall"] - res[False]["adv_per_wall"])
    for name, r in rows.items():
        print(f"{name:20s} {r['points_per_hand']:+.3f} ± {r['ci95']:.3f} points/hand vs 3 heuristics "
              f"(advantage estimate {r['advantage_per_hand']:+.3f} ± {r['advantage_ci95']:.3f}); "
              f"{r['searched']} searched ({r['deviations']} deviations), {r['searched_per_s']:.0f}/s")  # fmt: skip
    print(
        f"{args.scope} - own turns    {d:+.3f} ± {de:.3f} (paired over {args.walls} walls); "
        f"advantage estimate {ad:+.3f} ± {ade:.3f}"
    )
    if args.out:
        doc = {"settings": vars(args) | {"out": str(args.out)}, "rows": rows,
               f"{args.scope}_gain": {"points_per_hand": d, "ci95": de, "advantage_per_hand": ad,
                               "advantage_ci95": ade}, "machine": platform.platform(),
               "command": "python -m research.exit.claims_search " + " ".join(argv or sys.argv[1:])}  # fmt: skip
        args.out.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
