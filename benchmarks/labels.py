"""Expert-iteration label throughput: rows/s with heuristic and network rollouts, same hands, same run.

    python -m benchmarks.labels                       # distill's play, 64 hands
    python -m benchmarks.labels --rollout-net agents/checkpoints/rollout-small.pt --hands 128
    python -m benchmarks.labels --rollout-net agents/checkpoints/rollout-small.pt agents/checkpoints/rollout-aux.pt

Every case labels the same hands (``exit_labels.label_shard``: the network's
play, a share of its decisions scored by paired determinized rollouts); only
who plays the rollouts changes: the heuristic in every seat, the labelled
network itself in its seats (``--rollout network``), and, with
``--rollout-net``, each smaller network in those seats. A network decision
updates its first layer from the seat's last observation
(``sichuan_env.agents.nn.net_cache``). Reported per case:
rows, seconds, rows per second and the ratio to the heuristic rollouts' rows
per second (the issue's goal: at least 0.5). A warm-up shard of 2 hands
per case runs first, so numba's compile is outside the timings.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba
import torch
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.train.policy.exit_labels import label_shard

from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env._cli import int_arg

KW = {"samples": 16, "draws": 8, "gap": 1, "p_label": 0.35, "claims": True, "pool": 0.5}
"""``exit_labels``' defaults."""


def main(argv: list[str] | None = None) -> dict:
    """Label the hands once per case; print the table; write JSON."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.labels", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--net", type=Path, default=Path("agents/checkpoints/distill.pt"))
    p.add_argument(
        "--rollout-net", type=Path, nargs="*", default=[], help="smaller rollout networks"
    )
    p.add_argument("--hands", type=int_arg(2, 4096), default=64)
    p.add_argument("--seed", type=int_arg(0), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=2)
    p.add_argument(
        "--json", type=Path, default=None, help="default: benchmarks/results/labels-*.json"
    )
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(args.threads)
    try:
        net, _ = load_network(args.net)
        small = [(f"network ({path.name})", "network", load_network(path)[0])
                 for path in args.rollout_net]  # fmt: skip
    except (OSError, ValueError) as exc:
        p.error(str(exc))
    cases = [("heuristic", "heuristic", None), ("network", "network", None), *small]
    rows = []
    for label, rollout, player in cases:
        label_shard(net, args.seed + 1, 0, 2, rollout=rollout, rollout_net=player, **KW)  # warm-up
        log(f"{label}: {args.hands} hands ...")
        t0 = time.perf_counter()
        part, decisions = label_shard(net, args.seed, 0, args.hands, rollout=rollout,
                                      rollout_net=player, **KW)  # fmt: skip
        sec = time.perf_counter() - t0
        rows.append({"rollouts": label, "rows": len(part["obs"]), "seconds": sec,
                     "rows_per_s": len(part["obs"]) / sec, "decisions": decisions})  # fmt: skip
    base = rows[0]["rows_per_s"]
    for r in rows:
        r["ratio_to_heuristic"] = r["rows_per_s"] / base
    print_table(
        [("rollouts", "left"), ("rows", "right"), ("seconds", "right"), ("rows/s", "right"),
         ("vs heuristic", "right")],
        [[r["rollouts"], str(r["rows"]), f"{r['seconds']:.1f}", f"{r['rows_per_s']:.2f}",
          f"{r['ratio_to_heuristic']:.2f}"] for r in rows],
    )  # fmt: skip
    body = {"net": str(args.net), "rollout_net": [str(x) for x in args.rollout_net],
            "hands": args.hands, "seed": args.seed, "settings": KW, "cases": rows}  # fmt: skip
    return write_results("labels", body, args.json)


if __name__ == "__main__":
    main()
