"""Hand-evaluation throughput: sichuan_env against peer libraries, in the same run.

    python -m benchmarks.hand_eval                 # full run (about 2 minutes)
    python -m benchmarks.hand_eval --quick         # smaller corpus and budgets

One fixed, seeded corpus of Sichuan hands (``benchmarks/corpus.py``):
is_win on 14-tile hands, waits and shanten on 13-tile hands, score_win on
the complete 14-tile hands. sichuan_env is timed as single calls from Python
and batched on 1 and 2 cores; each installed peer is called on the same hands
in its own 34-tile layout (conversion not timed) for a fixed time budget.
Figures are medians of repeats; compare ratios within one run, since these
machines are noisy. Prints a table and writes JSON (machine, commit, figures).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba
import numpy as np

from benchmarks import common
from benchmarks import peers as peer_lib
from benchmarks.common import check_json_arg, log, median_time, write_results
from benchmarks.corpus import digest, make_corpus
from sichuan_env import (
    is_win,
    is_win_batch,
    score_win,
    score_win_batch,
    shanten,
    shanten_batch,
    waits,
    waits_batch,
)
from sichuan_env._cli import float_arg, int_arg

TASKS = ("is_win", "waits", "shanten", "score_win")


def our_answers(h14: np.ndarray, h13: np.ndarray) -> dict[str, list]:
    """Our answers on the corpus, for the agreement column."""
    w = waits_batch(h13)
    return {
        "is_win": is_win_batch(h14).tolist(),
        "shanten": shanten_batch(h13).tolist(),
        "waits": [tuple(np.flatnonzero(row).tolist()) for row in w],
    }


def bench_ours(h14, h13, wins, n_single: int, repeats: int) -> list[dict]:
    """Single calls and batched calls of sichuan_env."""
    rows = []
    data = {"is_win": h14, "waits": h13, "shanten": h13, "score_win": wins}
    singles = {"is_win": is_win, "waits": waits, "shanten": shanten, "score_win": score_win}
    batches = {
        "is_win": is_win_batch,
        "waits": waits_batch,
        "shanten": shanten_batch,
        "score_win": score_win_batch,
    }
    for task in TASKS:
        hands = list(data[task][:n_single])
        f = singles[task]

        def loop(f=f, hands=hands) -> None:
            for h in hands:
                f(h)

        dt = median_time(loop, max(1, repeats // 2))
        rows.append(_row(task, "sichuan_env", "single call", len(hands), dt))
        log(f"  sichuan_env {task:<9} single      {len(hands) / dt / 1e6:8.2f} M/s")
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        numba.set_num_threads(threads)
        for task in TASKS:
            arr = data[task]
            dt = median_time(lambda f=batches[task], arr=arr: f(arr), repeats)
            mode = f"batch, {threads} core{'s' if threads > 1 else ''}"
            rows.append(_row(task, "sichuan_env", mode, len(arr), dt))
            log(f"  sichuan_env {task:<9} {mode:<11} {len(arr) / dt / 1e6:8.2f} M/s")
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def bench_peer(peer, h14, h13, ours: dict, budget: float) -> list[dict]:
    """Time one peer on each task it supports, within ``budget`` seconds per task."""
    rows = []
    for task, fn in peer.tasks.items():
        source = h14 if task == "is_win" else h13
        warm_n = 4096 if peer.batched else 50
        warm = peer.prepare(source[:warm_n])
        fn(warm, warm_n)  # warm-up (and JIT compile)
        t0 = time.perf_counter()
        fn(warm, warm_n)
        per_hand = (time.perf_counter() - t0) / warm_n
        n = int(min(len(source), max(warm_n, budget / max(per_hand, 1e-9))))
        if peer.batched:
            n -= n % warm_n
        prepared = peer.prepare(source[:n])  # conversion is not timed
        t0 = time.perf_counter()
        answers = fn(prepared, n)
        dt = time.perf_counter() - t0
        agree = float(np.mean([a == b for a, b in zip(answers, ours[task][:n], strict=True)]))
        mode = "batch (jit+vmap)" if peer.batched else "single call"
        row = _row(task, peer.name, mode, n, dt)
        row["agreement"] = agree
        rows.append(row)
        log(f"  {peer.name:<11} {task:<9} {mode:<11} {n / dt / 1e6:8.3f} M/s  agrees {agree:.1%}")
    return rows


def _row(task: str, impl: str, mode: str, n: int, seconds: float) -> dict:
    return {
        "task": task,
        "implementation": impl,
        "mode": mode,
        "hands": n,
        "seconds": seconds,
        "hands_per_s": n / seconds,
        "ns_per_hand": seconds / n * 1e9,
    }


def print_table(rows: list[dict]) -> None:
    """The results table: throughput, and our speed-up over each row."""
    best = {}
    single = {}
    for r in rows:
        if r["implementation"] == "sichuan_env":
            best[r["task"]] = max(best.get(r["task"], 0), r["hands_per_s"])
            if r["mode"] == "single call":
                single[r["task"]] = r["hands_per_s"]
    cells = []
    for r in rows:
        ratio = best[r["task"]] / r["hands_per_s"]
        same = ""
        if r["implementation"] != "sichuan_env" and r["mode"] == "single call":
            same = f"{single[r['task']] / r['hands_per_s']:.1f}"
        agree = f"{r['agreement']:.1%}" if "agreement" in r else ""
        cells.append(
            [
                r["task"],
                r["implementation"],
                r["mode"],
                f"{r['hands_per_s']:,.0f}",
                f"{r['ns_per_hand']:.1f}",
                f"{ratio:.1f}",
                same,
                agree,
            ]
        )
    common.print_table(
        [("task", "left"), ("implementation", "left"), ("mode", "left")]
        + [(h, "right") for h in ("hands/s", "ns/hand", "best ours x", "single x", "agrees")],
        cells,
    )


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the JSON document it writes."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--hands",
        type=int_arg(1, 10_000_000),
        default=1_000_000,
        help="corpus size for batched calls",
    )
    p.add_argument(
        "--single", type=int_arg(1, 10_000_000), default=50_000, help="hands for single-call timing"
    )
    p.add_argument(
        "--budget", type=float_arg(0, 3600), default=2.0, help="seconds per peer and task"
    )
    p.add_argument(
        "--repeats", type=int_arg(1, 1000), default=7, help="repeats per batched measurement"
    )
    p.add_argument(
        "--peers",
        nargs="*",
        default=list(peer_lib.FACTORIES),
        choices=list(peer_lib.FACTORIES),
        help="peers to run",
    )
    p.add_argument("--seed", type=int_arg(0), default=2026, help="corpus seed (>= 0)")
    p.add_argument("--quick", action="store_true", help="100k hands, 10k singles, 0.5 s budgets")
    p.add_argument(
        "--json", type=Path, default=None, help="output path (default benchmarks/results/)"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    if args.quick:
        args.hands, args.single, args.budget, args.repeats = 100_000, 10_000, 0.5, 3

    log(f"corpus: {args.hands:,} hands, seed {args.seed}")
    h14, h13 = make_corpus(args.hands, args.seed)
    wins = h14[is_win_batch(h14)]
    ours = our_answers(h14, h13)
    log("sichuan_env:")
    rows = bench_ours(h14, h13, wins, args.single, args.repeats)
    loaded, missing = peer_lib.load(args.peers)
    for note in missing:
        log(f"  skipped {note}")
    for peer in loaded:
        log(f"{peer.name}:")
        rows += bench_peer(peer, h14, h13, ours, args.budget)
    print_table(rows)
    print("\nNotes on rules that differ from Sichuan (they explain agreement below 100%):")
    for peer in loaded:
        print(f"  {peer.name}: {peer_lib.NOTES[peer.name]}")
    for note in missing:
        print(f"  skipped {note}")

    return write_results(
        "hand_eval",
        {
            "corpus": {
                "hands": args.hands,
                "seed": args.seed,
                "digest": digest(h14, h13),
                "complete_14": len(wins),
            },
            "settings": {"single": args.single, "budget_s": args.budget, "repeats": args.repeats},
            "results": rows,
            "notes": {p.name: peer_lib.NOTES[p.name] for p in loaded},
            "skipped": missing,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
