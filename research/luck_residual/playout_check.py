r"""How much of each draw's luck the one-step playout explains, on the labels' held-out draws.

    python -m research.luck_residual.playout_check --labels runs/lr-labels

``research/playout_luck`` plays every counterfactual draw forward to the next draw
with the lineup's policies and scores it there with ``luck``: ``W(t) = gain(t) +
E V(next)``. Its per-draw error against the rollout labels (noise removed, as in
``fit.py``) on the held-out shards of ``labels.py`` (every ``--val-every``-th; the
same draws, recovered from the run's seeds), beside the shipped post-draw
correction's on the same draws (which must equal ``fit.py``'s epoch-0 figure).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sichuan_env.agents.eval import luck_features as F
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel

from research.luck_residual.measure import RULES, lineup_policies
from research.luck_variance.fit import shard_paths
from research.playout_luck.measure import expect, playout_arrays
from sichuan_env._cli import path_problem, write_atomic


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_residual.playout_check",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--labels", type=Path, required=True)
    ap.add_argument("--val-every", type=int, default=8)
    ap.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    if args.out is not None and (args.out.exists() or path_problem(args.out)):
        ap.error(f"--out: {path_problem(args.out) or 'exists; choose another name'}")
    s = json.loads((args.labels / "labels.json").read_text())["settings"]
    lineup = [s["agent"], "heuristic", "heuristic", "heuristic"]
    records = play_duplicate(lineup, s["walls"], RULES, s["seed"], progress=False)
    styles_all, weights = lineup_policies(lineup, records, s["net"])
    model = LuckModel.load("luck")
    tot = {"luck": 0.0, "playout": 0.0, "there": 0.0, "noise": 0.0}
    n = 0
    shards = shard_paths(args.labels)
    for b in range(0, len(shards), args.val_every):
        sl = slice(b * s["chunk"], (b + 1) * s["chunk"])
        chunk = records[sl]
        recs = [r for _, _, r in chunk]
        styles = styles_all[sl]
        rng = np.random.default_rng([s["seed"], b, 5])
        want = rng.random((len(recs), F.MAX_EVENTS)) < s["share"]
        o = playout_arrays(recs, styles, weights)
        sel = want & (np.arange(F.MAX_EVENTS)[None, :] < o["n_events"][:, None])
        hi, ei = np.nonzero(sel)
        with np.load(shards[b]) as lab:
            d, noise, a = lab["d"].astype(np.float64), lab["noise"], lab["a"]
        if len(a) != len(hi) or not (a == o["actual"][hi, ei]).all():
            raise ValueError(f"shard {b}: the playouts' draws are not the labels'")
        p = o["probs"][hi, ei].astype(np.float64)
        p /= p.sum(1, keepdims=True)
        w = o["gain"][hi, ei] + np.where(o["over"][hi, ei][..., None] == 1, 0.0,
                                         expect(model, o["feats2"][hi, ei], o["probs2"][hi, ei]))  # fmt: skip
        v = np.zeros((len(hi), 27, 4))
        ok = p > 0
        v[ok] = model.values(o["feats"][hi, ei][ok])
        pw = p[..., None]
        nz = (pw * noise).sum(1)
        for name, val in (("luck", v), ("playout", w)):
            c = val - (pw * val).sum(1, keepdims=True)
            tot[name] += float(((pw * (d - c) ** 2).sum(1) - nz).sum())
        tot["there"] += float(((pw * d**2).sum(1) - nz).sum())
        tot["noise"] += float(nz.sum())
        n += 4 * len(hi)
    doc = {"labels": str(args.labels), "draws": n // 4, "luck_per_draw_seat": tot["there"] / n,
           "label_noise_per_draw_seat": tot["noise"] / n}  # fmt: skip
    for name in ("luck", "playout"):
        doc[name] = {"error": tot[name] / n, "explained": 1 - tot[name] / tot["there"]}
        print(f"{name}: error {tot[name] / n:.4f} per draw and seat, explained "
              f"{1 - tot[name] / tot['there']:.3f} (luck there {tot['there'] / n:.4f}, label noise {tot['noise'] / n:.4f}, {n // 4} draws)")  # fmt: skip
    if args.out is not None:
        write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
