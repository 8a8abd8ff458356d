r"""A fitted model's luck adjustment on fresh walls, against the shipped ``luck``, paired.

    python -m research.luck_residual.wall_eval --model runs/lr-tiles/model.pt --agent distill \
        --walls 1000 --seed 841 --out research/luck_residual/results/wall-tiles-distill-s841.json

One ``--agent`` against three heuristics, every wall dealt four times
(``evaluate.play_duplicate``); the *same* records adjusted by the shipped ``luck``
and by ``--model`` (``fit.py``'s ``model.pt``), draw corrections only: the deal's
correction of a lineup-blind model cancels over a wall's four rotations, so the
per-wall figures are those of ``sichuan-eval``. Prints and writes the CI ratio of
each (adjusted over plain 95% half-width, bootstrap over walls) and their paired
ratio.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.luck_events import CHUNK, extract
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from research.luck_residual.fit import values
from research.luck_residual.measure import RULES
from research.luck_residual.models import FeatNet, TileNet
from research.luck_scale.paired import paired_ratio
from research.table_value.measure import ci_ratio
from sichuan_env._cli import path_problem, write_atomic


def load_model(path: Path) -> torch.nn.Module:
    """A ``fit.py`` ``model.pt``."""
    doc = torch.load(path, weights_only=True)
    net = TileNet() if doc["kind"] == "tiles" else FeatNet()
    net.load_state_dict(doc["state"])
    return net.eval()


def draw_corrections(net: torch.nn.Module, records: list[dict]) -> np.ndarray:
    """``float64[H, 4]``: each hand's summed draw corrections by ``net``."""
    out = np.zeros((len(records), 4))
    for first in range(0, len(records), CHUNK):
        ev = extract(records[first : first + CHUNK], RULES, first=first)
        live = ev.probs.sum(axis=2) > 0
        live[:, 0] = False
        live &= np.arange(live.shape[1])[None, :] < ev.n_events[:, None]
        hi, ei = np.nonzero(live)
        d = {"x": ev.feats[hi, ei], "p": ev.probs[hi, ei], "a": ev.actual[hi, ei],
             "tiles": ev.tiles[hi, ei], "wallc": ev.wallc[hi, ei], "drawer": ev.drawer[hi, ei]}  # fmt: skip
        with torch.no_grad():
            for i in range(0, len(hi), 2048):
                idx = np.arange(i, min(i + 2048, len(hi)))
                v = values(net, d, idx).double()
                p = torch.from_numpy(d["p"][idx]).double()
                w = p / p.sum(-1, keepdim=True)
                c = v[torch.arange(len(idx)), torch.from_numpy(d["a"][idx])] - (
                    w[..., None] * v
                ).sum(1)
                np.add.at(out, first + hi[idx], c.numpy())
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the command line."""
    ap = argparse.ArgumentParser(prog="python -m research.luck_residual.wall_eval", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--agent", default="distill")
    ap.add_argument("--walls", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=841)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    lineup = [args.agent, "heuristic", "heuristic", "heuristic"]
    t0 = time.perf_counter()
    records = play_duplicate(lineup, args.walls, RULES, args.seed, progress=False)
    recs = [r for _, _, r in records]
    plain = per_wall(lineup, records, args.walls)[args.agent][0]
    shipped = LuckModel.load("luck").corrections(recs).draw
    fitted = draw_corrections(load_model(args.model), recs)
    doc: dict = {"agent": args.agent, "walls": args.walls, "seed": args.seed, "model": str(args.model),
                 "plain": dict(zip(("mean", "ci95"), mean_ci(plain), strict=True)), "models": {}}  # fmt: skip
    adj = {}
    for name, corr in (("luck", shipped), ("fitted", fitted)):
        adj[name] = per_wall(lineup, records, args.walls, corr)[args.agent][1]
        m, ci = mean_ci(adj[name])
        doc["models"][name] = {"mean": m, "ci95": ci, "ci_ratio": ci_ratio(plain, adj[name])}
        r = doc["models"][name]["ci_ratio"]
        print(
            f"{name}: {m:+.3f} +- {ci:.3f}, CI ratio {r['ratio']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
        )
    doc["paired"] = paired_ratio(adj["luck"], adj["fitted"])
    doc["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"plain {doc['plain']['mean']:+.3f} +- {doc['plain']['ci95']:.3f}; fitted over luck, paired: "
          f"{doc['paired']['ratio']:.3f} [{doc['paired']['ci95'][0]:.3f}, {doc['paired']['ci95'][1]:.3f}]")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
