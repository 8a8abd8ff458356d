"""Training throughput: PPO end to end, policy inference, and the env's share of the time.

    python -m benchmarks.train            # about a minute
    python -m benchmarks.train --quick
    python -m benchmarks.train --device cuda --envs 4096 --pool-frac 0.5   # on a GPU

With the shipped architecture (the shipped ``ppo`` checkpoint's, else a
fresh net of the same shape; or ``--checkpoint``'s), measures:

- **PPO end to end**, in fp32 and with ``--bf16`` (bfloat16 autocast), in
  interleaved rounds of the same run: decisions per second of ``sichuan_env.train.policy.ppo`` iterations
  (collect ``--envs`` x ``--steps`` decisions with the learner in every seat,
  then the PPO epochs), and the share of that time spent inside
  ``VectorEnv.step`` (the env), the policy's forward passes while
  collecting, and learning;
- **inference**: greedy ``TorchAgent.act_batch`` decisions per second at
  batch 1 and batch 1024 (real observations and masks).

Prints a table and writes JSON (machine, commit, figures) like the other benchmarks.
"""

from __future__ import annotations

# see train/ppo.py: numba's spinning OpenMP threads starve torch's otherwise
import argparse
import copy
import time
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents import make_agent
from sichuan_env.agents.device import resolve_device
from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet, count_parameters
from sichuan_env.agents.nn.torch_agent import SHIPPED_DIR, TorchAgent, load_network
from sichuan_env.train.policy import ppo
from sichuan_env.train.policy.rollout import STAT_KEYS

from benchmarks.common import check_json_arg, log, median_ci, print_table, write_results
from sichuan_env._cli import float_arg, int_arg
from sichuan_env.envs.vector import VectorEnv

SHIPPED_ARCH = PolicyConfig(aux=True)
"""The shipped agents' architecture (used when no checkpoint is shipped or given)."""


SPLIT = (
    ("env", "t_env"), ("encode", "t_encode"), ("forward", "t_forward"), ("copies", "t_copy"),
    ("bookkeeping", "t_book"), ("opponents", "t_opp"),
)  # fmt: skip
"""The parts of an iteration the collector times, as (table name, ``Collector.stats`` key)."""


def bench_ppo(
    net: PolicyNet,
    envs: int,
    steps: int,
    budget: float,
    threads: int,
    bf16: bool = False,
    pool_frac: float = 0.0,
    profile: bool = False,
    ppo_flags: tuple[str, ...] = (),
) -> dict:
    """Decisions/s of PPO iterations and where the time goes.

    ``bf16``: bfloat16 autocast of the forward passes (``sichuan_env.train.policy.ppo --bf16``).
    ``pool_frac``: share of the envs where the learner plays one seat against three
    ``heuristic``s (the rest is self-play in every seat). ``profile``: synchronize the
    device around each part, for exact splits (slower on a GPU). Returns the overall rate,
    each part's share and microseconds per decision, and ``per_iteration`` (each rate).
    """
    flags = ["--envs", str(envs), "--steps", str(steps), *ppo_flags] + (["--bf16"] if bf16 else [])
    args = ppo.build_parser().parse_args(flags)
    venv = VectorEnv(envs, seed=0, oracle=net.config.oracle_critic)
    pool = [("heuristic", make_agent("heuristic", seed=0))] if pool_frac > 0 else []
    coll = ppo.Collector(net, venv, pool, pool_frac, 1.0, args.reward_scale, seed=0, bf16=args.bf16)
    coll.profile = profile
    rows = venv.obs_shape[0] if net.config.oracle_critic else 0
    aux = AUX_SIZE if net.config.aux else 0  # stored, as ppo.py does (else recomputed per batch)
    buf = ppo.Buffer(envs * steps, net.config.public_rows, rows, aux)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    rng = np.random.default_rng(0)
    coll.collect(steps, buf)  # warm-up (compilation, allocation)
    ppo.ppo_update(net, opt, buf, args, None, True, rng)
    coll.stats.update(dict.fromkeys(STAT_KEYS, 0.0))
    t_collect = t_learn = 0.0
    rates: list[float] = []
    t_start = time.perf_counter()
    while time.perf_counter() - t_start < budget or not rates:
        t0 = time.perf_counter()
        coll.collect(steps, buf)
        t1 = time.perf_counter()
        ppo.ppo_update(net, opt, buf, args, None, True, rng)
        t2 = time.perf_counter()
        t_collect += t1 - t0
        t_learn += t2 - t1
        rates.append(envs * steps / (t2 - t0))
    total = t_collect + t_learn
    decisions = len(rates) * envs * steps
    split = {name: coll.stats[key] for name, key in SPLIT}
    split["learn"] = t_learn
    split["other"] = t_collect - sum(coll.stats[key] for _, key in SPLIT)
    own = split["encode"] + split["copies"] + split["bookkeeping"] + split["other"]
    return {
        "decisions_per_s": decisions / total,
        "device": str(next(net.parameters()).device),
        "pool_frac": pool_frac,
        "split_s": split,
        "split_us_per_decision": {k: 1e6 * v / decisions for k, v in split.items()},
        "collector_own_us_per_decision": 1e6 * own / decisions,
        "collect_s_per_iteration": t_collect / len(rates),
        "learn_s_per_iteration": t_learn / len(rates),
        "stored_per_iteration": buf.n,
        "iterations": len(rates),
        "env_share": coll.stats["t_env"] / total,
        "policy_share": coll.stats["t_policy"] / total,
        "learn_share": t_learn / total,
        "threads": threads,
        "bf16": bf16,
        "per_iteration": rates,
    }


def compare_precisions(
    net: PolicyNet, envs: int, steps: int, budget: float, threads: int, rounds: int = 3,
    pool_frac: float = 0.0, profile: bool = False, ppo_flags: tuple[str, ...] = (),
) -> dict[str, dict]:  # fmt: skip
    """fp32 and bf16 PPO, interleaved in ``rounds`` rounds (same machine state), from the same net."""
    runs: dict[str, list[dict]] = {"fp32": [], "bf16": []}
    for _ in range(rounds):
        for name, parts in runs.items():
            trial = copy.deepcopy(net).train()
            parts.append(bench_ppo(trial, envs, steps, budget / rounds, threads, name == "bf16",
                                   pool_frac, profile, ppo_flags))  # fmt: skip
    out = {}
    for name, parts in runs.items():
        rates = [r for part in parts for r in part["per_iteration"]]
        med, lo, hi = median_ci(rates)
        shares = {k: float(np.mean([p[k] for p in parts])) for k in ("env_share", "policy_share", "learn_share", "collector_own_us_per_decision")}  # fmt: skip
        shares["split_us_per_decision"] = {
            k: float(np.mean([p["split_us_per_decision"][k] for p in parts]))
            for k in parts[0]["split_us_per_decision"]
        }
        out[name] = {
            "decisions_per_s": float(np.mean([p["decisions_per_s"] for p in parts])),
            "median_per_iteration": med,
            "ci95": [lo, hi],
            "iterations": len(rates),
            "stored_per_iteration": parts[-1]["stored_per_iteration"],
            **shares,
            "threads": threads,
        }
    return out


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
    p.add_argument(
        "--device", default="cpu", help="where the learner runs: cpu, cuda, cuda:N, auto"
    )
    p.add_argument(
        "--pool-frac",
        type=float_arg(0, 1),
        default=0.0,
        help="share of envs where the learner plays one seat against 3 heuristics",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="synchronize the device around each part (exact splits, slower)",
    )
    p.add_argument("--minibatch", type=int_arg(1, 1 << 20), default=None,
                   help="PPO minibatch rows (default: ppo's)")  # fmt: skip
    p.add_argument("--ppo-epochs", type=int_arg(1, 1000), default=None,
                   help="PPO epochs per rollout (default: ppo's)")  # fmt: skip
    p.add_argument(
        "--no-inference", dest="inference", action="store_false", help="skip the act_batch figures"
    )
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
    try:
        device = resolve_device(args.device)
    except ValueError as exc:
        p.error(f"--device: {exc}")
    net = net.to(device)
    budget = 2.0 if args.quick else args.budget
    log(f"PPO end to end ({args.envs} envs x {args.steps} steps per iteration, {device}), "
        "fp32 and bf16 ...")  # fmt: skip
    ppo_flags: tuple[str, ...] = ()
    if args.minibatch is not None:
        ppo_flags += ("--minibatch", str(args.minibatch))
    if args.ppo_epochs is not None:
        ppo_flags += ("--epochs", str(args.ppo_epochs))
    ppo_figs = compare_precisions(net, args.envs, args.steps, 2 * budget, args.threads,
                                  pool_frac=args.pool_frac, profile=args.profile,
                                  ppo_flags=ppo_flags)  # fmt: skip
    inf1 = inf1024 = float("nan")
    if args.inference:
        log("inference at batch 1 and 1024 ...")
        inf1 = bench_inference(net.eval(), 1, budget)
        inf1024 = bench_inference(net, 1024, budget)
    arch = net.config.to_dict()
    params = count_parameters(net)
    rows = []
    for name, fig in ppo_figs.items():
        lo, hi = fig["ci95"]
        rows.append([
            f"PPO end to end ({name}{', sichuan_env.train.policy.ppo --bf16' if name == 'bf16' else ''})",
            f"{fig['decisions_per_s']:,.0f}",
            (
                f"median/iteration {fig['median_per_iteration']:,.0f} (95% CI {lo:,.0f}-{hi:,.0f}); "
                f"env {fig['env_share']:.1%}, policy forward {fig['policy_share']:.1%}, "
                f"learn {fig['learn_share']:.1%}"
            ),
        ])  # fmt: skip
    ratio = ppo_figs["bf16"]["decisions_per_s"] / ppo_figs["fp32"]["decisions_per_s"]
    rows += [["bf16 / fp32", f"{ratio:.2f}x", "same run, interleaved rounds"]]
    if args.inference:
        rows += [
            ["inference, batch 1", f"{inf1:,.0f}", "greedy TorchAgent.act_batch"],
            ["inference, batch 1024", f"{inf1024:,.0f}", "greedy TorchAgent.act_batch"],
        ]
    print_table([("measurement", "left"), ("decisions/s", "right"), ("notes", "left")], rows)
    split_rows = [
        [part, *(f"{ppo_figs[n]['split_us_per_decision'][part]:.3f}" for n in ("fp32", "bf16"))]
        for part in ppo_figs["fp32"]["split_us_per_decision"]
    ]
    split_rows.append(["collector's own work", *(
        f"{ppo_figs[n]['collector_own_us_per_decision']:.3f}" for n in ("fp32", "bf16"))])  # fmt: skip
    print("time per decision by part (microseconds; own work = encode + copies + bookkeeping "
          "+ other)")  # fmt: skip
    print_table([("part", "left"), ("fp32 us", "right"), ("bf16 us", "right")], split_rows)
    print(f"architecture {arch}, {params:,} parameters (acting), torch threads {args.threads}")
    return write_results(
        "train",
        {
            "architecture": arch,
            "parameters": params,
            "envs": args.envs,
            "steps": args.steps,
            "device": str(device),
            "pool_frac": args.pool_frac,
            "profile": args.profile,
            "ppo_flags": list(ppo_flags),
            "budget_s": budget,
            "ppo": ppo_figs["fp32"],
            "ppo_bf16": ppo_figs["bf16"],
            "bf16_over_fp32": ratio,
            "inference_batch1_per_s": inf1,
            "inference_batch1024_per_s": inf1024,
        },
        args.json,
    )


if __name__ == "__main__":
    main()
