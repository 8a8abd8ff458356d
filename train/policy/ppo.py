"""Masked PPO self-play on ``VectorEnv`` (one file, CleanRL style).

    python -m sichuan_env.train.policy.ppo --init runs/bc/best.pt --kl-ref runs/bc/best.pt --run runs/ppo --minutes 60

**Trajectories.** Every seat of every hand is its own sequence of decisions.
A reward that reaches a seat between two of its decisions (another seat's
win, 退税, the settlement at the end) is added to that seat's *last*
decision; the end of a hand terminates the trajectories of all four seats.
Decisions with a single legal action are played but not stored (there is
nothing to learn from them); their rewards go to the seat's previous stored
decision. A trajectory still open at the end of a rollout is bootstrapped
with the value of its seat's current view. Advantages are GAE per
seat-trajectory (``gae``), with ``gamma`` (default 1: a hand is short and
the points are what counts) and ``lam``.

**Rewards** are points times ``--reward-scale`` (default 1/8: a typical
payment is 1-8 points, a hand's swing rarely beyond +-48). A constant scale
keeps the objective (expected points) unchanged; a log squash would not.

**Opponents.** A share ``--pool-frac`` of the slots seat the learner in one
seat (slot ``i``: seat ``i % 4``) and an opponent from the pool in the other
three, drawn again for every hand: the heuristic with probability
``--pool-heuristic``, else the ``--init`` policy or one of the last
``--pool-size`` snapshots of the learner (taken every ``--snapshot-every``
iterations) or an agent added by ``--pool-agent`` (any registered agent or
checkpoint, e.g. ``search``: agents that read the engine state get it). The
other slots are pure self-play (all four seats learn).

**Regularisers.** ``--kl-ref`` with ``--kl-coef``: a KL(pi || pi_ref) penalty
toward a reference policy (the BC policy), so PPO improves on it instead of
wandering off. ``--logit-scale K`` multiplies the logits of the ``--init``,
``--kl-ref`` and pool networks by K: their greedy play is unchanged and their
sampling sharper (networks fitted to gains in points, ``distill`` and
``exit``, are near-uniform samplers at temperature 1). ``--oracle-critic``: the value comes from a critic that reads
the oracle view (hidden hands, wall) during training only; the acting policy
reads public rows. ``--value-warmup`` iterations train only the value before
the policy moves (a BC start has no value head).

Each iteration logs to ``run/metrics.jsonl`` (TensorBoard with
``--tensorboard``) and saves ``run/last.pt``; every ``--eval-every``
iterations a duplicate match against three heuristics (``--eval-walls``
walls x 4 rotations) is logged, and the best so far saved as ``run/best.pt``.
``--resume`` continues from ``run/last.pt`` and ``run/state.pt``; the
pool holds the run's ``--init`` policy again (recorded in the checkpoint)
and its snapshots start again. A resume with another setting that changes the
result (``--lr``, ``--kl-coef``, ``--seed``, ...) is refused, naming it;
``--threads``, ``--device``, ``--amp``, ``--ray`` / ``--workers`` and the
budgets may change, and the network options (``--init``, ``--hidden``,
``--layers``, ``--aux``, ``--prior``, ``--oracle-critic``, ``--prior-gain``)
come from the run. Unlike the other training scripts, a resumed PPO run is not
the uninterrupted one bit for bit: the hands in play and the pool's snapshots
are not saved, so it deals fresh hands (seeded by the iteration) and takes
snapshots anew. A new network's weights come from ``--seed`` alone, and each
iteration's minibatch shuffles from ``--seed`` and the iteration's number.
The run stops after ``--iterations``, ``--minutes`` minutes of this call or
``--run-minutes`` of the whole run.

``--ray ADDRESS|local --workers N`` collects on N Ray actors, each running
this ``Collector`` on its share of the envs (``train/ppo_ray.py``); the
update stays here.
"""

from __future__ import annotations

# numba's OpenMP threads spin after each parallel region and starve torch's (measured: 10x
# slower training); passive waiting must be set before either library loads OpenMP.
import argparse
import copy
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.base import Agent
from sichuan_env.agents.device import add_device_args, amp_dtype, resolve_device
from sichuan_env.agents.eval.distributed import RayUnavailableError
from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.train.common import (
    BEST,
    RUN_FILES,
    MetricLog,
    add_budget_args,
    budget_left,
    check_run_budget,
    command_line,
    evaluate_vs_heuristic,
    git_commit,
    load_reference,
    load_run,
    refuse_changed_settings,
    run_settings,
    save_run_or_fail,
    say_written,
    setup,
    step_rng,
)
from sichuan_env.train.policy.ppo_init import initial_net, scale_logits
from sichuan_env.train.policy.ppo_loss import ppo_update
from sichuan_env.train.policy.rollout import STAT_KEYS, Buffer, Collector, gae

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    PlainHelp,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    run,
)
from sichuan_env._progress import progress_bar
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.envs.vector import VectorEnv

__all__ = [
    "Buffer",
    "Collector",
    "build_parser",
    "gae",
    "initial_net",
    "main",
    "ppo_update",
    "scale_logits",
]

PROG = "sichuan_env.train.policy.ppo"
COUNTERS = {"iteration": int, "decisions": int, "wall_clock_s": float, "best_eval": BEST}
"""The run's counters (``state.pt``) and their types."""
START_ONLY = ("init", "hidden", "layers", "aux", "prior", "oracle_critic", "prior_gain")
"""Options that shape a new run's network only; a resumed run takes it from its checkpoint."""
PLATFORM = ("ray", "workers", "bf16")
"""Where the rollouts and the arithmetic run: a resume may change them."""


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=PlainHelp,
    )
    a = p.add_argument
    a("--run", type=Path, default=Path("runs/ppo"), help="run directory")
    a("--init", type=Path, default=None, help="start from this checkpoint (e.g. the BC policy)")
    a("--kl-ref", type=Path, default=None, help="KL penalty toward this checkpoint's policy")
    a("--kl-coef", type=float_arg(0, 100, include_lo=True), default=0.05)
    a("--oracle-critic", action="store_true", help="value from the oracle view (training only)")
    a("--preset", default="xuezhan", choices=sorted(PRESETS))
    a("--envs", type=int_arg(1, 65536), default=256)
    a("--steps", type=int_arg(1, 4096), default=32, help="steps of every slot per rollout")
    a("--iterations", type=int_arg(1, 10**9), default=10**6)
    add_budget_args(p, 60.0, unit="iteration")
    a("--epochs", type=int_arg(1, 1000), default=2, help="PPO epochs per rollout")
    a("--minibatch", type=int_arg(1, 1 << 20), default=1024)
    a("--lr", type=float_arg(0, 1), default=1e-4)
    a("--gamma", type=float_arg(0, 1, include_lo=True), default=1.0)
    a("--lam", type=float_arg(0, 1, include_lo=True), default=0.95)
    a("--clip", type=float_arg(0, 10), default=0.2)
    a("--ent-coef", type=float_arg(0, 100, include_lo=True), default=0.003)
    a("--vf-coef", type=float_arg(0, 100, include_lo=True), default=0.5)
    a("--max-grad-norm", type=float_arg(0, 10**6), default=0.5)
    a("--reward-scale", type=float_arg(0, 10**3), default=0.125)
    a("--value-warmup", type=int_arg(0, 10**9), default=0, help="iterations that train the value only")  # fmt: skip
    a("--pool-frac", type=float_arg(0, 1, include_lo=True), default=0.5, help="share of slots playing the pool")  # fmt: skip
    a("--pool-heuristic", type=float_arg(0, 1, include_lo=True), default=0.5, help="chance a pool opponent is the heuristic")  # fmt: skip
    a("--pool-size", type=int_arg(1, 1000), default=4, help="learner snapshots kept in the pool")
    a("--pool-agent", action="append", default=[], metavar="SPEC", help="add a registered agent or checkpoint to the pool (repeatable; e.g. search)")  # fmt: skip
    a("--snapshot-every", type=int_arg(0, 10**9), default=50, help="iterations between snapshots (0: never)")  # fmt: skip
    a("--eval-every", type=int_arg(0, 10**9), default=100, help="iterations between evaluations (0: never)")  # fmt: skip
    a("--eval-walls", type=int_arg(1, 100_000), default=100)
    a("--hidden", type=int_arg(8, 4096), default=PolicyConfig.hidden)
    a("--layers", type=int_arg(1, 16), default=PolicyConfig.layers)
    a("--aux", action="store_true", help="read the shanten/ukeire features (without --init)")
    a(
        "--prior",
        action="store_true",
        help="add the heuristic's choice to the logits (also with --init)",
    )
    a("--bf16", action="store_true", help="bfloat16 autocast of forward passes on any device, AMX / AVX512-BF16 CPUs included (= --amp bf16)")  # fmt: skip
    add_device_args(p)
    a("--prior-gain", type=float_arg(-100, 100, include_lo=True), default=None, help="set the prior's gain at the start (with --init)")  # fmt: skip
    a("--kl-ref-gain", type=float_arg(-100, 100, include_lo=True), default=None, help="set the --kl-ref network's prior gain")  # fmt: skip
    a("--logit-scale", type=float_arg(0, 1000), default=None, help="multiply the logits of the --init, --kl-ref and pool-init networks (greedy play unchanged, sampling sharper)")  # fmt: skip
    a("--threads", type=int_arg(1, 1024), default=2, help="torch threads")
    a("--seed", type=int_arg(0, MAX_SEED), default=0)
    a("--resume", action="store_true")
    add_overwrite(p, "run")
    a("--tensorboard", action="store_true")
    a("--quiet", action="store_true")
    a("--ray", default=None, metavar="ADDRESS", help="rollouts on Ray workers ('local' or host:port)")  # fmt: skip
    a(
        "--workers",
        type=int_arg(1, 4096),
        default=2,
        help="Ray rollout workers (with --ray; envs split)",
    )
    return p


def _check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Usage errors the option types cannot see (``p.error``, exit 2); the run folder too."""
    if args.ray is not None and not args.ray.strip():
        p.error("--ray: give 'local' or a cluster's host:port")
    problem = dir_problem(args.run)
    if problem:
        p.error(f"--run: {problem}")
    if args.resume and args.init is not None:
        p.error("give --resume or --init, not both")
    if args.prior_gain is not None and args.init is None:
        p.error("--prior-gain needs --init")
    if (
        args.logit_scale is not None
        and args.init is None
        and args.kl_ref is None
        and not args.resume
    ):
        p.error("--logit-scale scales the --init and --kl-ref networks: give one")
    if args.kl_ref_gain is not None and args.kl_ref is None:
        p.error("--kl-ref-gain needs --kl-ref")
    if not 1 <= args.workers <= args.envs:
        p.error("--workers must be in 1..--envs")
    # last: an existing run is continued (--resume), replaced (--overwrite) or refused
    claim_output_or_exit(p, "--run", args.run, RUN_FILES, resume=args.resume,
                         overwrite=args.overwrite, what="run")  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    """Train; returns the last metrics row."""
    p = build_parser()
    args = p.parse_args(argv)
    _check_args(p, args)
    setup(args.threads, args.seed)
    rules = RuleConfig.preset(args.preset)
    device = resolve_device(args.device)
    args.cast = torch.bfloat16 if args.bf16 else amp_dtype(device, args.amp)

    def make_opt(net: PolicyNet) -> torch.optim.Optimizer:
        return torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)

    settings = run_settings(args, skip=(*START_ONLY, *PLATFORM, "cast"))
    try:
        if args.resume:
            net, opt, counters, doc = load_run(
                args.run, make_opt, counters=COUNTERS, method="ppo", device=device
            )
            stored = doc.get("settings")
            if isinstance(stored, dict):  # runs saved before the settings were recorded: none
                refuse_changed_settings(PROG, p, args.run, stored, settings)
            check_run_budget(PROG, args, counters["wall_clock_s"])
            init = doc.get("init")  # the run's --init, a pool opponent again (runs before: none)
            init_path = Path(init) if isinstance(init, str) and init else None
            if counters["iteration"] >= args.iterations:
                raise ValueError(
                    f"{args.run} has run {counters['iteration']} iterations: raise --iterations"
                )
        else:
            net = initial_net(args).to(device)
            opt = make_opt(net)
            counters = {"iteration": 0, "decisions": 0, "wall_clock_s": 0.0, "best_eval": -1e9}
            init_path = args.init
        ref = load_reference(args.kl_ref).to(device) if args.kl_ref is not None else None
        if ref is not None and args.kl_ref_gain is not None:
            if ref.prior_gain is None:
                raise ValueError("--kl-ref-gain: the --kl-ref network has no prior")
            ref.prior_gain.fill_(args.kl_ref_gain)  # frozen: no gradient to record
        pool_base = load_reference(init_path).to(device) if init_path is not None else None
        if args.logit_scale is not None:
            for frozen in (ref, pool_base):
                if frozen is not None:
                    scale_logits(frozen, args.logit_scale)
    except (OSError, ValueError) as exc:
        fail(PROG, exc)
    pool: list[tuple[str, Agent]] = [("heuristic", HeuristicAgent())]
    if pool_base is not None:
        pool.append(("init", TorchAgent(pool_base, name="init")))
    try:
        for k, spec in enumerate(args.pool_agent):
            pool.append((spec, make_agent(spec, seed=args.seed + k, device=device)))
    except (OSError, ValueError, TypeError) as exc:
        fail(PROG, f"--pool-agent: {exc}")
    snapshots: list[tuple[str, Agent]] = []
    env_seed, coll_seed = args.seed + 7919 * (counters["iteration"] + 1), args.seed + counters["iteration"]  # fmt: skip
    if args.ray is None:
        venv = VectorEnv(args.envs, rules=rules, seed=env_seed, oracle=net.config.oracle_critic)
        coll = Collector(
            net, venv, pool, args.pool_frac, args.pool_heuristic, args.reward_scale, coll_seed,
            bf16=args.bf16, cast=args.cast,
        )  # fmt: skip
    else:  # the same Collector on Ray actors, each with a share of the envs
        from sichuan_env.agents.eval.distributed import RayMissingError
        from sichuan_env.train.policy.ppo_ray import RayRollouts

        try:
            coll = RayRollouts(net, rules, pool, args, env_seed=env_seed, seed=coll_seed)
        except RayMissingError as exc:
            p.error(str(exc))
        except (ValueError, ConnectionError, TimeoutError) as exc:
            fail(PROG, f"--ray: {exc}")
    oracle_rows = get_obs_version(1).shape(True)[0] if net.config.oracle_critic else 0
    buf = Buffer(
        args.envs * args.steps, net.config.public_rows, oracle_rows, AUX_SIZE if net.config.aux else 0
    )  # fmt: skip
    log = MetricLog(args.run / "metrics.jsonl", args.run / "tb" if args.tensorboard else None)
    meta = {"rules": rules.to_dict(), "method": "ppo", "command": command_line("sichuan_env.train.policy.ppo"),
            "commit": git_commit(), "init": str(init_path) if init_path is not None else "",
            "settings": settings}  # fmt: skip
    t_start, base_clock, start_iter = time.time(), counters["wall_clock_s"], counters["iteration"]
    row: dict = {}
    columns = (TextColumn("ppo it {task.completed:.0f}"), BarColumn(), TextColumn("{task.fields[info]}"), TimeElapsedColumn())  # fmt: skip
    with progress_bar(*columns, disable=args.quiet) as bar:
        task = bar.add_task("ppo", total=args.iterations, completed=start_iter, info="")
        # at least one iteration: the budgets are checked after each
        while counters["iteration"] < args.iterations and (
            not row or budget_left(args, t_start, base_clock)
        ):
            it = counters["iteration"]
            rng = step_rng(args.seed, it)  # the update's shuffles from (seed, iteration)
            t0 = time.perf_counter()
            try:
                coll.collect(args.steps, buf)
            except RayUnavailableError as exc:
                fail(PROG, exc)
            t1 = time.perf_counter()
            policy_on = it >= args.value_warmup  # the warm-up: the run's first iterations
            stats = ppo_update(net, opt, buf, args, ref, policy_on, rng)
            t2 = time.perf_counter()
            bad = sorted(k for k, v in stats.items() if not math.isfinite(v))
            if bad:
                if args.ray is not None:
                    coll.close()
                fail(PROG, f"iteration {it + 1}: {', '.join(bad)} not finite (the run diverged; "
                           "try a smaller --lr): nothing of this iteration is saved")  # fmt: skip
            counters["iteration"] = it + 1
            counters["decisions"] += args.envs * args.steps
            counters["wall_clock_s"] = base_clock + time.time() - t_start
            row = {
                "iteration": it + 1,
                **stats,
                "stored": buf.n,
                "decisions_per_s": args.envs * args.steps / (t2 - t0),
                "collect_s": t1 - t0,
                "learn_s": t2 - t1,
                "env_share": coll.stats["t_env"] / max(t2 - t0, 1e-9),
                "wall_clock_s": counters["wall_clock_s"],
            }
            coll.stats.update(dict.fromkeys(STAT_KEYS, 0.0))
            for name, pts in coll.hand_points.items():
                if pts:
                    row[f"vs_{name}_points"] = float(np.mean(pts))
                    row[f"vs_{name}_hands"] = len(pts)
                    pts.clear()
            if args.snapshot_every and (it + 1) % args.snapshot_every == 0:
                snap = copy.deepcopy(net).eval()
                for q in snap.parameters():
                    q.requires_grad_(False)
                snapshots = [*snapshots, ("snapshot", TorchAgent(snap, name="snapshot"))][-args.pool_size :]  # fmt: skip
                coll.pool = pool + snapshots
                coll.hand_points = {name: [] for name, _ in coll.pool}
            meta.update(wall_clock_s=counters["wall_clock_s"], iteration=it + 1)
            if args.eval_every and (it + 1) % args.eval_every == 0:
                ev = evaluate_vs_heuristic(net, args.eval_walls, rules)
                row.update(ev)
                meta.update(ev)
                if ev["eval_points_per_hand"] > counters["best_eval"]:
                    counters["best_eval"] = ev["eval_points_per_hand"]
                    save_run_or_fail(PROG, args.run, net, opt, counters, meta, name="best")
            save_run_or_fail(PROG, args.run, net, opt, counters, meta)
            log.write(counters["decisions"], **row)  # once the iteration is saved
            info = f"{row['decisions_per_s']:.0f} dec/s kl_ref {stats.get('kl_ref', 0):.3f}"
            if "eval_points_per_hand" in row:
                info += f" eval {row['eval_points_per_hand']:+.3f}"
            bar.update(task, completed=it + 1, info=info)
    log.close()
    if args.ray is not None:
        coll.close()
    say_written(args.run)
    return row


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
