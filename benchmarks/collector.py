"""The PPO collector alone: decisions per second, against a baseline collector in the same run.

    git show fb745e2:train/policy/rollout.py > /tmp/rollout_fb745e2.py
    python -m benchmarks.collector --baseline /tmp/rollout_fb745e2.py

Times ``Collector.collect`` (env steps, the learner's forward passes and sampling, the
opponents, the bookkeeping; no learning) of the current
``sichuan_env.train.policy.rollout`` and, with ``--baseline``, of another version of
that file loaded beside it, in interleaved rounds on the same machine state, each
from the same network, seeds and envs. Prints decisions per second of each, their
ratio (median over rounds, with a bootstrap 95% interval) and the current
collector's time split; writes JSON like the other benchmarks.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import torch
from sichuan_env.agents import make_agent
from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet
from sichuan_env.train.policy import rollout

from benchmarks.common import (
    add_collector_size_args,
    check_json_arg,
    log,
    median_ci,
    print_table,
    write_results,
)
from sichuan_env._cli import float_arg, int_arg
from sichuan_env.envs.vector import VectorEnv


def load_module(path: Path) -> ModuleType:
    """A ``rollout.py`` of another version, loaded as its own module."""
    spec = importlib.util.spec_from_file_location(f"baseline_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_round(mod: ModuleType, envs: int, steps: int, pool_frac: float) -> tuple[float, dict]:
    """Decisions/s of one ``collect`` (after a warm-up one) and the collector's stats."""
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(aux=True)).eval()
    venv = VectorEnv(envs, seed=0)
    pool = [("heuristic", make_agent("heuristic", seed=0))] if pool_frac > 0 else []
    coll = mod.Collector(net, venv, pool, pool_frac, 1.0, 0.1, seed=0)
    buf = mod.Buffer(envs * steps, net.config.public_rows, 0, AUX_SIZE)
    coll.collect(steps, buf)
    for key in coll.stats:
        coll.stats[key] = 0
    t0 = time.perf_counter()
    coll.collect(steps, buf)
    return envs * steps / (time.perf_counter() - t0), dict(coll.stats)


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(prog="benchmarks.collector", description=__doc__)
    p.add_argument("--baseline", type=Path, default=None, help="another version's rollout.py")
    add_collector_size_args(p, rounds=6)
    p.add_argument("--pool-frac", type=float_arg(0, 1), default=0.5)
    p.add_argument("--threads", type=int_arg(1, 256), default=2)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    torch.set_num_threads(args.threads)
    mods = {"current": rollout}
    if args.baseline is not None:
        try:
            mods["baseline"] = load_module(args.baseline)
        except (OSError, ValueError, ImportError, SyntaxError) as exc:
            p.error(f"--baseline: {exc}")
    rates: dict[str, list[float]] = {k: [] for k in mods}
    stats: dict = {}
    log(f"collect {args.envs} envs x {args.steps} steps, {args.rounds} interleaved rounds ...")
    for _ in range(args.rounds):
        for name, mod in mods.items():
            r, st = one_round(mod, args.envs, args.steps, args.pool_frac)
            rates[name].append(r)
            if name == "current":
                for k, v in st.items():
                    stats[k] = stats.get(k, 0) + v
    rows, doc = [], {"envs": args.envs, "steps": args.steps, "pool_frac": args.pool_frac}
    for name, rs in rates.items():
        med, lo, hi = median_ci(rs)
        rows.append([name, f"{med:,.0f}", f"{lo:,.0f}-{hi:,.0f}"])
        doc[name] = {"median_per_s": med, "ci95": [lo, hi], "rounds": rs}
    if "baseline" in rates:
        ratios = list(np.array(rates["current"]) / np.array(rates["baseline"]))
        med, lo, hi = median_ci(ratios)
        rows.append(["current / baseline", f"{med:.3f}x", f"{lo:.3f}-{hi:.3f}"])
        doc["ratio"] = {"median": med, "ci95": [lo, hi]}
    print_table([("collector", "left"), ("decisions/s", "right"), ("95% CI", "left")], rows)
    decisions = args.envs * args.steps * args.rounds
    split = {k: 1e6 * v / decisions for k, v in stats.items() if k.startswith("t_")}
    own = split["t_encode"] + split["t_copy"] + split["t_book"]
    doc["split_us_per_decision"] = split
    doc["collector_own_us_per_decision"] = own
    print("current collector, microseconds per decision: "
          + ", ".join(f"{k[2:]} {v:.3f}" for k, v in split.items() if k != "t_policy")
          + f"; own work (encode + copies + bookkeeping) {own:.3f}")  # fmt: skip
    return write_results("collector", doc, args.json)


if __name__ == "__main__":
    main()
