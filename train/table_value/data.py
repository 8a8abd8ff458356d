"""Self-play states for the whole-table value network, written as resumable shards.

    python -m sichuan_env.train.table_value.data --out runs/table --hands 131072
    python -m sichuan_env.train.table_value.data --out runs/table --resume   # after a stop

Blocks of ``--block-walls`` walls are each played under the four rotations of a
lineup drawn per block from a mix of agents (``--mix``: rule-based styles, the
shipped networks, ``distill-sample`` (a sampling policy), the after-win search
``distill-search64-after-win`` (``strongest`` when ``V`` was shipped) and a little random
play), by the batched engine (``evaluate.play_block``); the hands are
replayed (``luck_events.extract``) into every state at the deal and after each
draw, with the points each seat still won from there (``table_rows.rows_of``).
A block is one shard, ``shards/shard-NNNNN.npz``, written atomically: a stop loses
at most the block in progress, and ``--resume`` plays only the missing ones (the
same walls, lineups and seeds as the undisturbed run). ``data.json`` records the
settings; a resume with other data settings is refused, naming them.

``--records`` also keeps each block's game records, ``records/block-NNNNN.json.gz``
(``{"lineup", "slots", "records"}``, slot ``4 * wall + rotation``): the hands that
``sichuan_env.train.table_value.variance`` refits ``V`` on, through every
counterfactual draw.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_block, wall_seeds_of
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.agents.eval.table_rows import ROW_FIELDS, rows_of, seat_ids, vocab_id
from sichuan_env.train.common import command_line, git_commit, setup
from sichuan_env.train.resume import refuse_changed_file
from sichuan_env.train.value import lineup_of, parse_mix

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    add_overwrite,
    claim_output_or_exit,
    int_arg,
    run,
    write_atomic,
)
from sichuan_env._npz import Spec, safe_load_npz
from sichuan_env.rules.config import PRESETS
from sichuan_env.threads import set_threads

PROG = "python -m sichuan_env.train.table_value.data"
MIX = {
    "heuristic": 0.17, "defensive": 0.10, "value": 0.07, "random": 0.03, "bc": 0.06,
    "ppo": 0.05, "distill": 0.16, "distill-sample": 0.08, "exit": 0.07, "distill-guard": 0.12,
    "distill-search64-after-win": 0.09,
}  # fmt: skip
"""The default mix: each seat of a block's lineup is drawn from it with these weights."""
OWNED = ("shards", "records", "data.json")
KEEP = ("hands", "block_walls", "preset", "mix", "seed")
"""Settings that decide the data: a resume with any other value is refused."""
SHARD_SPEC = {
    k: Spec(("n", *shape), dtype=np.dtype(dt).name) for k, (shape, dt) in ROW_FIELDS.items()
}
SHARD_SPEC["hand"] = Spec(("n",), dtype="int32")


def shard_path(shards: Path, block: int) -> Path:
    """The file of block ``block``."""
    return shards / f"shard-{block:05d}.npz"


def block_data(lineup: list[str], records: list[tuple[int, dict]], rules: RuleConfig) -> dict:
    """The rows of one played block (``[(slot, record)]``, slot ``4 * wall + rotation``)."""
    ev = extract([r for _, r in records], rules)
    ids = np.stack([seat_ids(lineup, slot % 4) for slot, _ in records])
    rows = rows_of(ev, ids)
    rows["hand"] = np.repeat(np.arange(len(records), dtype=np.int32), ev.n_events)
    return rows


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def records_path(folder: Path, block: int) -> Path:
    """The game records of block ``block`` (``--records``)."""
    return folder / f"block-{block:05d}.json.gz"


def play_and_write(mix: dict, seed: int, block: int, seeds: np.ndarray, rules_doc: dict,
                   shards: Path, records: Path | None = None) -> int:  # fmt: skip
    """Play block ``block`` (its walls ``seeds``) and write its shard; returns its rows.

    A block's data depends on ``(mix, seed, block)`` alone, so blocks may be played in
    any order, by any process. ``records``: also write the block's game records there
    (before the shard, whose presence marks the block done).
    """
    rules = RuleConfig.from_dict(rules_doc)
    lineup = lineup_of(mix, seed, block)
    agents = make_lineup_agents(lineup, seed + 1000 * block)
    played = play_block(lineup, agents, seeds, rules, seed, block)
    if records is not None:
        doc = {"lineup": lineup, "slots": [s for s, _ in played], "records": [r for _, r in played]}
        write_atomic(records_path(records, block), gzip.compress(json.dumps(doc).encode(), mtime=0))
    rows = block_data(lineup, played, rules)
    write_atomic(shard_path(shards, block), _npz_bytes(rows))
    return len(rows["y"])


def _worker_init() -> None:
    set_threads(1)


def make_data(args: argparse.Namespace, rules: RuleConfig, shards: Path) -> int:
    """Play and write every missing shard (``--workers`` processes); the rows written now."""
    shards.mkdir(parents=True, exist_ok=True)
    blocks = -(-args.hands // (4 * args.block_walls))
    seeds = wall_seeds_of(blocks * args.block_walls, args.seed)
    records = shards.parent / "records" if args.records else None
    if records is not None:
        records.mkdir(exist_ok=True)
    todo = [b for b in range(blocks) if not shard_path(shards, b).exists()
            or (records is not None and not records_path(records, b).exists())]  # fmt: skip
    columns = (TextColumn("table-value data"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rows]:,} rows"), TimeElapsedColumn())  # fmt: skip
    written = 0
    jobs = [(args.mix, args.seed, b, seeds[b * args.block_walls : (b + 1) * args.block_walls],
             rules.to_dict(), shards, records) for b in todo]  # fmt: skip
    with Progress(*columns, disable=not args.progress) as bar:
        task = bar.add_task("blocks", total=blocks, completed=blocks - len(todo), rows=0)
        if args.workers == 1:
            done = (play_and_write(*job) for job in jobs)
            for rows in done:
                written += rows
                bar.update(task, advance=1, rows=written)
        else:
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(
                args.workers, mp_context=ctx, initializer=_worker_init
            ) as pool:
                futures = [pool.submit(play_and_write, *job) for job in jobs]
                for fut in as_completed(futures):
                    written += fut.result()
                    bar.update(task, advance=1, rows=written)
    return written


def load_shard(path: Path) -> dict[str, np.ndarray]:
    """One shard, checked: shapes, dtypes, finite targets, tile counts in range.

    Raises:
        ValueError: a damaged, altered or foreign file, naming it.
    """
    data = safe_load_npz(path, SHARD_SPEC, what="table-value shard")
    if not np.isfinite(data["y"]).all() or not np.isfinite(data["feats"].astype(np.float32)).all():
        raise ValueError(f"table-value shard {path} holds non-finite numbers")
    if data["tiles"].max(initial=0) > 4 or data["wallc"].max(initial=0) > 4:
        raise ValueError(f"table-value shard {path} holds a tile count above 4")
    if data["voids"].min(initial=-1) < -1 or data["voids"].max(initial=-1) > 2:
        raise ValueError(f"table-value shard {path} holds a void suit outside -1..2")
    if data["lineup"].min(initial=0) < 0 or data["lineup"].max(initial=0) >= 64:
        raise ValueError(f"table-value shard {path} holds an unknown lineup id")
    return data


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="the data folder")
    p.add_argument("--hands", type=int_arg(4, 10**8), default=131072, help="self-play hands")
    p.add_argument("--block-walls", type=int_arg(1, 4096), default=128, help="walls per shard")
    p.add_argument("--preset", choices=sorted(PRESETS), default="xuezhan", help="the rules")
    p.add_argument("--mix", type=parse_mix, default=dict(MIX),
                   help="agent=weight,... to draw each block's seats from")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=1)
    p.add_argument("--workers", type=int_arg(1, 256), default=1,
                   help="processes playing blocks at once (one thread each)")  # fmt: skip
    p.add_argument("--records", action="store_true",
                   help="also keep the game records (records/): the variance refit's input")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="play the missing shards of --out")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    add_overwrite(p, "data folder")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    p = build_parser()
    args = p.parse_args(argv)
    try:
        for name in args.mix:
            make_lineup_agents([name] * 4, 0)
    except (ValueError, ImportError) as exc:
        p.error(f"--mix: {exc}")
    resumed = claim_output_or_exit(p, "--out", args.out, OWNED, resume=args.resume,
                                   overwrite=args.overwrite, what="table-value data")  # fmt: skip
    conf = {k: getattr(args, k) for k in KEEP}
    if args.records:  # only then: a folder made before --records resumes unchanged
        conf["records"] = True
    conf_path = args.out / "data.json"
    if resumed and conf_path.exists():
        refuse_changed_file(PROG, p, args.out, conf_path, conf)
    args.out.mkdir(parents=True, exist_ok=True)
    rules = RuleConfig.preset(args.preset)
    doc = dict(conf, rules=rules.to_dict(), vocab_check={n: vocab_id(n) for n in args.mix},
               command=command_line("sichuan_env.train.table_value.data", argv),
               commit=git_commit())  # fmt: skip
    write_atomic(conf_path, json.dumps(doc, indent=1) + "\n")
    setup(args.threads, args.seed)
    start = time.time()
    rows = make_data(args, rules, args.out / "shards")
    print(f"{rows:,} rows written in {time.time() - start:.0f} s to {args.out / 'shards'}")
    return 0


def cli() -> int:
    """Console entry point."""
    return run(main, PROG)


if __name__ == "__main__":
    raise SystemExit(cli())
