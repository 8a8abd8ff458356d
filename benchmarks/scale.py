"""Scale-out: PPO rollout throughput on 1 and 2 Ray workers (local Ray), the same total envs.

    python -m benchmarks.scale            # about two and a half minutes
    python -m benchmarks.scale --quick

Collects ``sichuan_env.train.policy.ppo`` rollouts (``--envs`` x ``--steps`` decisions per
rollout, every decision of every seat counted, as ``sichuan_env.train.policy.ppo`` counts them)
with the shipped ``ppo`` architecture and an oracle critic, half the slots
against the pool (the heuristic and the policy itself), like a training run:

- **in-process**: ``sichuan_env.train.policy.ppo.Collector`` in this process, single-threaded
  (the reference);
- **Ray, N workers**: ``sichuan_env.train.policy.ppo_ray.RayRollouts`` with ``N`` single-threaded
  actors sharing the envs, timed from the learner's side (weights broadcast,
  collection, transfer of the buffers, merge), and each worker's resident memory;
  also the *CPU-bound* rate, decisions over the busiest worker's CPU seconds per
  rollout: what cores of their own would give the workers (Ray's and the
  learner's share aside), a figure that other jobs on the machine hardly change.
  The machine's load and CPU pressure before and after are recorded: the
  wall-clock figures mean something only on an idle machine.

The figure of interest is the 2-worker / 1-worker ratio (goal: >= 1.6 on a
2-core machine). Run it on an otherwise idle machine. Prints a table and
writes JSON (machine, commit, figures, ratio) like the other benchmarks.
"""

from __future__ import annotations

# see train/ppo.py: numba's spinning OpenMP threads starve torch's otherwise
import argparse
import copy
import os
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.eval.distributed import init_ray, rss_mib, single_thread
from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import SHIPPED_DIR, TorchAgent, load_network
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.train.policy import ppo
from sichuan_env.train.policy.ppo_ray import RayRollouts

from benchmarks.common import check_json_arg, log, print_table, write_results
from sichuan_env import RuleConfig
from sichuan_env._cli import float_arg, int_arg
from sichuan_env.encoding.registry import obs_shape
from sichuan_env.envs.vector import VectorEnv


def learner_net() -> PolicyNet:
    """The shipped ``ppo`` weights with a fresh oracle critic (a fresh net if none is shipped)."""
    shipped = SHIPPED_DIR / "ppo.pt"
    if not shipped.is_file():
        return PolicyNet(PolicyConfig(aux=True, oracle_critic=True))
    src, _ = load_network(shipped)
    net = PolicyNet(PolicyConfig(**{**src.config.to_dict(), "oracle_critic": True}))
    net.load_state_dict(src.state_dict(), strict=False)
    return net.train()


def make_pool(net: PolicyNet) -> list:
    """The heuristic and a frozen copy of the policy, as a training run's pool starts."""
    frozen = copy.deepcopy(net).eval()
    for q in frozen.parameters():
        q.requires_grad_(False)
    return [("heuristic", HeuristicAgent()), ("init", TorchAgent(frozen, name="init"))]


def busy() -> dict[str, float]:
    """The machine's load average and CPU pressure (share of time tasks waited for a CPU)."""
    out = {"loadavg_1min": os.getloadavg()[0]}
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            some = f.readline().split()
        out["cpu_pressure_avg60"] = float(some[2].split("=")[1])
    except (OSError, IndexError, ValueError):
        pass
    return out


def _buffer(net: PolicyNet, cap: int) -> ppo.Buffer:
    oracle_rows = obs_shape(net.config.obs_version, oracle=True)[0]
    return ppo.Buffer(cap, net.config.public_rows, oracle_rows, AUX_SIZE if net.config.aux else 0)


def _time(collect, buf: ppo.Buffer, steps: int, budget: float, after=None) -> tuple[float, int]:
    """Seconds and rollouts of repeated ``collect`` calls for ``budget`` seconds (after 2 warm-ups).

    ``after()`` (cheap) runs after each timed call.
    """
    for _ in range(2):
        collect(steps, buf)
    n = 0
    t0 = time.perf_counter()
    while n == 0 or time.perf_counter() - t0 < budget:
        collect(steps, buf)
        if after is not None:
            after()
        n += 1
    return time.perf_counter() - t0, n


def bench_ray(net: PolicyNet, workers: int, envs: int, steps: int, budget: float) -> dict:
    """Rollout decisions/s of ``RayRollouts`` with ``workers`` actors, and their memory."""
    args = ppo.build_parser().parse_args(
        ["--envs", str(envs), "--steps", str(steps), "--ray", "local", "--workers", str(workers)]
    )
    rollouts = RayRollouts(net, RuleConfig(), make_pool(net), args, env_seed=1, seed=0)
    buf = _buffer(net, envs * steps)
    slowest: list[float] = []  # per rollout: the busiest worker's CPU seconds

    def record() -> None:
        slowest.append(max(st["cpu_collect"] for st in rollouts.worker_stats))

    try:
        seconds, n = _time(rollouts.collect, buf, steps, budget, record)
        memory = rollouts.memory_mib()
    finally:
        rollouts.close()
    return {
        "workers": workers,
        "decisions_per_s": envs * steps * n / seconds,
        # what cores of their own would give the workers (the learner's and Ray's share aside):
        # unlike the wall-clock figure, other jobs on the machine hardly change it
        "cpu_bound_decisions_per_s": envs * steps / float(np.mean(slowest)),
        "rollouts": n,
        "seconds": seconds,
        "stored_per_rollout": buf.n,
        "worker_rss_mib": memory,
    }


def bench_in_process(net: PolicyNet, envs: int, steps: int, budget: float) -> dict:
    """Rollout decisions/s of ``Collector`` in this process, single-threaded."""
    single_thread()
    venv = VectorEnv(envs, seed=1, oracle=True)
    coll = ppo.Collector(net, venv, make_pool(net), 0.5, 0.5, 0.125, seed=0)
    buf = _buffer(net, envs * steps)
    seconds, n = _time(coll.collect, buf, steps, budget)
    return {"decisions_per_s": envs * steps * n / seconds, "rollouts": n, "seconds": seconds}


def main(argv: list[str] | None = None) -> dict:
    """CLI entry point; returns the JSON document."""
    p = argparse.ArgumentParser(prog="benchmarks.scale", description=__doc__)
    p.add_argument(
        "--envs", type=int_arg(2, 65536), nargs="+", default=[256, 1024], help="total envs"
    )
    p.add_argument("--steps", type=int_arg(1, 4096), default=32)
    p.add_argument("--budget", type=float_arg(0, 3600), default=8.0, help="seconds per figure")
    p.add_argument("--quick", action="store_true", help="4 s budgets")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    budget = 4.0 if args.quick else args.budget
    load_before = busy()
    torch.manual_seed(0)
    net = learner_net()
    init_ray("local", 2)
    figures: dict[tuple[int, int], dict] = {}
    for envs in args.envs:
        for workers in (1, 2):
            log(f"Ray, {workers} worker(s), {envs} envs x {args.steps} steps per rollout ...")
            figures[envs, workers] = bench_ray(net, workers, envs, args.steps, budget)
    import ray

    ray.shutdown()
    local = {}
    for envs in args.envs:
        log(f"in-process Collector, one thread, {envs} envs ...")
        local[envs] = bench_in_process(net, envs, args.steps, budget)
    rows = []
    results = []
    for envs in args.envs:
        base = figures[envs, 1]["decisions_per_s"]
        cpu_base = figures[envs, 1]["cpu_bound_decisions_per_s"]
        in_proc = f"{local[envs]['decisions_per_s']:,.0f}"
        rows.append([str(envs), "in process, 1 thread", in_proc, "", "", "", ""])
        for w in (1, 2):
            fig = figures[envs, w]
            mem = ", ".join(f"{m:.0f}" for m in fig["worker_rss_mib"])
            dps, cpu = fig["decisions_per_s"], fig["cpu_bound_decisions_per_s"]
            rows.append(
                [str(envs), f"Ray, {w} worker(s)", f"{dps:,.0f}", f"{dps / base:.2f}x",
                 f"{cpu:,.0f}", f"{cpu / cpu_base:.2f}x", mem]
            )  # fmt: skip
        ratio = figures[envs, 2]["decisions_per_s"] / base
        results.append(
            {
                "envs": envs,
                "in_process": local[envs],
                "ray": [figures[envs, 1], figures[envs, 2]],
                "ratio_2_vs_1": ratio,
                "cpu_bound_ratio_2_vs_1": figures[envs, 2]["cpu_bound_decisions_per_s"] / cpu_base,
                "stored_fraction": figures[envs, 1]["stored_per_rollout"] / (envs * args.steps),
            }
        )
    heads = [("total envs", "right"), ("rollouts", "left"), ("decisions/s", "right")]
    heads += [("vs 1", "right"), ("CPU-bound dec/s", "right"), ("vs 1", "right")]
    print_table([*heads, ("worker RSS MiB", "right")], rows)
    ratios = ", ".join(f"{r['ratio_2_vs_1']:.2f} ({r['envs']} envs)" for r in results)
    print(f"machine load before {load_before}, after {busy()} (an idle machine: pressure ~0)")
    print(
        f"2 workers / 1 worker: {ratios} (goal >= 1.6); learner RSS {rss_mib():.0f} MiB; "
        f"{args.steps} steps per rollout, {budget:.0f} s per figure"
    )
    return write_results(
        "scale",
        {
            "architecture": net.config.to_dict(),
            "steps": args.steps,
            "budget_s": budget,
            "goal_ratio": 1.6,
            "learner_rss_mib": rss_mib(),
            "other_load": {"before": load_before, "after": busy()},
            "results": results,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
