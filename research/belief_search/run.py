"""Do belief-resampled determinizations make the rollout search stronger? Same walls, same samples.

    python -m research.belief_search.run --walls 256 --out research/belief_search/results/belief_search.json

One searching seat against three heuristics, every wall played with the
searcher in each of the four seats. At each of the searcher's own turns three
searches run on the same state with the same rollout seed (``search_action``,
32 samples, gap 1, z 1):

- ``belief``: each sample keeps one of 32 uniform deals (``--draws``), resampled by the
  belief model's likelihood ratio (``BeliefSearchAgent``; the model reads the
  seat's public observation v2);
- ``ready``: of 8 uniform deals (``--ready-draws``), the one whose opponents are
  closest to ready kept (the shipped ``SearchAgent``);
- ``uniform``: one uniform deal per sample.

The ``belief`` action is played. Where two searches disagree, the gain of the
belief action over the other is estimated on the true hands with the undrawn
wall reshuffled 32 times, every seat playing the heuristic afterwards
(``sichuan_env.agents.search.play.advantage``); summed per hand, this is the
performance-difference estimate of the points per hand the belief
determinizations add (an estimate with a heuristic continuation, far less
noisy than comparing match results). Also the belief searcher's own points
(per wall, the mean of its four seats: the all-heuristic game is zero-sum, so
this estimates its gain over the heuristic) and its gain over the heuristic's
action, estimated the same way.

Hands run in blocks of ``--block`` walls; each finished block is appended to
``OUT.blocks.jsonl`` and ``--resume`` skips the blocks there (a larger
``--walls`` with ``--resume`` extends a run).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
from rich.progress import Progress
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.belief_agent import belief_rows
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.play import advantage
from sichuan_env.agents.search.rollout import MAX_CANDIDATES, search_action
from sichuan_env.train.common import git_commit

from research.exit.claims_search import play
from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal_seed, splitmix64
from sichuan_env.engine.state import PH_OVER, PH_TURN, STATE_DTYPE
from sichuan_env.engine.step import apply
from sichuan_env.kernels.tables import get_tables

COLUMNS = ("points", "decisions", "dev_ready", "dev_uniform", "dev_style",
           "adv_ready", "adv_uniform", "adv_style")  # fmt: skip
"""Per-hand counters: the searcher's points, its searched decisions, the decisions where
the belief action differs from the other's, and the summed estimated gains over it."""


@njit(parallel=True)
def advance(games, seats, env) -> None:
    """Play every hand's style actions until its searcher's own turn or the end."""
    styles, rules, flags, waits, dist = env
    for i in numba.prange(games.shape[0]):
        st = games[i]
        obs = np.zeros((83, 27), dtype=np.uint8)
        mask = np.zeros(88, dtype=np.int8)
        while st.phase != PH_OVER and not (st.phase == PH_TURN and st.to_act == seats[i]):
            apply(
                st,
                style_action(st, styles[st.to_act], rules, flags, obs, mask, dist),
                rules,
                flags,
                waits,
            )


@njit(parallel=True)
def decide(games, idx, scratch, bel, seeds, knobs, env, out) -> None:
    """Search ``games[idx[j]]`` three ways, record the disagreements and play the belief action."""
    n_samples, draws = knobs
    styles, rules, flags, waits, dist = env
    raw_games = games.view(np.uint8).reshape(games.shape[0], -1)
    for j in numba.prange(idx.shape[0]):
        i = idx[j]
        st = games[i]
        raw = scratch[i].view(np.uint8).reshape(2, -1)
        obs = np.zeros((83, 27), dtype=np.uint8)
        mask = np.zeros(88, dtype=np.int8)
        cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
        gains = np.zeros(MAX_CANDIDATES, dtype=np.float64)
        vals = np.zeros((n_samples, MAX_CANDIDATES), dtype=np.float64)
        none = np.zeros((0, BELIEF_COLUMNS), dtype=np.float64)
        rng, r = splitmix64(seeds[i] ^ np.uint64(out[i, 1] + 1) * np.uint64(0x9E3779B97F4A7C15))
        acts = np.zeros(3, dtype=np.int64)
        for v in range(3):  # belief, ready, uniform: the same rollout seed
            b = bel[j] if v == 0 else none
            d = draws[v]
            acts[v] = search_action(
                scratch[i], raw, raw_games[i], n_samples, d, 1, 1.0, False, False, b, -1, r,
                styles, rules, flags, waits, obs, mask, dist, cands, gains, vals,
            )  # fmt: skip
        a = acts[0]
        other = acts[1], acts[2], style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        out[i, 1] += 1
        for k in range(3):
            if other[k] != a:
                out[i, 2 + k] += 1
                rng, r2 = splitmix64(rng)
                g, _ = advantage(scratch[i], raw, raw_games[i], a, other[k], 32, r2, env, obs, mask)
                out[i, 5 + k] += g
        apply(st, a, rules, flags, waits)


def play_block(first_wall: int, walls: int, seed: int, model: BeliefModel, samples: int,
               draws: tuple[int, int, int], progress: Progress | None = None) -> np.ndarray:  # fmt: skip
    """``float64[4 * walls, len(COLUMNS)]``: the counters of every (wall, seat) hand of the block."""
    t = get_tables()
    rules = RuleConfig().as_array()
    env = (np.zeros(4, np.int64), rules, t["FLAGS"], t["WAITS"], t["DIST"])
    n = 4 * walls
    wall_ids = np.repeat(np.arange(first_wall, first_wall + walls, dtype=np.uint64), 4)
    seeds = wall_ids + np.uint64(seed) * np.uint64(1 << 32)
    seats = np.tile(np.arange(4, dtype=np.int64), walls)
    games, scratch = np.zeros(n, STATE_DTYPE), np.zeros((n, 2), STATE_DTYPE)
    for i in range(n):
        deal_seed(games, i, seeds[i], rules)
    out = np.zeros((n, len(COLUMNS)), dtype=np.float64)
    task = (
        progress.add_task(f"walls {first_wall}-{first_wall + walls - 1}", total=n)
        if progress
        else None
    )
    while True:
        advance(games, seats, env)
        idx = np.flatnonzero(games["phase"] != PH_OVER)
        if progress is not None and task is not None:
            progress.update(task, completed=n - idx.size)
        if idx.size == 0:
            break
        bel = belief_rows(model, games[idx], RuleConfig())
        decide(games, idx, scratch, bel, seeds, (samples, draws), env, out)
    out[:, 0] = games["scores"][np.arange(n), seats]
    return out


def _ci(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x)))


def summarize(rows: np.ndarray, walls: int) -> dict:
    """Per-wall means (the four seats of a wall), with 95% intervals over walls."""
    per_wall = rows.reshape(walls, 4, len(COLUMNS)).mean(1)
    out: dict = {"walls": walls, "hands": int(rows.shape[0]), "decisions": int(rows[:, 1].sum())}
    for c, name in enumerate(COLUMNS):
        if name.startswith("adv") or name == "points":
            out[name] = _ci(per_wall[:, c])
        elif name.startswith("dev"):
            out[name + "_rate"] = float(rows[:, c].sum() / max(rows[:, 1].sum(), 1))
    return out


def main(argv: list[str] | None = None) -> int:
    """Play the blocks (resumable), print the table, write the JSON."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--walls", type=int, default=256)
    p.add_argument(
        "--block", type=int, default=32, help="walls per block (a line of OUT.blocks.jsonl)"
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--samples", type=int, default=32)
    p.add_argument(
        "--draws", type=int, default=32, help="deals the belief resampling chooses among"
    )
    p.add_argument(
        "--ready-draws", type=int, default=8, help="deals the closest-to-ready rule chooses among"
    )
    p.add_argument("--belief", default="belief", help="belief checkpoint (name or .pt)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--direct", action="store_true", help="also play the shipped search on the same walls and seats (a direct, noisier comparison)")  # fmt: skip
    args = p.parse_args(argv)
    if (
        args.walls < 2
        or args.block < 1
        or args.samples < 2
        or args.draws < 2
        or args.ready_draws < 1
    ):
        p.error("--walls >= 2, --block >= 1, --samples >= 2, --draws >= 2, --ready-draws >= 1")
    keys = ("walls", "block", "seed", "samples", "draws", "ready_draws", "belief")
    settings = {k: getattr(args, k) for k in keys}
    same = {k: v for k, v in settings.items() if k != "walls"}  # more walls extend a run
    log = args.out.with_suffix(".blocks.jsonl")
    done: dict[int, list] = {}
    if log.exists():
        if not args.resume:
            p.error(f"{log} exists: pass --resume to continue it, or another --out")
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if {k: v for k, v in rec["settings"].items() if k != "walls"} != same:
                p.error(f"{log} was written with other settings: {rec['settings']}")
            done[int(rec["first_wall"])] = rec["rows"]
    model = BeliefModel.load(args.belief)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with Progress() as progress:
        for first in range(0, args.walls, args.block):
            if first in done:
                continue
            walls = min(args.block, args.walls - first)
            draws = (args.draws, args.ready_draws, 1)
            rows = play_block(first, walls, args.seed, model, args.samples, draws, progress)
            done[first] = rows.tolist()
            with log.open("a") as f:
                f.write(
                    json.dumps({"settings": settings, "first_wall": first, "rows": done[first]})
                    + "\n"
                )
    rows = np.concatenate(
        [np.asarray(done[k], dtype=np.float64) for k in sorted(done) if k < args.walls]
    )
    summary = summarize(rows, len(rows) // 4)
    if args.direct:  # the closest-to-ready searcher's own match on the same walls and seats
        walls = len(rows) // 4
        ready = play(walls, args.seed, args.samples, args.ready_draws, 1.0, False)
        mine = rows[:, 0].reshape(walls, 4).mean(1)
        summary["ready_points"] = _ci(ready["per_wall"])
        summary["points_minus_ready_points"] = _ci(mine - ready["per_wall"])
        summary["ready_seconds"] = ready["seconds"]
    doc = {"question": "belief-resampled determinizations vs closest-to-ready and uniform ones",
           "settings": settings, "summary": summary, "seconds_this_run": time.perf_counter() - t0,
           "machine": platform.platform(), "cpus": numba.config.NUMBA_NUM_THREADS,
           "commit": git_commit(), "command": " ".join(["python -m research.belief_search.run", *sys.argv[1:]])}  # fmt: skip
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    s = summary
    print(f"{s['walls']} walls x 4 seats, {s['decisions']} searched own turns")
    print(
        f"belief searcher vs 3 heuristics: {s['points'][0]:+.3f} ± {s['points'][1]:.3f} points/hand"
    )
    for name, label in (("ready", "closest-to-ready search"), ("uniform", "uniform-deal search"),
                        ("style", "heuristic")):  # fmt: skip
        m, h = s["adv_" + name]
        print(
            f"gain over the {label}: {m:+.3f} ± {h:.3f} /hand (differs on {s['dev_' + name + '_rate']:.1%})"
        )
    if "ready_points" in s:
        print(
            f"the closest-to-ready searcher's own match: {s['ready_points'][0]:+.3f} ± {s['ready_points'][1]:.3f};"
            f" belief minus it, wall by wall: {s['points_minus_ready_points'][0]:+.3f} ± {s['points_minus_ready_points'][1]:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
