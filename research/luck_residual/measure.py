r"""Where the value model's error lives: each draw's luck, by exact-policy rollouts.

    python -m research.luck_residual.measure --agent heuristic --walls 64 --reps 32 \
        --out research/luck_residual/results/heuristic-64x32-s801.json

Plays a duplicate match (one ``--agent`` against three heuristics, every wall dealt
four times), samples draws (``--share`` of them), and at each estimates, for every
tile ``t`` the drawer could have drawn, the points every seat still scores under the
lineup's own deterministic policies (``kernels``: ``--reps`` wall orders shared
by every ``t``). With ``delta_r(t) = x_r(t) - sum_t' p(t') x_r(t')`` (order ``r``),
``D(t)`` is estimated by ``mean_r delta_r(t)`` and its noise by
``var_r delta_r(t) / reps``, so that per event and seat, unbiasedly:

    luck  E_t[D(t)^2]          = sum_t p(t) (mean_r delta)^2 - sum_t p(t) var_r delta / reps
    error E_t[(D(t) - c(t))^2] = sum_t p(t) (mean_r delta - c)^2 - sum_t p(t) var_r delta / reps

where ``c(t) = V(t) - sum_t' p(t') V(t')`` is the value model's correction had ``t``
come. ``luck`` is what a correction at that draw could remove and ``error`` what the
model leaves; their sums over a category of draws, as shares of the totals, show
where the residual is. Categories are read from the state before the draw.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval import luck_features as F
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_events import record_logs
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import STYLES

from research.luck_residual import kernels as K
from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

RULES = RuleConfig.preset("xuezhan")
CHUNK = 32


def rollouts(records, styles, weights, want, keys) -> dict[str, np.ndarray]:
    """``kernels.rollout_events`` on ``records``: its arrays by name."""
    t = get_tables()
    h, e = want.shape
    walls, dealers, offsets, logs, n_logs = record_logs(records)
    o = {
        "feats": np.zeros((h, e, 27, 4, F.NF), np.float32), "probs": np.zeros((h, e, 27), np.float32),
        "actual": np.zeros((h, e), np.int64), "roll": np.zeros((h, e, 27, keys.shape[2], 4), np.float32),
        "status": np.zeros(h, np.int64), "n_events": np.zeros(h, np.int64),
    }  # fmt: skip
    K.rollout_events(
        np.zeros(h, STATE_DTYPE), np.zeros(h, STATE_DTYPE), walls, dealers, offsets, logs, n_logs,
        kernel_rules(RULES), t["FLAGS"], t["WAITS"], t["DIST"], styles, want, keys, o["feats"],
        o["probs"], o["actual"], o["roll"], o["status"], o["n_events"], weights,
    )  # fmt: skip
    if (o["status"] != K.OK).any():
        raise ValueError(f"records {np.flatnonzero(o['status'] != K.OK)} cannot be replayed")
    return o


def lineup_policies(lineup: list[str], records: list, net: bool) -> tuple[np.ndarray, tuple]:
    """``(styles int64[H, 4], weights)`` of ``play_duplicate`` records' seats, for ``kernels``.

    Every seat plays its rule-based style; with ``net``, lineup position 0 (a network
    agent) plays as the exported network (style -1) instead.
    """
    weights = no_weights()
    if net:
        from sichuan_env.agents.nn.numba_policy import export
        from sichuan_env.agents.registry import make_agent

        weights = export(make_agent(lineup[0]).net)
    styles = np.zeros((len(records), 4), np.int64)
    for i, (_, rot, _) in enumerate(records):
        for s in range(4):
            name = lineup[(s + rot) % 4]
            styles[i, s] = -1 if (net and name == lineup[0]) else STYLES[name]
    return styles, weights


def event_stats(model: LuckModel, feats, probs, actual, roll) -> dict[str, np.ndarray]:
    """Per event and seat: ``luck``, ``error`` (unbiased, see the module), and the event's facts."""
    n = len(actual)
    p = probs.astype(np.float64)
    p /= p.sum(axis=1, keepdims=True)
    valid = probs > 0
    v = np.zeros((n, 27, 4))
    v[valid] = model.values(feats[valid])
    c = v - (p[..., None] * v).sum(axis=1, keepdims=True)  # [n, 27, 4]
    x = roll.astype(np.float64)  # [n, 27, R, 4]
    delta = x - (p[:, :, None, None] * x).sum(axis=1, keepdims=True)
    mean = delta.mean(axis=2)  # [n, 27, 4]
    noise = delta.var(axis=2, ddof=1) / x.shape[2]
    pw = p[..., None]
    luck = (pw * mean**2).sum(1) - (pw * noise).sum(1)
    error = (pw * (mean - c) ** 2).sum(1) - (pw * noise).sum(1)
    return {"luck": luck, "error": error, "noise": (pw * noise).sum(1)}


def categories(feats, probs, actual) -> dict[str, np.ndarray]:
    """Boolean masks over events, from the state before the draw (and one after it)."""
    n = len(actual)
    rows = np.arange(n)
    real = feats[rows, actual]  # [n, 4, NF]
    drawer = real[:, :, F.F_DRAWER].argmax(axis=1)
    can_win = (feats[:, :, :, F.F_CANWIN].max(axis=2) > 0) & (probs > 0)  # [n, 27]
    drawer_tenpai = can_win.any(axis=1)
    others = real[:, :, F.F_WAIT_N] > 0
    others[rows, drawer] = False
    others_tenpai = others.sum(axis=1)
    wall = real[:, 0, F.F_WALL] * 55
    active = np.round(real[:, 0, F.F_ACTIVE] * 4)
    return {
        "all": np.ones(n, bool),
        "drawer tenpai": drawer_tenpai,
        "drawer not tenpai, no other seat tenpai": ~drawer_tenpai & (others_tenpai == 0),
        "drawer not tenpai, another seat tenpai": ~drawer_tenpai & (others_tenpai > 0),
        "the draw wins for the drawer": can_win[rows, actual],
        "wall > 35 left": wall > 35,
        "wall 15-35 left": (wall >= 15) & (wall <= 35),
        "wall < 15 left": wall < 15,
        "4 seats active": active == 4,
        "3 or fewer active": active < 4,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_residual.measure", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--agent", default="heuristic")
    ap.add_argument("--net", action="store_true", help="the agent is a network: roll it out too")
    ap.add_argument("--walls", type=int, default=64)
    ap.add_argument("--reps", type=int, default=32)
    ap.add_argument("--share", type=float, default=0.1, help="share of draws sampled")
    ap.add_argument("--seed", type=int, default=801)
    ap.add_argument("--model", default="luck")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    if args.reps < 2 or not 0 < args.share <= 1:
        ap.error("--reps at least 2, --share in (0, 1]")
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=False)
    recs = [r for _, _, r in records]
    styles, weights = lineup_policies(lineup, records, args.net)
    model = LuckModel.load(args.model)
    rng = np.random.default_rng([args.seed, 2])
    stats: dict[str, list] = {"luck": [], "error": [], "noise": []}
    cats: dict[str, list] = {}
    for first in range(0, len(recs), CHUNK):
        chunk = recs[first : first + CHUNK]
        want = rng.random((len(chunk), F.MAX_EVENTS)) < args.share
        keys = rng.random((len(chunk), F.MAX_EVENTS, args.reps, 55)).astype(np.float32)
        o = rollouts(chunk, styles[first : first + CHUNK], weights, want, keys)
        sel = want & (np.arange(F.MAX_EVENTS)[None, :] < o["n_events"][:, None])
        args_ = (o["feats"][sel], o["probs"][sel], o["actual"][sel])
        st = event_stats(model, *args_, o["roll"][sel])
        for k, kept in stats.items():
            kept.append(st[k])
        for k, m in categories(*args_).items():
            cats.setdefault(k, []).append(m)
        print(
            f"{first + len(chunk)}/{len(recs)} hands, {time.perf_counter() - t0:.0f} s", flush=True
        )
    s = {k: np.concatenate(v) for k, v in stats.items()}
    c = {k: np.concatenate(v) for k, v in cats.items()}
    tot_l, tot_e = s["luck"].sum(), s["error"].sum()
    rows = []
    for name, m in c.items():
        rows.append({
            "category": name, "events": int(m.sum()), "share_events": float(m.mean()),
            "luck_per_event": float(s["luck"][m].sum() / max(m.sum(), 1) / 4),
            "share_luck": float(s["luck"][m].sum() / tot_l),
            "share_error": float(s["error"][m].sum() / tot_e),
            "explained": float(1 - s["error"][m].sum() / s["luck"][m].sum()) if m.any() else None,
        })  # fmt: skip
    print(
        f"{'category':42s} {'events':>7s} {'luck/ev':>8s} {'luck %':>7s} {'error %':>7s} {'explained':>9s}"
    )
    for r in (r for r in rows if r["events"]):
        print(f"{r['category']:42s} {r['events']:7d} {r['luck_per_event']:8.3f} "
              f"{100 * r['share_luck']:6.1f}% {100 * r['share_error']:6.1f}% {r['explained']:9.3f}")  # fmt: skip
    print(f"noise per event and seat (removed): {s['noise'].mean():.4f}")
    doc = {"agent": args.agent, "net": args.net, "walls": args.walls, "reps": args.reps,
           "share": args.share, "seed": args.seed, "model": args.model,
           "seconds": round(time.perf_counter() - t0, 1), "rows": rows,
           "noise_per_event_seat": float(s["noise"].mean())}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
