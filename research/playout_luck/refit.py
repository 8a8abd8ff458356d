"""The value model's last layer refitted, cross-fitted, to the adjusted estimate's variance.

    python -m research.playout_luck.refit --agent distill --walls 1000 --seed 521 \
        --out research/playout_luck/results/refit-distill-1000-s521.json

``luck``'s value of a seat is ``V_s = w . psi_s`` with ``psi_s = phi_s - mean_k phi_k``
(``phi``: the MLP's last hidden layer of that seat's features, ``w``: its output layer;
the output bias cancels in the zero-sum value). Every draw correction is linear in
``w``: per hand and seat, the shipped (post-draw) corrections sum to ``B . w``, the
playout ones (``kernels``) to ``G + A . w`` (``G``: the points scored on the
playouts, ``A``: the expected ``psi`` at their ends). So the ``w`` that minimises the
residual variance ``points - deal - G - A . w`` is a ridge regression, solved in
closed form. Fitted on one half of the walls and applied to the other (and the other
way round), the corrections keep their zero mean: ``w`` never sees the draws it
corrects.

Objectives: ``hand`` (every hand and seat of the training half), ``wall`` (the
agent's per-wall mean over the four rotations, what the interval is made of). The
ridge pulls ``w`` towards the shipped one, with ``alpha`` fixed before any run
(``ALPHA``) and a sensitivity table for the others (not a pick).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from rich.progress import track
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_features import NF
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import HEURISTIC

from research.playout_luck.measure import CHUNK, RULES, playout_arrays
from research.table_value.measure import ci_ratio
from sichuan_env._cli import path_problem, write_atomic

ALPHA = 0.1
"""The ridge's weight, fixed in advance: ``alpha * trace(X'X) / K`` towards the shipped ``w``."""
SENSITIVITY = (0.01, 1.0, 10.0)


def head(model: LuckModel) -> np.ndarray:
    """``w``: the output layer's weights ``float64[K]``."""
    return model.net.body[-1].weight.detach().numpy()[0].astype(np.float64)


def psi(model: LuckModel, feats: np.ndarray) -> np.ndarray:
    """``float32[M, 4, K]``: the last hidden layer of each seat, less the seats' mean."""
    f = torch.from_numpy(np.ascontiguousarray(feats.reshape(-1, 4, NF), dtype=np.float32))
    with torch.no_grad():
        others = (f.sum(-2, keepdim=True) - f) / 3.0
        phi = model.net.body[:-1](torch.cat([f, others], dim=-1))
        return (phi - phi.mean(-2, keepdim=True)).numpy()


def _normalized(p: np.ndarray) -> np.ndarray:
    p = p.astype(np.float64)
    s = p.sum(-1, keepdims=True)
    return np.divide(p, s, out=np.zeros_like(p), where=s > 0)


def _surprise(x: np.ndarray, p: np.ndarray, actual: np.ndarray, live: np.ndarray) -> np.ndarray:
    """``sum_e x[actual] - sum_t p x[t]`` over live events: ``x [H, E, 27, ...]``."""
    tail = (1,) * (x.ndim - 3)
    happened = np.take_along_axis(x, actual.reshape(*actual.shape, 1, *tail), axis=2)[:, :, 0]
    expected = (p.reshape(*p.shape, *tail) * x).sum(2)
    return np.where(live.reshape(*live.shape, *tail), happened - expected, 0.0).sum(1)


def parts(model: LuckModel, o: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``G [H, 4]``, ``A [H, 4, K]``, ``B [H, 4, K]`` of ``playout_arrays``' output ``o``."""
    h, e = o["probs"].shape[:2]
    live = np.arange(e)[None, :] < o["n_events"][:, None]
    p = _normalized(np.where(live[..., None], o["probs"], 0.0))
    k = head(model).size
    post = np.zeros((h, e, 27, 4, k), np.float32)
    post[p > 0] = psi(model, o["feats"][p > 0])
    leaf = (p > 0)[..., None] & (o["over"] == 0)[..., None] & (o["probs2"] > 0)
    idx = np.flatnonzero(leaf.ravel())
    ends = np.zeros((h * e * 27, 4, k))
    if idx.size:
        p2 = _normalized(o["probs2"]).ravel()[idx]
        rows = psi(model, o["feats2"].reshape(-1, 4, NF)[idx]) * p2[:, None, None]
        group = idx // 27
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        ends[group[starts]] = np.add.reduceat(rows.astype(np.float64), starts, axis=0)
    ends = ends.reshape(h, e, 27, 4, k)
    return {
        "G": _surprise(o["gain"], p, o["actual"], live),
        "A": _surprise(ends, p, o["actual"], live),
        "B": _surprise(post.astype(np.float64), p, o["actual"], live),
    }


def ridge(x: np.ndarray, y: np.ndarray, w0: np.ndarray, alpha: float) -> np.ndarray:
    """``argmin |y - c - x w|^2 + lam |w - w0|^2`` (``c`` an intercept), ``lam = alpha tr/K``."""
    xc, yc = x - x.mean(0), y - y.mean()
    gram = xc.T @ xc
    lam = alpha * np.trace(gram) / x.shape[1]
    return np.linalg.solve(gram + lam * np.eye(x.shape[1]), xc.T @ yc + lam * w0)


def _rows(objective: str, y: np.ndarray, x: np.ndarray, seat: np.ndarray, wall: np.ndarray,
          walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The regression's rows for ``walls``: every hand and seat, or the agent's wall means."""
    on = np.isin(wall, walls)
    if objective == "hand":
        return x[on].reshape(-1, x.shape[-1]), y[on].reshape(-1)
    pick = np.arange(len(wall))
    xs, ys = x[pick, seat], y[pick, seat]  # the agent's seat of each hand
    order = np.searchsorted(walls, wall[on])
    xm = np.zeros((len(walls), x.shape[-1]))
    ym = np.zeros(len(walls))
    np.add.at(xm, order, xs[on])
    np.add.at(ym, order, ys[on])
    return xm, ym


def crossfit(objective: str, y: np.ndarray, x: np.ndarray, seat: np.ndarray, wall: np.ndarray,
             w0: np.ndarray, alpha: float) -> tuple[np.ndarray, list[np.ndarray]]:  # fmt: skip
    """Per hand and seat ``x . w`` with ``w`` fitted on the other half of the walls; the ``w``s."""
    out = np.zeros(y.shape)
    ws = []
    for fold in (0, 1):
        train = np.unique(wall[wall % 2 != fold])
        w = ridge(*_rows(objective, y, x, seat, wall, train), w0, alpha)
        ws.append(w)
        out[wall % 2 == fold] = x[wall % 2 == fold] @ w
    return out, ws


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.playout_luck.refit", description=__doc__)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--walls", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=521)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.walls < 4:
        ap.error("--walls: at least 4 (two per half)")
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=True)
    play_s = time.perf_counter() - t0
    recs = [r for _, _, r in records]
    wall = np.array([w for w, _, _ in records])
    seat = np.array([(-rot) % 4 for _, rot, _ in records])  # lineup[(s + rot) % 4] == agent
    model = LuckModel.load("luck")
    shipped = model.corrections(recs)
    t1 = time.perf_counter()
    styles = np.full((len(recs), 4), HEURISTIC, np.int64)
    got: dict[str, list[np.ndarray]] = {"G": [], "A": [], "B": []}
    for first in track(range(0, len(recs), CHUNK), description="playout parts"):
        o = playout_arrays(recs[first : first + CHUNK], styles[first : first + CHUNK], no_weights())
        for name, arr in parts(model, o).items():
            got[name].append(arr)
    part = {k: np.concatenate(v) for k, v in got.items()}
    parts_s = time.perf_counter() - t1
    w0 = head(model)
    gap = float(np.abs(part["B"] @ w0 - shipped.draw).max())
    pts = np.array([r["result"]["scores"] for r in recs], dtype=np.float64)
    plain = per_wall(lineup, records, args.walls)[args.agent][0]
    doc: dict = {"agent": args.agent, "walls": args.walls, "seed": args.seed, "play_s": play_s,
                 "parts_s": parts_s, "alpha": ALPHA, "shipped_check_max_gap": gap,
                 "plain": dict(zip(("mean", "ci95"), mean_ci(plain), strict=True)),
                 "cases": {}, "sensitivity": {}}  # fmt: skip

    def score(name: str, corr: np.ndarray, store: dict) -> None:
        adj = per_wall(lineup, records, args.walls, corr)[args.agent][1]
        assert adj is not None
        m, ci = mean_ci(adj)
        r = ci_ratio(plain, adj)
        store[name] = {"mean": m, "ci95": ci, "ci_ratio": r,
                       "hand_var": float((pts - corr).var())}  # fmt: skip
        print(f"{name:24s} {m:+.3f} +- {ci:.3f}  CI ratio {r['ratio']:.3f} "
              f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]  hand var {store[name]['hand_var']:.2f}")  # fmt: skip

    print(f"plain {doc['plain']['mean']:+.3f} +- {doc['plain']['ci95']:.3f}, "
          f"hand var {pts.var():.2f}; shipped check gap {gap:.1e}")  # fmt: skip
    bases = {"luck": (np.zeros_like(pts), part["B"]), "playout": (part["G"], part["A"])}
    for base, (g, x) in bases.items():
        score(base, shipped.deal + g + x @ w0, doc["cases"])
        for objective in ("hand", "wall"):
            for alpha in (ALPHA, *SENSITIVITY):
                fitted, ws = crossfit(objective, pts - shipped.deal - g, x, seat, wall, w0, alpha)
                store = doc["cases"] if alpha == ALPHA else doc["sensitivity"]
                score(f"{base}-{objective}-a{alpha:g}", shipped.deal + g + fitted, store)
                if alpha == ALPHA:
                    store[f"{base}-{objective}-a{alpha:g}"]["w_shift"] = [
                        float(np.linalg.norm(w - w0) / np.linalg.norm(w0)) for w in ws
                    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
