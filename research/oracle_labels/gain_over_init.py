"""The held-out first-order gain of a fitted network over the network it started from.

For a fit of ``search_distill`` (directly or as a round of ``exit``), reads the fit's own held-out
label rows (hands with ``hand % val_mod == 0``, as the fit split them), and per margin prints and
writes ``distill_objective.margin_table`` with ``ref_choice``: the rows' rollout gains of the
fitted network's choice minus those of ``--init``'s own choice, summed per hand. With labels whose
rollouts play ``--init`` (``exit --rollout network``, round 1), this is the gain of one step of
policy iteration over it, to first order. Fits made before ``search_distill`` reported it itself.

    python -m research.oracle_labels.gain_over_init runs/exit-oracle-net-big/round-01/fit \
        --out research/oracle_labels/results/exit-oracle-net-big-r1-gain-over-init.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.policy.distill_objective import init_choices, margin_table, prepare
from sichuan_env.train.policy.search_labels import load_labels, read_label_meta

from sichuan_env._files import write_atomic


def main(argv: list[str] | None = None) -> dict:
    """Print and (with --out) write the margin table with the gain over the init network."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fit", type=Path, help="the fit's run folder (distilled.pt and its metadata)")
    p.add_argument("--margins", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5])
    p.add_argument("--out", type=Path, help="write the table here as JSON")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    args = p.parse_args(argv)
    if args.out is not None and args.out.exists() and not args.overwrite:
        p.error(f"--out: {args.out} exists (--overwrite replaces it)")
    torch.set_num_threads(1)
    net, doc = load_network(args.fit / "distilled.pt")
    net.eval()
    labels = Path(doc["labels"])
    rows = load_labels(labels)
    val = prepare({k: v[rows["hand"] % int(doc["val_mod"]) == 0] for k, v in rows.items()}, net)
    p_label = float(read_label_meta(labels)["settings"]["p_label"])
    table = margin_table(net, val, p_label, args.margins, init_choices(doc["init"], val))
    hands = len(np.unique(val["hand"]))
    print(f"{args.fit}: {len(val['hand'])} held-out rows of {hands} hands; init {doc['init']}")
    for r in table:
        print(f"  margin {r['margin']:.2f}: over the heuristic {r['gain_per_hand']:+.3f} ± "
              f"{r['ci95']:.3f}, over init {r['gain_over_init']:+.4f} ± "
              f"{r['gain_over_init_ci95']:.4f}, agrees with init {100 * r['init_agreement']:.1f}%")  # fmt: skip
    out = {"fit": str(args.fit), "init": doc["init"], "labels": str(labels), "chosen_margin":
           doc.get("margin"), "held_out_rows": len(val["hand"]), "held_out_hands": hands,
           "margins": table}  # fmt: skip
    if args.out:
        write_atomic(args.out, json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
