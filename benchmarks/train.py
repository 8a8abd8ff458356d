"""Training throughput: PPO end to end, policy inference, and the env's share of the time.

    python -m benchmarks.train            # about a minute
    python -m benchmarks.train --quick

With the shipped architecture (the shipped ``ppo`` checkpoint's, else a
fresh net of the same shape; or ``--checkpoint``'s), measures:

- **PPO end to end**: decisions per second of ``train.ppo`` iterations
  (collect ``--envs`` x ``--steps`` decisions with the learner in every seat,
  then the PPO epochs), and the share of that time spent inside
  ``VectorEnv.step`` (the env), the policy's forward passes while
  collecting, and learning;
- **inference**: greedy ``TorchAgent.act_batch`` decisions per second at
  batch 1 and batch 1024 (real observations and masks).

Prints a table and writes JSON (machine, commit, figures) like the other benchmarks.
"""

from __future__ import annotations

import os

# see train/ppo.py: numba's spinning OpenMP threads starve torch's otherwise
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.torch_agent import SHIPPED_DIR, TorchAgent, load_network
from agents.torch_policy import PolicyConfig, PolicyNet, count_parameters
from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env._cli import float_arg, int_arg
from sichuan_env.envs.vector import VectorEnv
from train import ppo

SHIPPED_ARCH = PolicyConfig(aux=True)
"""The shipped agents' architecture (used when no checkpoint is shipped or given)."""


def bench_ppo(net: PolicyNet, envs: int, steps: int, budget: float, threads: int) -> dict:
    """Decisions/s of PPO iterations (self-play in every seat) and where the time goes."""
    args = ppo.build_parser().parse_args(["--envs", str(envs), "--steps", str(steps)])
    venv = VectorEnv(envs, seed=0, oracle=net.config.oracle_critic)
    coll = ppo.Collector(net, venv, [], 0.0, 0.0, args.reward_scale, seed=0)
    rows = venv.obs_shape[0] if net.config.oracle_critic else 0
    buf = ppo.Buffer(envs * steps, net.config.public_rows, rows)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    rng = np.random.default_rng(0)
    coll.collect(steps, buf)  # warm-up (compilation, allocation)
    ppo.ppo_update(net, opt, buf, args, None, True, rng)
    coll.stats.update(t_env=0.0, t_policy=0.0, t_opp=0.0)
    t_collect = t_learn = 0.0
    iters = 0
    t_start = time.perf_counter()
    while time.perf_counter() - t_start < budget or iters == 0:
        t0 = time.perf_counter()
        coll.collect(steps, buf)
        t1 = time.perf_counter()
        ppo.ppo_update(net, opt, buf, args, None, True, rng)
        t_collect += t1 - t0
        t_learn += time.perf_counter() - t1
        iters += 1
    total = t_collect + t_learn
    return {
        "decisions_per_s": iters * envs * steps / total,
        "stored_per_iteration": buf.n,
        "iterations": iters,
        "env_share": coll.stats["t_env"] / total,
        "policy_share": coll.stats["t_policy"] / total,
        "learn_share": t_learn / total,
        "threads": threads,
    }


def bench_inference(net: PolicyNet, batch: int, budget: float) -> float:
    """Greedy ``TorchAgent.act_batch`` decisions/s at ``batch`` rows per call."""
    venv = VectorEnv(max(batch, 1), seed=1)
    obs, mask, _ = venv.reset()
    for _ in range(40):  # get past the opening decisions
        obs, mask, _, _, _, _ = venv.step(mask.argmax(axis=1))
    obs, mask = obs[:batch].copy(), mask[:batch].copy()
    agent = TorchAgent(net, seed=0)
    agent.act_batch(obs, mask)
    calls = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget or calls == 0:
        agent.act_batch(obs, mask)
        calls += 1
    return calls * batch / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(prog="benchmarks.train", description=__doc__)
    p.add_argument("--checkpoint", type=Path, default=None, help="a .pt (default: a fresh net)")
    p.add_argument("--envs", type=int_arg(1, 65536), default=256)
    p.add_argument("--steps", type=int_arg(1, 4096), default=32)
    p.add_argument("--threads", type=int_arg(1, 256), default=2, help="torch threads")
    p.add_argument("--budget", type=float_arg(0, 3600), default=10.0, help="seconds per figure")
    p.add_argument("--quick", action="store_true", help="2 s budgets")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shipped = SHIPPED_DIR / "ppo.pt"
    path = args.checkpoint or (shipped if shipped.is_file() else None)
    if path is not None:
        try:
            net, _ = load_network(path)
        except ValueError as exc:
            p.error(f"--checkpoint: {exc}")
    else:
        net = PolicyNet(SHIPPED_ARCH)
    budget = 2.0 if args.quick else args.budget
    log(f"PPO end to end ({args.envs} envs x {args.steps} steps per iteration) ...")
    ppo_fig = bench_ppo(net.train(), args.envs, args.steps, budget, args.threads)
    log("inference at batch 1 and 1024 ...")
    inf1 = bench_inference(net.eval(), 1, budget)
    inf1024 = bench_inference(net, 1024, budget)
    arch = net.config.to_dict()
    params = count_parameters(net)
    print_table(
        [("measurement", "left"), ("decisions/s", "right"), ("notes", "left")],
        [
            [
                "PPO end to end (collect + learn)",
                f"{ppo_fig['decisions_per_s']:,.0f}",
                (
                    f"env {ppo_fig['env_share']:.1%}, policy forward "
                    f"{ppo_fig['policy_share']:.1%}, learn {ppo_fig['learn_share']:.1%}"
                ),
            ],
            ["inference, batch 1", f"{inf1:,.0f}", "greedy TorchAgent.act_batch"],
            ["inference, batch 1024", f"{inf1024:,.0f}", "greedy TorchAgent.act_batch"],
        ],
    )
    print(f"architecture {arch}, {params:,} parameters (acting), torch threads {args.threads}")
    return write_results(
        "train",
        {
            "architecture": arch,
            "parameters": params,
            "envs": args.envs,
            "steps": args.steps,
            "budget_s": budget,
            "ppo": ppo_fig,
            "inference_batch1_per_s": inf1,
            "inference_batch1024_per_s": inf1024,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
