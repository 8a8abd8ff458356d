"""Generate an opponent-modelling dataset: any lineup, exact hidden-state labels, Parquet shards.

    python -m sichuan_env.train.data.make_dataset --lineup heuristic heuristic heuristic heuristic
        --hands 2000 --obs-version 2 --out data/heuristic-v2 --seed 0

Plays ``--hands`` hands in a ``VectorEnv`` with labels on (the lineup is
rotated by slot, so every agent sits in every seat), keeps one row per
decision of every seat with the observation, mask, action and the exact
labels of the acting seat's opponents (``sichuan_env.engine.labels``), and
each hand's game record and event tokens. The folder layout and the columns
are documented in ``train/dataset.py``. The same command and seed always
write the same data.

``--ray ADDRESS|local --workers N`` splits the hands into ``--parts``
(default N) independent parts, each played and written by a Ray worker
(under ``out/.parts/``: on a cluster, ``--out`` must be on a filesystem
every node sees), then merged in part order; the same command with
``--parts N`` and without ``--ray`` writes the same rows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.eval.evaluate import block_seed, make_lineup_agents
from sichuan_env.train.data.schema import FORMAT, LABEL_SHAPES, decision_schema

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import (
    PlainHelp,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    int_arg,
    run,
)
from sichuan_env._files import owned_entries, write_atomic
from sichuan_env._progress import progress_bar
from sichuan_env.encoding.events import VOCAB_SIZE, event_sequences
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.encoding.registry import versions
from sichuan_env.envs.acting import Decisions, SeatMemory, ask
from sichuan_env.envs.vector import VectorEnv

MAX_HANDS = 10_000_000
DATASET_FILES = ("dataset.json", "decisions", ".parts", "records.jsonl", "games.parquet")
"""What a dataset folder holds: ``--overwrite`` removes these (and only these) first."""


def generate(
    lineup: list[str],
    hands: int,
    out: Path,
    *,
    rules: RuleConfig | None = None,
    obs_version: int = 2,
    seed: int = 0,
    num_envs: int = 256,
    shard_rows: int = 200_000,
    progress: bool = True,
    command: str = "",
    parts: int = 1,
    ray: str | None = None,
    workers: int = 2,
) -> dict[str, Any]:
    """Write a dataset folder; returns its metadata (also ``out/dataset.json``).

    With ``parts`` > 1 the hands are split into independent parts (part ``p``
    seeded ``sichuan_env.agents.eval.evaluate.block_seed(seed, p)``; part 0 is the one-part run's
    start), played one after the other, or by ``workers`` Ray workers when
    ``ray`` (an address or ``"local"``) is given, and merged in part order:
    the same rows either way.

    Raises:
        ValueError: bad arguments (lineup, counts, version), or ``out`` holds a dataset already.
        sichuan_env.agents.eval.distributed.RayMissingError: ``ray`` is given and Ray is not installed.
    """
    rules = RuleConfig() if rules is None else rules
    spec = get_obs_version(obs_version)
    if not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise ValueError(f"hands must be in 1..{MAX_HANDS}, got {hands!r}")
    if not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs!r}")
    if not isinstance(parts, int) or not 1 <= parts <= hands:
        raise ValueError(f"parts must be in 1..hands ({hands}), got {parts!r}")
    make_lineup_agents(list(lineup), seed)  # checks the lineup before any file is written
    out = Path(out)
    if owned_entries(out, DATASET_FILES):
        raise ValueError(
            f"{out} holds a dataset (or a part of one) already: pass --overwrite to replace it, "
            "or choose another --out"
        )
    t0 = time.perf_counter()
    common = {
        "lineup": list(lineup), "rules": rules, "obs_version": obs_version,
        "num_envs": num_envs, "shard_rows": shard_rows,
    }  # fmt: skip
    if parts == 1 and ray is None:
        done = [generate_part(**common, hands=hands, folder=out, seed=seed, progress=progress)]
    else:
        sizes = [hands // parts + (p < hands % parts) for p in range(parts)]
        jobs = [
            {**common, "hands": n, "folder": out / ".parts" / f"{p:05d}",
             "seed": block_seed(seed, p), "first_game_id": sum(sizes[:p])}
            for p, n in enumerate(sizes)
        ]  # fmt: skip
        done = _run_parts(jobs, ray, workers, progress)
        _merge_parts(out, [job["folder"] for job in jobs])
    meta = {
        "format": FORMAT,
        "obs_version": obs_version,
        "obs_shape": list(spec.shape()),
        "obs_blocks": [list(b) for b in spec.blocks],
        "event_vocab_size": VOCAB_SIZE,
        "lineup": list(lineup),
        "rules": rules.to_dict(),
        "seed": seed,
        "hands": hands,
        "parts": parts,
        "decisions": sum(d["decisions"] for d in done),
        "shards": sum(d["shards"] for d in done),
        "seconds": round(time.perf_counter() - t0, 1),
        "command": command,
        "columns": [f.name for f in decision_schema(1)],
    }
    write_atomic(out / "dataset.json", json.dumps(meta, indent=1) + "\n")  # the folder is whole
    return meta


def _run_parts(
    jobs: list[dict[str, Any]], ray: str | None, workers: int, progress: bool
) -> list[dict[str, int]]:
    """Play every part, here one after the other or as Ray tasks; their counts in part order."""
    if ray is None:
        return [generate_part(**job, progress=progress) for job in jobs]
    from sichuan_env.agents.eval.distributed import init_ray, worker_options

    ray_mod = init_ray(ray, workers)
    task = ray_mod.remote(**worker_options())(_part_task)
    pending = {task.remote(job): p for p, job in enumerate(jobs)}
    done: dict[int, dict[str, int]] = {}
    columns = (TextColumn("parts"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with progress_bar(*columns, disable=not progress) as bar:
        t = bar.add_task("parts", total=len(jobs))
        while pending:
            ready, _ = ray_mod.wait(list(pending), num_returns=1)
            done[pending.pop(ready[0])] = ray_mod.get(ready[0])
            bar.advance(t, 1)
    return [done[p] for p in range(len(jobs))]


def _part_task(job: dict[str, Any]) -> dict[str, int]:
    """A Ray task: one part, single-threaded, written by the worker itself."""
    from sichuan_env.agents.eval.distributed import single_thread

    single_thread()
    return generate_part(**job, progress=False)


def _merge_parts(out: Path, folders: list[Path]) -> None:
    """Move the parts' shards into ``out/decisions`` (numbered on), join records and games."""
    (out / "decisions").mkdir(parents=True, exist_ok=True)
    k = 0
    games = []
    with open(out / "records.jsonl", "wb") as records:
        for folder in folders:
            for shard in sorted((folder / "decisions").glob("part-*.parquet")):
                shard.replace(out / "decisions" / f"part-{k:05d}.parquet")
                k += 1
            records.write((folder / "records.jsonl").read_bytes())
            games.append(pq.read_table(folder / "games.parquet"))
    table = pa.concat_tables(games)
    write_atomic(out / "games.parquet", lambda f: pq.write_table(table, f))
    shutil.rmtree(out / ".parts")


def generate_part(
    lineup: list[str],
    hands: int,
    folder: Path,
    *,
    rules: RuleConfig,
    obs_version: int,
    seed: int,
    num_envs: int,
    shard_rows: int,
    progress: bool,
    first_game_id: int = 0,
) -> dict[str, int]:
    """Play ``hands`` hands into ``folder`` (``decisions/``, ``records.jsonl``, ``games.parquet``).

    Game ids start at ``first_game_id``. Returns ``{"decisions", "shards"}``; ``generate``
    checks the arguments and writes ``dataset.json``.
    """
    spec = get_obs_version(obs_version)
    agents = make_lineup_agents(list(lineup), seed)
    out = Path(folder)
    (out / "decisions").mkdir(parents=True, exist_ok=True)
    n = min(num_envs, hands)
    venv = VectorEnv(n, rules=rules, obs_version=obs_version, seed=seed, labels=True)
    obs, mask, seat = venv.reset()
    labels = venv.labels()
    rotation = np.arange(n) % 4
    lineup_arr = np.array(lineup, dtype=object)
    pending: list[list[int]] = [[] for _ in range(n)]  # per slot: steps of its running hand
    memory, every = SeatMemory(n), np.arange(n)
    steps: dict[int, dict[str, np.ndarray]] = {}  # step -> every slot's row of that step
    schema = decision_schema(spec.rows())
    writer = _ShardWriter(out, schema, shard_rows)
    games: list[dict[str, Any]] = []
    columns = (TextColumn("hands"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with (
        progress_bar(*columns, disable=not progress) as bar,
        open(out / "records.jsonl", "w", encoding="utf-8") as records,
    ):
        task = bar.add_task("hands", total=hands)
        k = 0
        while len(games) < hands:
            names = lineup_arr[(seat.astype(np.int64) + rotation) % 4]
            actions = np.zeros(n, dtype=np.int64)
            decisions = Decisions(
                venv.states_of(every), mask, rules, seat,
                obs=obs, obs_version=obs_version, memory=memory,
            )  # fmt: skip
            for name, agent in agents.items():
                idx = np.flatnonzero(names == name)
                if idx.size:
                    actions[idx] = ask(agent, decisions, idx)
            steps[k] = {
                "decision": venv._states["n_log"].astype(np.int16),
                "seat": seat.astype(np.int8),
                "agent": names,
                "obs": np.packbits(obs.reshape(n, -1), axis=1),
                "mask": np.packbits(mask.astype(np.uint8), axis=1),
                "action": actions.astype(np.int16),
                **{key: labels[key].reshape(n, -1) for key in LABEL_SHAPES},
            }
            for i in range(n):
                pending[i].append(k)
            obs, mask, seat, _, done, info = venv.step(actions)
            labels = info["labels"]
            memory.hand_started(np.flatnonzero(done))
            for i in np.flatnonzero(done):
                if len(games) >= hands:
                    pending[i] = []
                    continue
                game_id = first_game_id + len(games)
                game = venv.last_game(int(i))
                record = game.record()
                final = record["result"]["scores"]
                for step in pending[i]:
                    writer.add(steps[step], int(i), game_id, final)
                pending[i] = []
                tokens, offsets = event_sequences(game)
                hand_lineup = [str(lineup_arr[(s + rotation[i]) % 4]) for s in range(4)]
                games.append(
                    {
                        "game_id": game_id,
                        "lineup": hand_lineup,
                        "scores": final,
                        "n_decisions": int(offsets.shape[0] - 1),
                        "offsets": offsets.reshape(-1).tolist(),
                        **{f"tokens_{s}": tokens[s].tolist() for s in range(4)},
                    }
                )
                records.write(json.dumps({"game_id": game_id, "record": record}) + "\n")
                bar.advance(task, 1)
            oldest = min((q[0] for q in pending if q), default=k + 1)
            for step in [s for s in steps if s < oldest]:
                del steps[step]
            k += 1
    writer.close()
    table = pa.Table.from_pylist(games)
    write_atomic(out / "games.parquet", lambda f: pq.write_table(table, f))
    return {"decisions": writer.rows, "shards": writer.count}


class _ShardWriter:
    """Rows into ``decisions-NNNNN.parquet`` files of at most ``shard_rows`` rows."""

    def __init__(self, out: Path, schema: pa.Schema, shard_rows: int) -> None:
        self.out, self.schema, self.shard_rows = out, schema, shard_rows
        self.columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        self.count = 0
        self.rows = 0
        self.buffered = 0

    def add(self, step: dict[str, np.ndarray], i: int, game_id: int, final: list[int]) -> None:
        """Row ``i`` of a step's arrays, as a row of hand ``game_id`` with final scores ``final``."""
        for name, column in self.columns.items():
            if name == "game_id":
                column.append(game_id)
            elif name == "final_points":
                column.append(final[int(step["seat"][i])])
            else:
                column.append(step[name][i])
        self.buffered += 1
        if self.buffered >= self.shard_rows:
            self.flush()

    def flush(self) -> None:
        if not self.buffered:
            return
        arrays = []
        for field in self.schema:
            values = self.columns[field.name]
            if pa.types.is_fixed_size_binary(field.type):
                flat = np.ascontiguousarray(np.stack(values))
                arrays.append(pa.FixedSizeBinaryArray.from_buffers(
                    field.type, len(values), [None, pa.py_buffer(flat.tobytes())]
                ))  # fmt: skip
            elif pa.types.is_fixed_size_list(field.type):
                flat = np.stack(values).reshape(-1).astype(field.type.value_type.to_pandas_dtype())
                arrays.append(
                    pa.FixedSizeListArray.from_arrays(pa.array(flat), field.type.list_size)
                )
            else:
                arrays.append(
                    pa.array(
                        np.asarray(values) if field.name != "agent" else [str(v) for v in values],
                        type=field.type,
                    )
                )
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        path = self.out / "decisions" / f"part-{self.count:05d}.parquet"
        write_atomic(path, lambda f: pq.write_table(table, f))
        self.rows += self.buffered
        self.count += 1
        self.buffered = 0
        self.columns = {name: [] for name in self.schema.names}

    def close(self) -> None:
        self.flush()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point."""
    p = argparse.ArgumentParser(
        prog="python -m sichuan_env.train.data.make_dataset",
        description=__doc__,
        formatter_class=PlainHelp,
    )
    p.add_argument("--lineup", nargs=4, default=["heuristic"] * 4, metavar="AGENT")
    p.add_argument("--hands", type=int_arg(1, MAX_HANDS), default=1000)
    p.add_argument("--obs-version", type=int, choices=versions(), default=2)
    p.add_argument("--preset", choices=sorted(PRESETS), default="xuezhan")
    p.add_argument("--seed", type=int_arg(0, 2**63 - 1), default=0)
    p.add_argument("--envs", type=int_arg(1, 65536), default=256, help="hands played together")
    p.add_argument("--shard-rows", type=int_arg(1000, 10_000_000), default=200_000)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--quiet", action="store_true")
    add_overwrite(p, "dataset")
    p.add_argument(
        "--parts", type=int_arg(1, MAX_HANDS), default=None,
        help="independent parts (default: 1, or --workers with --ray); the rows depend on it",
    )  # fmt: skip
    p.add_argument("--ray", default=None, metavar="ADDRESS", help="parts on Ray ('local' or host:port)")  # fmt: skip
    p.add_argument("--workers", type=int_arg(1, 4096), default=2, help="Ray workers (with --ray)")
    args = p.parse_args(argv)
    problem = dir_problem(args.out)
    if problem:
        p.error(f"--out: {problem}")
    if args.ray is not None:
        from sichuan_env.agents.eval.distributed import check_address

        try:
            check_address(args.ray)
        except ValueError as exc:
            p.error(f"--ray: {exc}")
    parts = args.parts or (args.workers if args.ray else 1)
    claim_output_or_exit(p, "--out", args.out, DATASET_FILES, resume=None,
                         overwrite=args.overwrite, what="dataset")  # fmt: skip
    try:
        meta = generate(
            args.lineup,
            args.hands,
            args.out,
            rules=RuleConfig.preset(args.preset),
            obs_version=args.obs_version,
            seed=args.seed,
            num_envs=args.envs,
            shard_rows=args.shard_rows,
            progress=not args.quiet,
            command="python -m sichuan_env.train.data.make_dataset "
            + " ".join(sys.argv[1:] if argv is None else argv),
            parts=parts,
            ray=args.ray,
            workers=args.workers,
        )
    except (ValueError, ImportError) as exc:  # ImportError: --ray without Ray installed
        p.error(str(exc))
    print(
        f"wrote {meta['hands']} hands, {meta['decisions']} decisions in {meta['shards']} shards "
        f"to {args.out} ({meta['seconds']} s)"
    )
    return meta


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, "sichuan_env.train.data.make_dataset"))
