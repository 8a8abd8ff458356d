"""Playout luck corrections against the shipped ones, on the same duplicate records.

    python -m research.playout_luck.measure --agent distill --walls 400 --seed 501 \
        --out research/playout_luck/results/distill-400.json

Plays ``agent`` against three heuristics (every wall dealt four times), then adjusts
the same records with the shipped ``luck`` corrections and with the playout ones
(``kernels``: each counterfactual draw played by the heuristic to the next draw, then
the exact expectation of ``luck``'s value over that draw). Both keep ``luck``'s deal
correction. Prints and writes the CI ratios (adjusted over plain 95% half-width, with a
bootstrap interval over walls) and the seconds of each adjustment.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from rich.progress import track
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_events import record_logs
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import HEURISTIC, STYLES

from research.playout_luck import kernels as K
from research.table_value.measure import ci_ratio
from sichuan_env import RuleConfig
from sichuan_env._cli import path_problem, write_atomic
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

RULES = RuleConfig.preset("xuezhan")
CHUNK = 8


def expect(model: LuckModel, feats: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``sum_t p[..., t] V(feats[..., t])`` over the last slot axis: ``float64[..., 4]``."""
    valid = probs > 0
    vals = np.zeros((*probs.shape, 4))
    if valid.any():
        vals[valid] = model.values(feats[valid])
    p = probs.astype(np.float64)
    norm = p.sum(-1, keepdims=True)
    p = np.divide(p, norm, out=np.zeros_like(p), where=norm > 0)
    return (p[..., None] * vals).sum(-2)


def playout_arrays(
    records: list[dict], styles: np.ndarray, weights: tuple
) -> dict[str, np.ndarray]:
    """``kernels.playout_events`` on ``records`` (xuezhan): its output arrays by name."""
    t = get_tables()
    rules = kernel_rules(RULES)
    h = len(records)
    walls, dealers, offsets, logs, n_logs = record_logs(records)
    o = K.empty(h)
    K.playout_events(
        np.zeros(h, STATE_DTYPE), np.zeros(h, STATE_DTYPE), walls, dealers, offsets, logs, n_logs,
        rules, t["FLAGS"], t["WAITS"], t["DIST"], styles, o["feats"], o["probs"], o["actual"],
        o["gain"], o["over"], o["feats2"], o["probs2"], o["status"], o["n_events"], weights,
    )  # fmt: skip
    if (o["status"] != K.OK).any():
        raise ValueError(f"records {np.flatnonzero(o['status'] != K.OK)} cannot be replayed")
    return o


def playout_draw(
    model: LuckModel, records: list[dict], styles: np.ndarray, weights: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """``(playout, shipped)``: per hand and seat, the draw corrections summed over the hand."""
    o = playout_arrays(records, styles, weights)
    live = np.arange(o["probs"].shape[1])[None, :] < o["n_events"][:, None]  # [H, E]
    w = o["gain"] + np.where(
        o["over"][..., None] == 1, 0.0, expect(model, o["feats2"], o["probs2"])
    )
    p = np.where(live[..., None], o["probs"], 0.0).astype(np.float64)
    p = np.divide(
        p, p.sum(-1, keepdims=True), out=np.zeros_like(p), where=p.sum(-1, keepdims=True) > 0
    )
    happened = np.take_along_axis(w, o["actual"][:, :, None, None], axis=2)[:, :, 0]
    corr = np.where(live[..., None], happened - (p[..., None] * w).sum(2), 0.0).sum(1)
    # the shipped correction from the same arrays (a check that the replay matches luck's)
    v = np.zeros((*o["probs"].shape, 4))
    ok = p > 0
    v[ok] = model.values(o["feats"][ok])
    hv = np.take_along_axis(v, o["actual"][:, :, None, None], axis=2)[:, :, 0]
    ship = np.where(live[..., None], hv - (p[..., None] * v).sum(2), 0.0).sum(1)
    return corr, ship


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(
        prog="python -m research.playout_luck.measure", description=__doc__
    )
    ap.add_argument("--agent", required=True)
    ap.add_argument("--walls", type=int, default=400)
    ap.add_argument("--seed", type=int, default=501)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--net", help="a registered MLP agent whose network plays its seat in the playouts"
    )
    ap.add_argument(
        "--exact",
        action="store_true",
        help="a rule-based agent plays its own seat in the playouts (else the heuristic)",
    )
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    play_s = time.perf_counter() - t0
    recs = [r for _, _, r in records]
    model = LuckModel.load("luck")
    t1 = time.perf_counter()
    shipped = model.corrections(recs)
    luck_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    styles = np.full((len(recs), 4), HEURISTIC, np.int64)
    if args.exact:
        for i, (_, rot, _) in enumerate(records):
            styles[i] = [STYLES[lineup[(s + rot) % 4]] for s in range(4)]
    weights = no_weights()
    if args.net:
        from sichuan_env.agents.nn.numba_policy import export
        from sichuan_env.agents.registry import make_agent

        weights = export(make_agent(args.net).net)
        for i, (_, rot, _) in enumerate(records):
            for s in range(4):
                if lineup[(s + rot) % 4] == args.agent:
                    styles[i, s] = -1
    po = np.zeros((len(recs), 4))
    check = np.zeros((len(recs), 4))
    for first in track(range(0, len(recs), CHUNK), description="playout corrections"):
        po[first : first + CHUNK], check[first : first + CHUNK] = playout_draw(
            model, recs[first : first + CHUNK], styles[first : first + CHUNK], weights
        )
    po_s = time.perf_counter() - t2
    gap = float(np.abs(check - shipped.draw).max())
    plain = per_wall(lineup, records, args.walls)[lineup[0]][0]
    doc: dict = {"agent": args.agent, "walls": args.walls, "seed": args.seed, "play_s": play_s,
                 "plain": dict(zip(("mean", "ci95"), mean_ci(plain), strict=True)),
                 "replay_check_max_gap": gap, "models": {}}  # fmt: skip
    adjusted: dict[str, np.ndarray] = {}
    for name, corr, secs in (
        ("luck", shipped.total, luck_s),
        ("playout", shipped.deal + po, po_s),
    ):
        pts = np.array([r["result"]["scores"] for r in recs], dtype=np.float64)
        hv = {"points": float(pts.var()), "residual": float((pts - corr).var())}
        print(
            f"{name}: per hand and seat, variance of the points {hv['points']:.2f}, "
            f"of the adjusted points {hv['residual']:.2f}"
        )
        if args.agent == "heuristic":  # self-play: plain is 0 on every wall, no CI ratio
            doc["models"][name] = {"adjust_s": secs, "hand_var": hv}
            continue
        adj = per_wall(lineup, records, args.walls, corr)[args.agent][1]
        assert adj is not None
        m, ci = mean_ci(adj)
        doc["models"][name] = {"mean": m, "ci95": ci, "ci_ratio": ci_ratio(plain, adj),
                               "adjust_s": secs, "hand_var": hv}  # fmt: skip
        adjusted[name] = adj
        r = doc["models"][name]["ci_ratio"]
        print(f"{args.agent} {name}: {m:+.3f} +- {ci:.3f}, CI ratio {r['ratio']:.3f} "
              f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}], adjust {secs:.0f} s (play {play_s:.0f} s)")  # fmt: skip
    if len(adjusted) == 2:  # paired: the same walls resampled for both
        rng = np.random.default_rng(0)
        idx = rng.integers(0, args.walls, size=(2000, args.walls))
        r = adjusted["playout"][idx].std(axis=1, ddof=1) / adjusted["luck"][idx].std(axis=1, ddof=1)
        full = float(adjusted["playout"].std(ddof=1) / adjusted["luck"].std(ddof=1))
        lo, hi = float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))
        doc["playout_over_luck"] = {"ratio": full, "ci95": [lo, hi]}
        doc["per_wall"] = {"plain": plain.round(6).tolist()}
        doc["per_wall"].update({k: v.round(6).tolist() for k, v in adjusted.items()})
        print(f"playout over luck half-width (paired): {full:.3f} [{lo:.3f}, {hi:.3f}]")
    print(
        f"plain {doc['plain']['mean']:+.3f} +- {doc['plain']['ci95']:.3f}; replay check gap {gap:.2e}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
