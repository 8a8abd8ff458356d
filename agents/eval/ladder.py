r"""A ladder of agents: round-robin duplicate matches on fixed walls, and ratings with intervals.

    sichuan-ladder --agents random heuristic bc ppo distill \
        --walls 200 --out runs/ladder                       # resumable: finished pairs are kept
    sichuan-ladder --agents all --walls 200 --out runs/ladder \
        --ray local --workers 2                             # the pairs' blocks on Ray

(also ``python -m sichuan_env.agents.eval.ladder``)

Every pair of agents ``A``, ``B`` plays the same walls (``--walls``, ``--seed``)
head to head in the lineup ``A B A B``, each wall under the four rotations,
so each agent holds every seat of every wall equally often. The match is
zero-sum, so a wall's result is ``A``'s points on it (``B``'s are the
negative): a win, a draw or a loss for ``A``. The ratings are a
Bradley-Terry fit of those per-wall results (a draw counts half a win to
each), on the log scale of the odds, anchored so that ``--anchor`` (default
``heuristic`` when it plays) is 0; their 95% intervals come from resampling
each pair's walls (bootstrap). Beside them the table shows each agent's
points per hand against the field, and ``ladder.json`` holds the matrix of
head-to-head points per hand with 95% intervals. The table is ordered by
rating: a rating weighs each wall as a win, a draw or a loss, while points
per hand weigh by how much was won, so the two columns can order agents
differently (one agent that wins many walls by little outranks one that wins
few by a lot).

Each pair's per-wall points are written to ``OUT/pairs/A__B-<digest>.json`` as
soon as the pair finishes (plain, and luck-adjusted where the value model covers
the preset: ``sichuan_env.agents.eval.luck``; the ratings and points are then
fitted to the adjusted per-wall results, ``--no-adjust`` for plain;
``--estimator advantage`` adjusts by the advantage-sum estimate against
``--reference`` instead, ``sichuan_env.agents.eval.advantage``), named by a
digest of the pair's identity (``agent_identity``, ``sichuan_env.agents.eval.ladder_pairs``:
each spec, an alias's target, and the SHA-256 of every checkpoint file the agent loads,
a composite agent's several included; the readable names are inside the file); a rerun with
``--resume`` reuses every pair whose file matches the settings (walls, seed,
rules) and plays only the rest: a retrained or reshipped checkpoint, or an alias
moved to another agent, is a new pair. Pair files of an older ladder format,
which knew a registered agent by its name only, are refused by ``--resume``
(``--overwrite`` plays them again). An ``--out`` that holds a ladder is refused
unless ``--resume`` (continue) or ``--overwrite`` (replace) is given.

With fewer than ``CAUTION_WALLS`` walls per pair the table ends with a caution
line (also ``caution`` in ``ladder.json``): intervals on so few walls are rough.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.eval.adjust import (
    AdjustError,
    Corrections,
    add_ladder_estimator_args,
    add_luck_args,
    ladder_advantage,
    model_for,
)
from sichuan_env.agents.eval.advantage import AdvantageSum
from sichuan_env.agents.eval.evaluate import MAX_WALLS, play_duplicate
from sichuan_env.agents.eval.ladder_pairs import (
    FORMAT,
    SHIPPED,
    _pair_file,
    _save_json,
    _settings,
    agent_identity,
    built_identity,
    load_pair,
    older_pairs,
    pair_identity,
)
from sichuan_env.agents.eval.ladder_view import plot_ladder, print_ladder
from sichuan_env.agents.registry import available, describe

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import PlainHelp, add_overwrite, claim_output_or_exit, fail, int_arg, run
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.tiles import InputTypeError

LADDER_FILES = ("pairs", "ladder.json", "ladder.png")
"""What a ladder writes in ``--out``: ``--resume`` keeps it, ``--overwrite`` removes it first."""
HANDS_PER_WALL = 8
"""Seat-hands of one agent per wall in a head-to-head match (2 seats x 4 rotations)."""
CAUTION_WALLS = 200
"""Walls per pair below which the ladder prints a caution (the default ``--walls``).

Each pair's rating rests on its walls' wins, draws and losses, resampled by the bootstrap;
on a few dozen walls its percentile intervals are rough (too narrow), and with many pairs
some interval excludes 0 by chance: 40 walls put ``strongest`` last at -0.61 [-1.07, -0.17],
60 walls of another seed first. 200 is a floor for reading an order off the intervals, not a
guarantee: an order that matters is confirmed on fresh walls (docs/evaluation.md).
"""


def pair_points(
    records: list[tuple[int, int, dict]], walls: int, corrections: np.ndarray | None = None
) -> np.ndarray:
    """``A``'s points on each wall of a ``A B A B`` match (``B``'s are the negative).

    With ``corrections`` (``float[len(records), 4]``, ``sichuan_env.agents.eval.luck``),
    the luck-adjusted points.
    """
    points = np.zeros(walls)
    for i, (wall, rot, record) in enumerate(records):
        scores = record["result"]["scores"]
        for seat in range(4):
            if (seat + rot) % 2 == 0:  # lineup index (seat + rot) % 4 is 0 or 2: agent A
                points[wall] += scores[seat]
                if corrections is not None:
                    points[wall] -= corrections[i, seat]
    return points


def fit_bradley_terry(
    agents: list[str], pairs: dict[tuple[str, str], np.ndarray], iters: int = 2000
) -> np.ndarray:
    """Bradley-Terry strengths (log-odds scale, mean 0) from per-wall results of each pair.

    A wall ``A`` won counts 1 to ``A``, a draw 1/2 to each; every agent also gets
    half a win and half a loss against a virtual average player (a weak prior
    that keeps the fit finite when an agent won or lost every wall).
    """
    k = len(agents)
    index = {a: i for i, a in enumerate(agents)}
    wins = np.zeros((k, k))
    for (a, b), pts in pairs.items():
        i, j = index[a], index[b]
        wins[i, j] += (pts > 0).sum() + 0.5 * (pts == 0).sum()
        wins[j, i] += (pts < 0).sum() + 0.5 * (pts == 0).sum()
    games = wins + wins.T
    p = np.ones(k)
    for _ in range(iters):  # Hunter's MM algorithm, with the virtual player at strength 1
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1) + 1.0 / (p + 1.0)
        new = (wins.sum(axis=1) + 0.5) / denom
        new /= math.exp(np.log(new).mean())
        if np.allclose(new, p, rtol=1e-10, atol=0):
            p = new
            break
        p = new
    return np.log(p)


def ratings(
    agents: list[str], pairs: dict[tuple[str, str], np.ndarray], anchor: str | None,
    boot: int = 200, seed: int = 0,
) -> dict[str, dict[str, float]]:  # fmt: skip
    """Each agent's rating with a 95% bootstrap interval (walls resampled within each pair)."""

    def anchored(r: np.ndarray) -> np.ndarray:
        return r - r[agents.index(anchor)] if anchor in agents else r - r.mean()

    point = anchored(fit_bradley_terry(agents, pairs))
    rng = np.random.default_rng(seed)
    draws = np.empty((boot, len(agents)))
    for b in range(boot):
        sample = {key: pts[rng.integers(0, pts.size, pts.size)] for key, pts in pairs.items()}
        draws[b] = anchored(fit_bradley_terry(agents, sample, iters=500))
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0)
    return {
        a: {"rating": float(point[i]), "lo": float(lo[i]), "hi": float(hi[i])}
        for i, a in enumerate(agents)
    }


def _mean_ci(samples: np.ndarray) -> tuple[float, float]:
    mean = float(samples.mean())
    ci = 1.96 * float(samples.std(ddof=1)) / math.sqrt(samples.size) if samples.size > 1 else 0.0
    return mean, ci


def caution(walls: int) -> str | None:
    """The caution line for ``walls`` walls per pair, or None from ``CAUTION_WALLS`` on."""
    if walls >= CAUTION_WALLS:
        return None
    return (
        f"caution: {walls} walls per pair, under {CAUTION_WALLS}: the intervals are rough and an "
        f"order can flip on fresh walls; confirm it on {CAUTION_WALLS}+ walls and another --seed"
    )


def play_pair(
    a: str, b: str, walls: int, seed: int, rules: RuleConfig, progress: bool,
    ray: str | None = None, workers: int = 2, model: Any = None, fine_tune: int = 0,
    advantage: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """``A``'s per-wall points in the ``A B A B`` match: plain, and adjusted (or None).

    The adjusted points need ``model`` (a ``TableModel`` or ``LuckModel``), fine-tuned on
    the pair's own hands, cross-fitted, with ``fine_tune`` epochs; with ``progress``, the
    adjustment shows its own bar after the hands'.

    Raises:
        AdjustError: the adjustment failed (a record it cannot replay, a model that overflows).
    """
    lineup = [a, b, a, b]
    if ray is None:
        records = play_duplicate(lineup, walls, rules, seed, progress)
    else:
        from sichuan_env.agents.eval.distributed import play_duplicate_ray

        records = play_duplicate_ray(
            lineup, walls, rules, seed, address=ray, workers=workers, progress=progress
        )
    adjusted = None
    if model is not None or advantage is not None:
        try:
            corrections = (
                Corrections(model, lineup, fine_tune) if advantage is None
                else AdvantageSum(lineup, rules, seed=seed, **advantage)
            )  # fmt: skip
            corr = corrections.of(records, progress)
        except ValueError as exc:
            raise AdjustError(str(exc)) from None
        adjusted = pair_points(records, walls, corr)
    return pair_points(records, walls), adjusted


def summarize_ladder(
    agents: list[str], pairs: dict[tuple[str, str], np.ndarray], anchor: str | None,
    boot: int = 200,
) -> dict[str, Any]:  # fmt: skip
    """Ratings, points per hand against the field, and the head-to-head matrix."""
    rated = ratings(agents, pairs, anchor, boot)
    field: dict[str, list[np.ndarray]] = {a: [] for a in agents}
    matrix: dict[str, dict[str, dict[str, float]]] = {a: {} for a in agents}
    for (a, b), pts in pairs.items():
        per_hand = pts / HANDS_PER_WALL
        field[a].append(per_hand)
        field[b].append(-per_hand)
        mean, ci = _mean_ci(per_hand)
        matrix[a][b] = {"points_per_hand": mean, "ci95": ci}
        matrix[b][a] = {"points_per_hand": -mean, "ci95": ci}
    rows: list[dict[str, Any]] = []
    for a in agents:
        mean, ci = _mean_ci(np.concatenate(field[a])) if field[a] else (0.0, 0.0)
        rows.append({"agent": a, **rated[a], "points_per_hand": mean, "ci95": ci})
    rows.sort(key=lambda r: -float(r["rating"]))
    return {"ratings": rows, "matrix": matrix}


def _write(prog: str, path: Path, doc: dict[str, Any]) -> None:
    """``_save_json``, a non-finite number one error line (exit status 1, nothing written)."""
    try:
        _save_json(path, doc)
    except ValueError as exc:
        fail(prog, f"not writing {path}: it would hold a non-finite number ({exc})")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    p = argparse.ArgumentParser(
        prog="sichuan-ladder",
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument(
        "--agents", nargs="+", required=True, metavar="AGENT",
        help=f"agents (2 or more, or 'all' for every registered name); {describe()}",
    )  # fmt: skip
    p.add_argument("--walls", type=int_arg(2, MAX_WALLS), default=200, help="walls per pair")
    p.add_argument("--seed", type=int_arg(0), default=0, help="seed of the walls (>= 0)")
    p.add_argument("--preset", default="xuezhan", choices=sorted(PRESETS), help="rule preset")
    p.add_argument("--out", type=Path, required=True, help="folder of the pair files and results")
    p.add_argument("--resume", action="store_true", help="keep the pairs already played")
    add_overwrite(p, "ladder")
    p.add_argument("--anchor", default="heuristic", help="the agent rated 0 (when it plays)")
    p.add_argument("--boot", type=int_arg(20, 10_000), default=200, help="bootstrap samples")
    p.add_argument(
        "--ray", default=None, metavar="ADDRESS", help="play on Ray ('local' or an address)"
    )
    p.add_argument("--workers", type=int_arg(1, 4096), default=2, help="Ray workers (with --ray)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_luck_args(p)
    add_ladder_estimator_args(p)
    return p


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the ``ladder.json`` document."""
    p = build_parser()
    args = p.parse_args(argv)
    agents = (
        available(include_aliases=False)
        if args.agents == ["all"]
        else list(dict.fromkeys(args.agents))
    )
    if len(agents) < 2:
        p.error("--agents needs at least two distinct agents")
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out: {args.out} is not a folder")
    if args.ray is not None and not args.ray.strip():
        p.error("--ray needs 'local' or a cluster address")
    try:  # every spec resolves before any hand is played; built once, its files hashed
        identities = {spec: built_identity(spec, args.seed) for spec in agents}
    except (ValueError, TypeError) as exc:
        p.error(f"--agents: {exc}")
    claim_output_or_exit(p, "--out", args.out, LADDER_FILES, resume=args.resume,
                         overwrite=args.overwrite, what="ladder")  # fmt: skip
    if args.resume and (old := older_pairs(args.out)):
        fail(p.prog, f"--resume: {len(old)} pair file(s) in {args.out / 'pairs'} are of an "
             "older ladder format, which knew a registered agent by its name only (a reshipped "
             "checkpoint or a moved alias went unnoticed), so they cannot be trusted; play "
             "them again with --overwrite instead of --resume, or use another --out")  # fmt: skip
    rules = RuleConfig.preset(args.preset)
    advantage = ladder_advantage(p, args)
    model = None if advantage is not None else model_for(args, rules, quiet=args.quiet)
    settings = _settings(args.walls, args.seed, rules, model)
    if advantage is not None:  # the adjusted points depend on them: other pairs are replayed
        settings |= {"estimator": "advantage-sum", **advantage}
    if args.fine_tune:  # the adjusted points depend on it: pairs of another setting are replayed
        settings["fine_tune"] = args.fine_tune
    todo = list(combinations(agents, 2))
    pairs: dict[tuple[str, str], np.ndarray] = {}
    t0 = time.perf_counter()
    for n, (a, b) in enumerate(todo, 1):
        identity = pair_identity(a, b, identities)
        path = _pair_file(args.out, a, b, identity)
        try:
            done = load_pair(path, a, b, settings, identity) if args.resume else None
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        if done is None:
            if not args.quiet:
                print(f"[{n}/{len(todo)}] {a} vs {b}", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                plain, adjusted = play_pair(a, b, args.walls, args.seed, rules, not args.quiet,
                                            args.ray, args.workers, model, args.fine_tune,
                                            advantage)  # fmt: skip
            except (IllegalActionError, InputTypeError) as exc:  # a bad answer: one line
                fail(p.prog, exc)
            except AdjustError as exc:  # this pair is not written; the finished ones stay
                what = "luck adjustment" if advantage is None else "advantage estimate"
                fail(p.prog, f"{what} of {a} vs {b}: {exc}")
            adj = None if adjusted is None else adjusted.tolist()
            _write(p.prog, path, {"agents": [a, b], "identity": identity, **settings,
                                  "points": plain.tolist(), "points_adjusted": adj,
                                  "seconds": time.perf_counter() - start})  # fmt: skip
            done = plain if adjusted is None else adjusted
        pairs[(a, b)] = done
    anchor = args.anchor if args.anchor in agents else None
    summary = summarize_ladder(agents, pairs, anchor, args.boot)
    summary["adjusted"] = model is not None or advantage is not None
    summary["caution"] = caution(args.walls)
    doc = {
        "format": FORMAT,
        "agents": agents,
        "walls": args.walls,
        "seed": args.seed,
        "preset": args.preset,
        "anchor": anchor,
        "adjusted": model is not None or advantage is not None,
        "value_model": settings["value_model"],
        "estimator": None
        if not summary["adjusted"]
        else "luck"
        if advantage is None
        else "advantage-sum",
        "advantage": advantage,
        "seconds": time.perf_counter() - t0,
        **summary,
    }
    _write(p.prog, args.out / "ladder.json", doc)
    few = " (few: rough intervals)" if summary["caution"] else ""
    plot_ladder(summary, args.out / "ladder.png", f"{len(agents)} agents, {args.walls} walls{few}")
    print_ladder(summary, args.walls)
    print(f"wrote {args.out / 'ladder.json'}, {args.out / 'ladder.png'} and {args.out / 'pairs'}/")
    return doc


def cli() -> int:
    """Console entry point (one-line errors, no traceback)."""
    return run(lambda: main() and 0, "sichuan-ladder")


__all__ = [
    "CAUTION_WALLS",
    "FORMAT",
    "HANDS_PER_WALL",
    "LADDER_FILES",
    "SHIPPED",
    "agent_identity",
    "build_parser",
    "built_identity",
    "caution",
    "cli",
    "fit_bradley_terry",
    "load_pair",
    "main",
    "older_pairs",
    "pair_identity",
    "pair_points",
    "play_pair",
    "ratings",
    "summarize_ladder",
]


if __name__ == "__main__":
    sys.exit(cli())
