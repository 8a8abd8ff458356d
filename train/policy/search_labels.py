"""Search advantage labels: per-candidate rollout gains over the heuristic, at heuristic self-play decisions.

Expert iteration by classification (``sichuan_env.train.policy.bc --teacher search``) asks a
network to predict which candidate the search picks; most picks are between
candidates of near-equal value, so the label is mostly noise. Here the
label is the search's *estimate itself*: at a sampled own-turn decision of a
heuristic self-play hand, every candidate action (``sichuan_env.agents.search.rollout.candidates``
plus the heuristic's own choice) is played to the end from the same
``samples`` determinizations (``sichuan_env.agents.search.rollout.evaluate_candidates``; every
seat plays the heuristic afterwards), and the row stores each candidate's
mean point gain over the heuristic's choice and its standard error (a
decision with one candidate is stored with gain 0, no rollouts). A
network regressing these gains learns their expectation given the
observation (the noise averages out over similar states); ``sichuan_env.train.policy.search_distill``
fits one.

The hand then continues with the heuristic's action, so the rows come from
the state distribution of heuristic play, the one a policy that leaves the
heuristic rarely meets. Everything the determinizations read is public to
the acting seat (``sichuan_env.agents.search.rollout``).

Shards: ``shard-NNNNN.npz`` with, per row, ``obs`` uint8[83, 27] (observation
v1, the acting seat's public view), ``mask`` int8[88], ``cands`` int16[32]
(-1 padded), ``gain`` / ``se`` float32[32] (points; the heuristic's own
candidate has gain 0), ``base`` int8 (its index in ``cands``), ``hand``
int64 (the hand's index; ``seed_of(seed, hand)`` redeals it) and ``seat``
int8. ``meta.json`` holds the settings. ``--resume`` keeps the shards that
exist (each is written whole, then renamed).

    python -m sichuan_env.train.policy.search_labels --out runs/labels --hands 20000 --threads 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np
from sichuan_env.agents.eval.metrics import paired_stats
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.rollout import MAX_CANDIDATES, candidates, evaluate_candidates

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    run,
    write_atomic,
    write_if_changed,
)
from sichuan_env._jit import njit
from sichuan_env._npz import Spec, safe_load_npz
from sichuan_env.engine.deal import deal_seed, splitmix64
from sichuan_env.engine.state import PH_OVER, PH_TURN, STATE_DTYPE
from sichuan_env.engine.step import apply
from sichuan_env.kernels.tables import get_tables

ROWS_PER_HAND = 128
"""At most this many labelled decisions are kept per hand (``label_hands`` reports hands that reach it)."""
FIELDS = ("obs", "mask", "cands", "gain", "se", "base", "hand", "seat")
PROG = "sichuan_env.train.policy.search_labels"


def seed_of(seed: int, hand: int) -> int:
    """The deal seed of hand number ``hand`` of a label set made with ``seed``."""
    return (int(seed) << 32) + int(hand)


@njit
def label_hand(games, raw_games, i, scratch, raw, seed, thresh, knobs, env, out, j) -> int:
    """Play hand ``i`` (heuristic self-play, dealt from ``seed``), labelling decisions into ``out[*][j]``.

    An own-turn decision is labelled when a draw of the hand's generator is
    below ``thresh`` (of 2**64); a decision with a single candidate (a win,
    or one discard well ahead of the rest) is stored without rollouts (its
    gain 0: it still tells a network which actions are not candidates).
    Returns the rows written.
    """
    n_samples, draws, gap = knobs
    styles, rules, flags, waits, dist = env
    obs_o, mask_o, cands_o, gain_o, se_o, base_o, seat_o = out
    deal_seed(games, i, seed, rules)
    st = games[i]
    obs = np.zeros((83, 27), dtype=np.uint8)
    mask = np.zeros(88, dtype=np.int8)
    cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
    vals = np.zeros((n_samples, MAX_CANDIDATES), dtype=np.float64)
    no_bel = np.zeros((0, BELIEF_COLUMNS), dtype=np.float64)
    rng = seed ^ np.uint64(0xD1B54A32D192ED03)
    rows = 0
    while st.phase != PH_OVER:
        d = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if st.phase == PH_TURN and rows < obs_o.shape[1]:
            rng, r = splitmix64(rng)
            if r < thresh:
                obs_o[j, rows] = obs
                mask_o[j, rows] = mask
                n = candidates(st, rules, flags, mask, dist, gap, cands)
                base = -1
                for c in range(n):
                    if cands[c] == d:
                        base = c
                if base < 0 and n < MAX_CANDIDATES:
                    cands[n] = d
                    base = n
                    n += 1
                if base >= 0:
                    me = st.to_act
                    if n >= 2:
                        rng, r = splitmix64(rng)
                        evaluate_candidates(
                            scratch, raw, raw_games[i], me, cands, n, n_samples, draws, no_bel, r,
                            styles, rules, flags, waits, obs, mask, dist, vals,
                        )  # fmt: skip
                    else:
                        vals[:, 0] = 0.0
                    cands_o[j, rows, :] = -1
                    gain_o[j, rows, :] = 0.0
                    se_o[j, rows, :] = 0.0
                    for c in range(n):
                        cands_o[j, rows, c] = cands[c]
                        m, s = paired_stats(vals, n_samples, c, base)
                        gain_o[j, rows, c] = m
                        se_o[j, rows, c] = s
                    base_o[j, rows] = base
                    seat_o[j, rows] = me
                    rows += 1
        apply(st, d, rules, flags, waits)
    return rows


@njit(parallel=True)
def label_batch(games, scratch, seeds, thresh, knobs, env, out, counts) -> None:
    """``label_hand`` for every seed (hand ``j`` into ``games[j]``, ``scratch[j]``, ``out[*][j]``)."""
    raw_games = games.view(np.uint8).reshape(games.shape[0], -1)
    for j in numba.prange(seeds.shape[0]):
        raw = scratch[j].view(np.uint8).reshape(2, -1)
        counts[j] = label_hand(
            games, raw_games, j, scratch[j], raw, seeds[j], thresh, knobs, env, out, j
        )


def label_hands(
    seed: int, first: int, n_hands: int, *, samples: int, draws: int, gap: int, p_label: float
) -> dict[str, np.ndarray]:
    """Rows of hands ``first .. first + n_hands - 1`` of the label set made with ``seed``."""
    t = get_tables()
    env = (np.zeros(4, dtype=np.int64), RuleConfig().as_array(), t["FLAGS"], t["WAITS"], t["DIST"])
    r = ROWS_PER_HAND
    out = (
        np.zeros((n_hands, r, 83, 27), np.uint8),
        np.zeros((n_hands, r, 88), np.int8),
        np.full((n_hands, r, MAX_CANDIDATES), -1, np.int16),
        np.zeros((n_hands, r, MAX_CANDIDATES), np.float32),
        np.zeros((n_hands, r, MAX_CANDIDATES), np.float32),
        np.zeros((n_hands, r), np.int8),
        np.zeros((n_hands, r), np.int8),
    )
    counts = np.zeros(n_hands, np.int64)
    seeds = np.array([seed_of(seed, first + h) for h in range(n_hands)], dtype=np.uint64)
    thresh = np.uint64(min(int(p_label * 2.0**64), 2**64 - 1))
    games = np.zeros(n_hands, dtype=STATE_DTYPE)
    scratch = np.zeros((n_hands, 2), dtype=STATE_DTYPE)
    label_batch(games, scratch, seeds, thresh, (samples, draws, gap), env, out, counts)
    keep = np.arange(r)[None, :] < counts[:, None]
    rows = dict(zip(FIELDS[:5], (a[keep] for a in out[:5]), strict=True))
    rows["base"] = out[5][keep]
    rows["hand"] = np.repeat(np.arange(first, first + n_hands, dtype=np.int64), counts)
    rows["seat"] = out[6][keep]
    return rows


SHARD = {
    "obs": Spec(("n", 83, 27), "uint8"),
    "mask": Spec(("n", 88), "int8"),
    "cands": Spec(("n", MAX_CANDIDATES), "int16"),
    "gain": Spec(("n", MAX_CANDIDATES), "float32"),
    "se": Spec(("n", MAX_CANDIDATES), "float32"),
    "base": Spec(("n",), "int8"),
    "hand": Spec(("n",), "int64"),
    "seat": Spec(("n",), "int8"),
}
"""A label shard's arrays (``sichuan_env._npz``: checked before any data is read)."""
MAX_SHARD_BYTES = 4096 * ROWS_PER_HAND * 3000
"""Bytes a shard's arrays may hold (``--shard-hands`` 4096 at the row cap)."""
LABEL_FILES = ("meta.json", "shard-*.npz")
"""What a label directory holds (``--resume`` extends it, ``--overwrite`` removes it first)."""
MAX_META_BYTES = 1 << 16
"""Bytes ``meta.json`` may take."""


def _read_shard(f: Path) -> dict[str, np.ndarray]:
    return safe_load_npz(f, SHARD, max_bytes=MAX_SHARD_BYTES, what="label shard")


def read_label_meta(path: str | os.PathLike) -> dict:
    """A label directory's ``meta.json``, bounded and checked (``settings.p_label`` in (0, 1]).

    Raises:
        ValueError: missing, too large, not UTF-8 JSON, nested too deeply, or without
            a ``settings`` object whose ``p_label`` is a number in (0, 1].
    """
    f = Path(path) / "meta.json"
    try:
        if f.stat().st_size > MAX_META_BYTES:
            raise ValueError(f"{f} is larger than {MAX_META_BYTES} bytes")
        meta = json.loads(f.read_bytes().decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{f} is nested too deeply") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{f} cannot be read: {exc}") from None
    settings = meta.get("settings") if isinstance(meta, dict) else None
    p_label = settings.get("p_label") if isinstance(settings, dict) else None
    if isinstance(p_label, bool) or not isinstance(p_label, (int, float)) or not 0 < p_label <= 1:
        raise ValueError(f"{f}: settings.p_label must be a number in (0, 1], got {p_label!r}")
    return meta


def load_labels(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every shard of a label directory, concatenated and validated.

    Raises:
        ValueError: no shards, a missing field, or values out of range (nothing read from disk is trusted).
    """
    files = sorted(Path(path).glob("shard-[0-9][0-9][0-9][0-9][0-9].npz"))
    if not files:
        raise ValueError(f"no label shards (shard-*.npz) in {path}")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
    for f in files:
        shard = _read_shard(f)  # shapes and dtypes checked: the shards concatenate
        try:
            check_labels(shard)
        except ValueError as exc:
            raise ValueError(f"{f}: {exc}") from None
        for k, v in shard.items():
            parts[k].append(v)
    return {k: np.concatenate(v) for k, v in parts.items()}


def check_labels(rows: dict[str, np.ndarray]) -> None:
    """Raise ``ValueError`` unless ``rows`` are well-formed label rows (shapes, dtypes, ranges)."""
    n = len(rows["obs"])
    want = {
        "obs": (np.uint8, (n, 83, 27)),
        "mask": (np.int8, (n, 88)),
        "cands": (np.int16, (n, MAX_CANDIDATES)),
        "gain": (np.float32, (n, MAX_CANDIDATES)),
        "se": (np.float32, (n, MAX_CANDIDATES)),
        "base": (np.int8, (n,)),
        "hand": (np.int64, (n,)),
        "seat": (np.int8, (n,)),
    }
    for k, (dt, shape) in want.items():
        a = rows[k]
        if a.dtype != dt or a.shape != shape:
            raise ValueError(f"labels: {k} is {a.dtype}{a.shape}, expected {np.dtype(dt)}{shape}")
    c = rows["cands"].astype(np.int64)
    if ((c < -1) | (c >= 88)).any() or not np.isin(rows["mask"], (0, 1)).all():
        raise ValueError("labels: candidates outside -1..87 or a mask not of 0/1")
    n_c = (c >= 0).sum(1)
    if (n_c < 1).any() or ((c >= 0) != (np.arange(MAX_CANDIDATES)[None] < n_c[:, None])).any():
        raise ValueError("labels: each row needs a candidate, candidates packed first")
    b = rows["base"].astype(np.int64)
    if ((b < 0) | (b >= n_c)).any():
        raise ValueError("labels: base index outside the row's candidates")
    legal = np.take_along_axis(rows["mask"], np.maximum(c, 0), 1) == 1
    if not legal[c >= 0].all():
        raise ValueError("labels: a candidate is not legal in its row's mask")
    if not (np.isfinite(rows["gain"]).all() and np.isfinite(rows["se"]).all()):
        raise ValueError("labels: non-finite gains")
    if ((rows["seat"] < 0) | (rows["seat"] > 3)).any() or (rows["hand"] < 0).any():
        raise ValueError("labels: seat outside 0..3 or a negative hand index")


def open_label_dir(p: argparse.ArgumentParser, out: Path, settings: dict, hands: int,
                   shard_hands: int, resume: bool, extra: dict, what: str,
                   overwrite: bool = False) -> None:  # fmt: skip
    """Make or reopen the label directory ``out`` and write its ``meta.json``.

    An existing directory needs ``resume`` and the same ``settings`` (else the
    run stops, naming ``what`` differs), or ``overwrite`` (its labels are removed
    first: ``claim_output_or_exit``); a partial last shard of a shorter run
    is removed, to be made again whole. ``extra`` is added to the meta, which is
    rewritten only when it changes.
    """
    from sichuan_env.train.common import git_commit

    claim_output_or_exit(p, "--out", out, LABEL_FILES, resume=resume, overwrite=overwrite,
                         what="label set")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "meta.json"
    if meta_path.exists():
        try:
            old = read_label_meta(out)
        except ValueError as exc:
            fail(p.prog, exc)
        if old.get("settings") != settings:
            fail(p.prog, f"{out} was made with {what}: {str(old.get('settings'))[:300]}")
        old_hands = old.get("hands")
        if isinstance(old_hands, int) and old_hands % shard_hands and hands > old_hands:
            (out / f"shard-{old_hands // shard_hands:05d}.npz").unlink(missing_ok=True)
        commit = old.get("commit")  # a resumed run keeps the commit of its first shards
    else:
        commit = git_commit()
    meta = {"settings": settings, "hands": hands, **extra, "commit": commit}
    write_if_changed(meta_path, json.dumps(meta, indent=1))  # whole or not at all; unchanged: kept


def count_label_rows(out: Path) -> dict[str, int]:
    """``{"shards", "rows"}`` of the label shards on disk in ``out`` (what a resumed run holds).

    Reads each shard's ``base`` array only (one byte a row, its header checked first).

    Raises:
        ValueError: a shard that cannot be read.
    """
    files = sorted(out.glob("shard-[0-9][0-9][0-9][0-9][0-9].npz"))
    base = {"base": SHARD["base"]}
    rows = sum(
        len(safe_load_npz(f, base, max_bytes=MAX_SHARD_BYTES, what="label shard")["base"])
        for f in files
    )
    return {"shards_on_disk": len(files), "rows": rows}


def rows_on_disk(prog: str, out: Path) -> dict[str, int]:
    """``count_label_rows(out)`` for a CLI: a shard that cannot be read is one line, exit 1."""
    try:
        return count_label_rows(out)
    except ValueError as exc:
        fail(prog, exc)


def missing_shards(out: Path, hands: int, shard_hands: int) -> list[tuple[int, int, int]]:
    """``(shard, first hand, hands)`` of every shard of ``out`` not yet written."""
    n_shards = -(-hands // shard_hands)
    return [(s, s * shard_hands, min(shard_hands, hands - s * shard_hands))
            for s in range(n_shards) if not (out / f"shard-{s:05d}.npz").exists()]  # fmt: skip


def write_shard(out: Path, s: int, part: dict[str, np.ndarray]) -> None:
    """Write shard ``s`` whole, then rename it into place (a shard on disk is never partial)."""
    write_atomic(out / f"shard-{s:05d}.npz", lambda f: np.savez_compressed(f, **part))


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m sichuan_env.train.policy.search_labels``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], prog=PROG)
    p.add_argument("--out", required=True, help="directory of the shards")
    p.add_argument("--hands", type=int_arg(1, 10**8), default=20000, help="hands to play (default 20000)")  # fmt: skip
    p.add_argument(
        "--shard-hands", type=int_arg(1, 4096), default=128, help="hands per shard (128)"
    )
    p.add_argument("--samples", type=int_arg(2, 4096), default=16, help="determinizations per decision (16)")  # fmt: skip
    p.add_argument("--draws", type=int_arg(1, 256), default=8, help="draws per determinization (8)")
    p.add_argument(
        "--gap", type=int_arg(-1, 14), default=1, help="candidates within GAP shanten (1)"
    )
    p.add_argument("--p-label", type=float_arg(0, 1), default=0.35, help="share of own turns labelled")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0, 2**31 - 1), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=2, help="numba threads")
    p.add_argument("--resume", action="store_true", help="keep existing shards, make the rest")
    add_overwrite(p, "label set")
    return p


def main(argv: list[str] | None = None) -> dict:
    """Write the label shards; returns the settings and row counts."""
    p = build_parser()
    args = p.parse_args(argv)
    problem = dir_problem(Path(args.out))
    if problem:
        p.error(f"--out: {problem}")
    from rich.progress import track

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    out = Path(args.out)
    settings = {k: getattr(args, k) for k in ("samples", "draws", "gap", "p_label", "seed")}
    settings["shard_hands"] = args.shard_hands
    open_label_dir(
        p,
        out,
        settings,
        args.hands,
        args.shard_hands,
        args.resume,
        {},
        "other settings",
        args.overwrite,
    )
    n_shards = -(-args.hands // args.shard_hands)
    rows = full = 0
    t0 = time.time()
    for s, first, n in track(
        missing_shards(out, args.hands, args.shard_hands), description="label shards"
    ):
        part = label_hands(args.seed, first, n, samples=args.samples, draws=args.draws,
                           gap=args.gap, p_label=args.p_label)  # fmt: skip
        write_shard(out, s, part)
        rows += len(part["obs"])
        full += int((np.bincount(part["hand"] - first, minlength=n) >= ROWS_PER_HAND).sum())
    summary = {"shards": n_shards, "new_rows": rows, **rows_on_disk(p.prog, out),
               "hands_at_row_cap": full, "seconds": round(time.time() - t0, 1)}  # fmt: skip
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
