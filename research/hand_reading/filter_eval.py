"""The policy-aware belief filters over a dataset folder's hands.

    python -m research.hand_reading.filter_eval --data $DATA/heur-test --games 100
    python -m research.hand_reading.filter_eval --method smc --data $DATA/heur-test --games 100

``--method walls`` (the default) is ``research.hand_reading.filter.BeliefFilter`` (MCMC
over whole walls); ``--method smc`` is ``research.hand_reading.smc.HandReader``
(sequential Monte Carlo over each opponent's hand; ``--particles`` per
opponent, ``--runs`` independent sets averaged).

``predict_folder`` replays each hand of ``records.jsonl`` (``game_id <
games``) and runs ``BeliefFilter`` for every seat at every one of its
decisions; ``research.hand_reading.report --filter`` scores the result next to the
network and the baselines on the same rows (and so does ``sichuan_env.train.belief.report
--predictions filter=FILE`` with the files ``--save`` writes). Run alone, this prints the
filter's speed and how often it found a wall consistent with everything
public (energy 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.belief.heads import get as get_head

from research.hand_reading.filter import BeliefFilter
from research.hand_reading.smc import HandReader
from sichuan_env._cli import run
from sichuan_env._npz import Spec, safe_load_npz
from sichuan_env.engine.game import Game

READER_HEADS = ("tenpai", "waits", "hand", "deal_in")
"""The belief heads the hand readers predict (``sichuan_env.agents.belief.heads``)."""
KEYS = (*READER_HEADS, "exact", "proposals")
"""The arrays of a prediction file: the heads, then the reader's statistics."""


def read_records(folder: str | Path, games: int, first: int = 0) -> dict[int, dict[str, Any]]:
    """``{game_id: record}`` for ``first <= game_id < games`` (validated by ``Game.from_record``).

    Raises:
        ValueError: the folder has no readable ``records.jsonl`` or a line is not JSON.
    """
    out: dict[int, dict[str, Any]] = {}
    try:
        with open(Path(folder) / "records.jsonl", encoding="utf-8") as fh:
            for line in fh:
                item = json.loads(line)
                gid = item.get("game_id") if isinstance(item, dict) else None
                if not isinstance(gid, int) or "record" not in item:
                    raise ValueError("each line must hold game_id and record")
                if first <= gid < games:
                    out[gid] = item["record"]
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{folder}: cannot read records.jsonl ({exc})") from None
    return out


def predict_folder(
    folder: str | Path,
    games: int,
    filt: BeliefFilter | HandReader,
    progress: bool = False,
    save: str | Path | None = None,
    first: int = 0,
    resume: bool = False,
) -> tuple[dict[tuple[int, int], dict[str, np.ndarray]], dict[str, float]]:
    """Filter beliefs for every decision of the hands ``first <= game_id < games``.

    With ``save``, the predictions so far (``save_preds``) and the stats are
    written after every hand (to ``save`` and ``save`` + ``.json``), so that a
    run stopped early can still be scored on the hands it finished
    (``research.hand_reading.report --filter-cache``, ``--games`` the hands done);
    ``resume`` reads ``save`` first (if it exists) and skips the hands it holds.

    Returns:
        ``({(game_id, decision): {key: row}}, stats)`` with stats ``seconds``,
        ``decisions``, ``decisions_per_s``, ``exact`` (share of decisions with a
        consistent wall) and ``proposals_per_s``.
    """
    preds: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    if resume and save is not None and Path(save).exists():
        preds = load_preds(save)
    done = {g for g, _ in preds}
    t0 = time.perf_counter()
    n_exact = sum(int(v["exact"]) for v in preds.values())
    n_prop = sum(int(v["proposals"]) for v in preds.values())
    records = read_records(folder, games, first)
    for i, gid in enumerate(sorted(records)):
        if gid in done:
            continue
        game = Game.from_record(records[gid])
        for seat in range(4):
            out = filt.predict_game(game, seat)
            decisions = [d for d, s in _seats(game) if s == seat]
            for k, d in enumerate(decisions):
                preds[(gid, d)] = {key: out[key][k] for key in KEYS}
            n_exact += int(out["exact"].sum())
            n_prop += int(out["proposals"].sum())
        stats = _stats(time.perf_counter() - t0, len(preds), n_exact, n_prop)
        stats["hands"] = i + 1
        if save is not None:
            save_preds(save, preds)
            Path(f"{save}.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
        if progress:
            print(f"hand {i + 1}/{len(records)}: {json.dumps(stats)}", flush=True)
    stats = _stats(time.perf_counter() - t0, len(preds), n_exact, n_prop)
    return preds, stats


def _stats(dt: float, n: int, n_exact: int, n_prop: int) -> dict[str, float]:
    """Speed and the share of decisions with a consistent wall."""
    return {
        "seconds": dt,
        "decisions": n,
        "decisions_per_s": n / max(dt, 1e-9),
        "exact": n_exact / max(n, 1),
        "proposals_per_s": n_prop / max(dt, 1e-9),
    }


def save_preds(path: str | Path, preds: dict[tuple[int, int], dict[str, np.ndarray]]) -> None:
    """Write ``predict_folder``'s predictions to an ``.npz`` file."""
    keys = sorted(preds)
    arrays = {k: np.stack([preds[x][k] for x in keys]) for k in KEYS}
    np.savez_compressed(path, keys=np.array(keys, dtype=np.int64).reshape(-1, 2), **arrays)


def load_preds(path: str | Path) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Read ``save_preds``'s file back, checking shapes and ranges.

    Raises:
        ValueError: an unreadable file, or arrays of the wrong shape or range.
    """
    shapes = {h: get_head(h).shape for h in READER_HEADS}
    specs = {"keys": Spec(("n", 2), kinds="iu")}
    specs.update({h: Spec(("n", *shape), kinds="f") for h, shape in shapes.items()})
    specs.update({k: Spec(("n",), kinds="biuf") for k in KEYS if k not in shapes})
    # headers and sizes are checked before any data is read (a header bomb is a ValueError)
    arrays = safe_load_npz(path, specs, what="filter prediction file")
    keys = arrays.pop("keys")
    n = len(keys)
    if keys.ndim != 2 or keys.shape[1] != 2:
        raise ValueError(f"{path}: keys must be [n, 2]")
    for k, shape in shapes.items():
        a = arrays[k]
        if a.shape != (n, *shape) or not np.isfinite(a).all() or a.min() < 0 or a.max() > 1:
            raise ValueError(f"{path}: {k} must be probabilities of shape {(n, *shape)}")
    return {(int(g), int(d)): {k: arrays[k][i] for k in KEYS} for i, (g, d) in enumerate(keys)}


def load_many(paths: list[Path] | tuple[Path, ...]) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """``load_preds`` of several files (e.g. one folder split over processes), merged.

    Raises:
        ValueError: a bad file, or two files that predict the same decision.
    """
    out: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    for path in paths:
        part = load_preds(path)
        both = part.keys() & out.keys()
        if both:
            raise ValueError(f"{path}: predicts (game_id, decision) {min(both)} again")
        out.update(part)
    return out


def _seats(game: Game) -> list[tuple[int, int]]:
    st = game.state
    return [(d, int(x) // 128) for d, x in enumerate(st["log"][: int(st["n_log"])])]


def make_filter(args: argparse.Namespace) -> BeliefFilter | HandReader:
    """The filter the parsed arguments name (``--method``)."""
    if args.method == "smc":
        n = 256 if args.particles is None else args.particles
        return HandReader(n, args.seed, moves=args.moves, collapse=args.collapse, runs=args.runs,
                          restarts=args.restarts)  # fmt: skip
    n = 16 if args.particles is None else args.particles
    return BeliefFilter(n, args.steps, args.burn, seed=args.seed, slack=args.slack,
                        redraws=args.redraws)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="python -m research.hand_reading.filter_eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--games", type=int, default=10, help="the hands with game_id < GAMES")
    p.add_argument("--first-game", type=int, default=0,
                   help="and game_id >= FIRST_GAME (split a folder over processes)")  # fmt: skip
    p.add_argument("--method", choices=("walls", "smc"), default="walls")
    p.add_argument("--particles", type=int, help="walls (default 16) or hands per opponent (256)")
    p.add_argument("--runs", type=int, default=1, help="smc: independent particle sets averaged")
    p.add_argument("--moves", type=int, default=2, help="smc: rejuvenation moves per particle")
    p.add_argument("--collapse", type=int, default=4, help="smc: rejuvenate below particles/N")
    p.add_argument("--restarts", type=int, default=2, help="smc: fresh sets tried on a loss")
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--burn", type=int, default=800)
    p.add_argument("--slack", type=int, default=1, help="energy walls may reach while sampling")
    p.add_argument("--redraws", type=float, default=0.0, help="share of moves that redraw")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--progress", action="store_true")
    p.add_argument("--save", type=Path, help="write the predictions (.npz) after every hand")
    p.add_argument("--resume", action="store_true", help="keep the hands --save already holds")
    args = p.parse_args(argv)
    try:
        filt = make_filter(args)
    except (TypeError, ValueError) as exc:
        p.error(str(exc))
    _, stats = predict_folder(args.data, args.games, filt, progress=args.progress, save=args.save,
                              first=args.first_game, resume=args.resume)  # fmt: skip
    print(json.dumps(stats, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "research.hand_reading.filter_eval"))
