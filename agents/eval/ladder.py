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
fitted to the adjusted per-wall results, ``--no-adjust`` for plain), named by a digest of the pair's identity (the two
specs and the SHA-256 of each checkpoint file; the readable names are inside
the file); a rerun with ``--resume`` reuses every pair whose file matches the
settings (walls, seed, rules) and plays only the rest: a retrained checkpoint
at the same path is a new pair. An ``--out`` that holds a ladder is refused
unless ``--resume`` (continue) or ``--overwrite`` (replace) is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.eval.adjust import add_luck_args, model_for
from sichuan_env.agents.eval.evaluate import MAX_WALLS, play_duplicate
from sichuan_env.agents.eval.ladder_view import plot_ladder, print_ladder
from sichuan_env.agents.registry import available, describe, make_agent

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import PlainHelp, add_overwrite, claim_output_or_exit, fail, int_arg, run
from sichuan_env._files import write_atomic
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.tiles import InputTypeError

FORMAT = 1
"""Version of the pair files and ``ladder.json``."""
LADDER_FILES = ("pairs", "ladder.json", "ladder.png")
"""What a ladder writes in ``--out``: ``--resume`` keeps it, ``--overwrite`` removes it first."""
HANDS_PER_WALL = 8
"""Seat-hands of one agent per wall in a head-to-head match (2 seats x 4 rotations)."""


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


SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"
"""The shipped checkpoints (``bc`` is ``SHIPPED/bc.pt``), hashed like any other."""


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def agent_identity(spec: str) -> dict[str, Any]:
    """What identifies an agent in a pair: its spec and the content hash of its checkpoint.

    A spec that is a file (a checkpoint path), or a registered name with a shipped
    checkpoint, gets the SHA-256 of that file and of its JSON beside it (``x.pt`` and
    ``x.json``): a retrained ``x.pt`` at the same path is another agent.
    """
    path = Path(spec)
    if not path.is_file():
        path = SHIPPED / f"{spec}.pt"
        if "/" in spec or os.sep in spec or not path.is_file():  # no file behind the spec
            return {"spec": spec}
    files = [path, path.with_suffix(".json")]
    return {"spec": spec, "sha256": [_file_sha256(f) for f in files if f.is_file()]}


def pair_identity(a: str, b: str) -> dict[str, Any]:
    """The identity of the pair ``a``, ``b`` (``agent_identity`` of each, in order)."""
    return {"format": FORMAT, "agents": [agent_identity(a), agent_identity(b)]}


def _pair_file(out: Path, a: str, b: str, identity: dict[str, Any]) -> Path:
    """``OUT/pairs/<readable prefix>-<digest>.json``: named by a digest of the pair's identity.

    The prefix (each spec's last path part, at most 24 safe characters) is for people;
    the digest (SHA-256 of the identity, 20 hex digits) tells pairs apart, so any two specs
    (long paths, ``p/bc.pt`` and ``p_bc.pt``) get different files of a bounded name length.
    """
    key = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(key).hexdigest()[:20]
    safe = [re.sub(r"[^A-Za-z0-9_.-]", "_", Path(x).name or x)[:24] for x in (a, b)]
    return out / "pairs" / f"{safe[0]}__{safe[1]}-{digest}.json"


def _settings(walls: int, seed: int, rules: RuleConfig, model: Any = None) -> dict[str, Any]:
    value_model = None if model is None else model.doc.get("sha256")
    return {"format": FORMAT, "walls": walls, "seed": seed, "rules": rules.to_dict(),
            "value_model": value_model}  # fmt: skip


def load_pair(
    path: Path, a: str, b: str, settings: dict[str, Any], identity: dict[str, Any] | None = None
) -> np.ndarray | None:
    """A finished pair's per-wall points, or None when the file is missing or other settings'.

    The points are the luck-adjusted ones when ``settings`` name a value model.

    Raises:
        ValueError: a file that is not a pair file of this ladder (damaged or hand-edited),
            or of another pair (its ``identity`` differs from ``identity``).
    """
    if not path.is_file():
        return None
    if path.stat().st_size > 16 * 2**20:
        raise ValueError(f"{path}: larger than 16 MB, not a pair file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not a pair file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("agents") != [a, b]:
        raise ValueError(f"{path}: not the pair {a} / {b}")
    if identity is not None and doc.get("identity") != identity:
        raise ValueError(f"{path}: not the pair {a} / {b} (other agents or checkpoints)")
    if {k: doc.get(k) for k in settings} != settings:
        return None  # other walls, seed or rules: played again
    pts = doc.get("points_adjusted" if settings.get("value_model") else "points")
    if (
        not isinstance(pts, list)
        or len(pts) != settings["walls"]
        or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in pts)
    ):
        raise ValueError(f"{path}: its points must be {settings['walls']} finite numbers")
    return np.asarray(pts, dtype=np.float64)


def _save_json(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to ``path`` whole or not at all (``write_atomic``: a unique temporary name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(doc, indent=1) + "\n")


def play_pair(
    a: str, b: str, walls: int, seed: int, rules: RuleConfig, progress: bool,
    ray: str | None = None, workers: int = 2, model: Any = None,
) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """``A``'s per-wall points in the ``A B A B`` match: plain, and adjusted (or None).

    The adjusted points need ``model`` (a ``LuckModel``).
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
    if model is not None:
        adjusted = pair_points(records, walls, model.corrections([r for _, _, r in records]).total)
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
    try:
        for spec in agents:  # every spec resolves before any hand is played
            make_agent(spec, seed=args.seed)
    except (ValueError, TypeError) as exc:
        p.error(f"--agents: {exc}")
    claim_output_or_exit(p, "--out", args.out, LADDER_FILES, resume=args.resume,
                         overwrite=args.overwrite, what="ladder")  # fmt: skip
    rules = RuleConfig.preset(args.preset)
    model = model_for(args, rules, quiet=args.quiet)
    settings = _settings(args.walls, args.seed, rules, model)
    todo = list(combinations(agents, 2))
    pairs: dict[tuple[str, str], np.ndarray] = {}
    t0 = time.perf_counter()
    for n, (a, b) in enumerate(todo, 1):
        identity = pair_identity(a, b)
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
                                            args.ray, args.workers, model)  # fmt: skip
            except (IllegalActionError, InputTypeError) as exc:  # a bad answer: one line
                fail(p.prog, exc)
            _save_json(path, {"agents": [a, b], "identity": identity, **settings,
                              "points": plain.tolist(),
                              "points_adjusted": None if adjusted is None else adjusted.tolist(),
                              "seconds": time.perf_counter() - start})  # fmt: skip
            done = plain if adjusted is None else adjusted
        pairs[(a, b)] = done
    anchor = args.anchor if args.anchor in agents else None
    summary = summarize_ladder(agents, pairs, anchor, args.boot)
    summary["adjusted"] = model is not None
    doc = {
        "format": FORMAT,
        "agents": agents,
        "walls": args.walls,
        "seed": args.seed,
        "preset": args.preset,
        "anchor": anchor,
        "adjusted": model is not None,
        "value_model": settings["value_model"],
        "seconds": time.perf_counter() - t0,
        **summary,
    }
    _save_json(args.out / "ladder.json", doc)
    plot_ladder(summary, args.out / "ladder.png", f"{len(agents)} agents, {args.walls} walls")
    print_ladder(summary, args.walls)
    print(f"wrote {args.out / 'ladder.json'}, {args.out / 'ladder.png'} and {args.out / 'pairs'}/")
    return doc


def cli() -> int:
    """Console entry point (one-line errors, no traceback)."""
    return run(lambda: main() and 0, "sichuan-ladder")


if __name__ == "__main__":
    sys.exit(cli())
