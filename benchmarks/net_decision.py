"""One rollout decision: the heuristic against networks played in numba, with and without the cache.

    python -m benchmarks.net_decision
    python -m benchmarks.net_decision --nets distill rollout-aux rollout-small --hands 64 --repeats 7

The states of ``--hands`` hands played by the heuristic are visited in play
order, hand by hand (as a rollout visits them); every case answers each
state's seat to act, one decision at a time on one core:

- ``heuristic``: the rule-based style the rollouts play (``fused.style_action``);
- ``NET full``: ``mlp_kernels.net_action``, the first layer summed over every set entry;
- ``NET cached``: ``net_cache.cached_action``, the first layer updated from the
  seat's last observation and the prior and aux features in one pass (what the
  search and the label rollouts use);
- its parts: the mask, the observation, the prior and the aux features; then
  also the first layer (the rest of ``cached`` is the hidden and policy layers).

Reported: microseconds per decision (median over ``--repeats`` passes, 95%
bootstrap interval), and the ratio of the heuristic's time to the case's (the
label-throughput ratio a rollout made only of such decisions would have).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.mlp_kernels import _prior_and_aux
from sichuan_env.agents.nn.net_cache import _first_sum, cached_action, forget, new_cache
from sichuan_env.agents.nn.numba_policy import export, net_action, scratch
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.agents.rule_based.fused import style_action

from benchmarks.common import check_json_arg, log, median_ci, print_table, write_results
from sichuan_env._cli import int_arg
from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_OVER
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables


@njit
def _pass(states, kind: int, weights, rules, flags, dist, cache, bufs) -> int:
    """Answer every live state once: 0 heuristic, 1 full network, 2 cached network, 3-4 its parts.

    3: the mask, the observation, the prior and the aux features; 4: those and
    the cached first layer (``cached_action`` less the hidden and policy layers).
    """
    obs, mask, aux, h0, h1, logits = bufs
    c_obs, seen, acc, valid, c_mask, c_aux = cache[:6]
    out = 0
    forget(cache)
    for i in range(states.shape[0]):
        st = states[i]
        if st.phase == PH_OVER:
            continue
        if kind == 0:
            out += style_action(st, 0, rules, flags, obs, mask, dist)
        elif kind == 1:
            out += net_action(st, weights, rules, flags, obs, mask, dist, aux, h0, h1, logits)
        elif kind == 2:
            out += cached_action(st, weights, rules, flags, dist, cache)
        else:
            me = st.to_act
            legal_mask(st, rules, flags, c_mask)
            encode_v1(st, me, False, rules, c_obs)
            out += _prior_and_aux(weights[7], c_obs, c_mask, dist, c_aux)
            if kind == 4:
                out += _first_sum(c_obs, seen[me], acc[me], weights[0], valid[me])
                valid[me] = True
    return out


def played_states(hands: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every state of ``hands`` hands played by the heuristic, hand by hand in play order."""
    venv = VectorEnv(hands, seed=seed)
    obs, mask, _ = venv.reset()
    steps, done = [], np.zeros(hands, bool)
    while not done.all():
        steps.append(venv.states.copy())
        obs, mask, _, _, over, _ = venv.step(heuristic_choices(obs[:, :83], mask))
        done |= over
    states = np.stack(steps, 1)
    keep = np.cumsum(states["phase"] == PH_OVER, axis=1) <= 1  # each hand up to its end
    return np.ascontiguousarray(states[keep]), venv.rules.as_array()


def main(argv: list[str] | None = None) -> dict:
    """Time the cases; print the table; write JSON."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.net_decision", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--nets", nargs="+", default=["distill", "rollout-aux", "rollout-small"],
                   help="shipped network names or .pt paths (MLPs over observation v1)")  # fmt: skip
    p.add_argument("--hands", type=int_arg(1, 4096), default=64)
    p.add_argument("--repeats", type=int_arg(3, 1000), default=7)
    p.add_argument("--seed", type=int_arg(0), default=0)
    p.add_argument("--json", type=Path, default=None, help="default: benchmarks/results/net_decision-*.json")  # fmt: skip
    args = p.parse_args(argv)
    check_json_arg(p, args.json)
    try:
        nets = [(name, export(TorchAgent.load(name).net)) for name in args.nets]
    except (OSError, ValueError) as exc:
        p.error(f"--nets: {exc}")
    t = get_tables()
    states, rules = played_states(args.hands, args.seed)
    live = int((states["phase"] != PH_OVER).sum())
    log(f"{live} decisions of {args.hands} hands, {args.repeats} passes a case")
    cases = [("heuristic", 0, nets[0][1])]
    for name, w in nets:
        cases += [(f"{name} full", 1, w), (f"{name} cached", 2, w),
                  (f"{name} cached: mask, obs, prior, aux", 3, w),
                  (f"{name} cached: ... and first layer", 4, w)]  # fmt: skip
    rows = []
    for label, kind, w in cases:
        cache, bufs = new_cache(w), scratch(w)
        _pass(states[:50], kind, w, rules, t["FLAGS"], t["DIST"], cache, bufs)  # compile, warm
        per = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            _pass(states, kind, w, rules, t["FLAGS"], t["DIST"], cache, bufs)
            per.append(1e6 * (time.perf_counter() - t0) / live)
        med, lo, hi = median_ci(per)
        rows.append({"case": label, "us_per_decision": med, "ci95": [lo, hi]})
    base = rows[0]["us_per_decision"]
    for r in rows:
        r["heuristic_over_case"] = base / r["us_per_decision"]
    print_table(
        [("case", "left"), ("µs / decision", "right"), ("95% CI", "right"), ("heuristic / case", "right")],
        [[r["case"], f"{r['us_per_decision']:.2f}", f"[{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]",
          f"{r['heuristic_over_case']:.2f}"] for r in rows],
    )  # fmt: skip
    body = {"hands": args.hands, "decisions": live, "repeats": args.repeats, "seed": args.seed,
            "cases": rows}  # fmt: skip
    return write_results("net_decision", body, args.json)


if __name__ == "__main__":
    main()
