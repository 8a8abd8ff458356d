"""The whole-table value network ``V``: states per second, batched, on the CPU or a device.

    python -m benchmarks.table_value                       # the shipped model, CPU
    python -m benchmarks.table_value --device cuda         # on a GPU

Measures, on states of real hands (heuristic self-play, replayed):

- ``TableModel.values``: one forward pass per state, at batch 1, 64 and 4096;
- the counterfactual pass of the luck adjustment (``TableValueNet.counterfactual_values``):
  the 27 states a draw could have led to, per event, first layers shared, counted as
  27 states per event;
- the whole adjustment of a match's records (``TableModel.corrections``: replay, features
  and values), in hands per second.

Prints a table and writes JSON (machine, commit, figures) like the other benchmarks.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.device import resolve_device
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck_events import extract
from sichuan_env.agents.eval.table_net import TableValueConfig, TableValueNet
from sichuan_env.agents.eval.table_rows import VOCAB, rows_of, seat_ids
from sichuan_env.agents.eval.table_value import TableModel

from benchmarks.common import check_json_arg, log, median_ci, print_table, write_results
from sichuan_env import RuleConfig
from sichuan_env._cli import float_arg, int_arg

RULES = RuleConfig.preset("xuezhan")


def rate(fn, items: int, budget: float) -> tuple[float, float, float]:
    """Median items per second of repeated ``fn()`` calls within ``budget`` s, and its 95% CI."""
    fn()
    rates = []
    t_start = time.perf_counter()
    while time.perf_counter() - t_start < budget or len(rates) < 3:
        t0 = time.perf_counter()
        fn()
        rates.append(items / (time.perf_counter() - t0))
    return median_ci(rates)


def load_model(spec: str | None, device: torch.device) -> tuple[TableModel, str]:
    """The shipped (or given) model, else random weights of the default shape."""
    try:
        return TableModel.load(spec or "table_value", str(device)), spec or "table_value"
    except (ValueError, OSError):
        if spec is not None:
            raise
    torch.manual_seed(0)
    doc = {"rules": RULES.to_dict(), "deal_baseline": [0.0] * 4, "vocab": list(VOCAB)}
    return TableModel(TableValueNet(TableValueConfig()), doc, str(device)), "random weights"


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(prog="benchmarks.table_value", description=__doc__)
    p.add_argument("--model", default=None, help="a table-value .pt (default: the shipped one)")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    p.add_argument("--threads", type=int_arg(1, 256), default=2, help="torch threads")
    p.add_argument("--walls", type=int_arg(1, 10000), default=16, help="walls of states")
    p.add_argument("--budget", type=float_arg(0, 3600), default=3.0, help="seconds per figure")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    torch.set_num_threads(args.threads)
    try:
        device = resolve_device(args.device)
        model, which = load_model(args.model, device)
    except ValueError as exc:
        p.error(str(exc))
    lineup = ["heuristic"] * 4
    log(f"states of {args.walls} walls x 4 rotations of heuristic self-play ...")
    recs = play_duplicate(lineup, args.walls, RULES, seed=0, progress=False)
    ev = extract([r for _, _, r in recs], RULES)
    ids = np.stack([seat_ids(lineup, rot) for _, rot, _ in recs])
    rows = rows_of(ev, ids)
    n = len(rows["y"])
    figures: dict[str, dict] = {}
    for batch in (1, 64, 4096):
        sub = {k: v[np.arange(batch) % n] for k, v in rows.items()}
        med, lo, hi = rate(lambda sub=sub: model.values(sub), batch, args.budget)
        figures[f"values, batch {batch}"] = {"states_per_s": med, "ci95": [lo, hi]}
    draws = np.flatnonzero(~rows["deal"])[:1024]
    hand = np.repeat(np.arange(len(recs)), ev.n_events)[draws]
    event = np.concatenate([np.arange(k) for k in ev.n_events])[draws]
    batch = {k: torch.from_numpy(np.ascontiguousarray(rows[k][draws])).to(device)
             for k in ("tiles", "wallc", "voids", "feats", "so_far", "lineup", "deal")}  # fmt: skip
    cf = torch.from_numpy(ev.feats[hand, event]).to(device)
    drawer = torch.from_numpy(ev.drawer[hand, event]).to(device)
    drawn = torch.from_numpy(ev.actual[hand, event]).to(device)

    def counterfactuals() -> None:
        with torch.no_grad():
            model.net.counterfactual_values(batch, cf, drawer, drawn).cpu()

    med, lo, hi = rate(counterfactuals, 27 * len(draws), args.budget)
    figures["counterfactuals, 1024 events x 27"] = {"states_per_s": med, "ci95": [lo, hi]}
    records = [r for _, _, r in recs]
    med, lo, hi = rate(lambda: model.corrections(records, ids), len(records), args.budget)
    figures["adjustment of match records"] = {"hands_per_s": med, "ci95": [lo, hi]}
    table = []
    for name, fig in figures.items():
        unit = "states/s" if "states_per_s" in fig else "hands/s"
        value = fig.get("states_per_s", fig.get("hands_per_s"))
        table.append([name, f"{value:,.0f} {unit}", f"{fig['ci95'][0]:,.0f}-{fig['ci95'][1]:,.0f}"])
    print_table([("measurement", "left"), ("median", "right"), ("95% CI", "left")], table)
    params = sum(p.numel() for p in model.net.parameters())
    print(f"model: {which}, {params:,} parameters, device {device}, torch threads {args.threads}")
    return write_results(
        "table_value",
        {
            "model": which,
            "parameters": params,
            "device": str(device),
            "threads": args.threads,
            "rows": n,
            "figures": figures,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
