"""Expert-iteration labels: the search's per-candidate values at the decisions a network's play visits.

Round ``k`` of expert iteration (``sichuan_env.train.policy.exit``) labels the
states that round ``k-1``'s network reaches. Hands are played by that network
(greedy) in every seat, or, in a share ``--pool`` of the hands, in one seat
against three heuristics (the opponents it is measured against). At a sampled
decision of a network seat (own turns, and with ``--claims`` the answers in
claim and robbing windows), every candidate is scored by paired determinized
rollouts (``sichuan_env.agents.search.rollout``): the own-turn candidates of the search
(or every legal claim answer), the heuristic's own action (the base the gains
are measured from) and the network's two best actions by its own logits (the
network as the *prior that picks candidates*). Rollouts play the heuristic in
every seat (``--rollout heuristic``, the default), or the network in the seats
it plays in that hand (``--rollout network``: ``sichuan_env.agents.search.net_rollout``,
the network's forward pass in numba; several times slower, see
``research/exit/README.md``): the first estimates the heuristic's values,
the same target in every round; the second the network's own. ``--oracle`` rolls out
from the true state, only the undrawn wall reshuffled: an unbiased sample of each
candidate's value given what the seat saw (the play itself drew the hidden hands).

The rows have the format of ``sichuan_env.train.policy.search_labels`` (its shard
reader and checks apply, and ``sichuan_env.train.policy.search_distill`` fits them); the
hand continues with the network's action. ``meta.json`` records the settings and
the SHA-256 of the network; ``--resume`` keeps the shards that exist (each is
written whole, then renamed) and refuses other settings or another network.

    python -m sichuan_env.train.policy.exit_labels --net agents/checkpoints/distill.pt --out runs/exit-labels --hands 2048
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numba
import numpy as np
import torch
from sichuan_env.agents.checkpoint import file_sha256
from sichuan_env.agents.eval.metrics import paired_stats
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.net_cache import new_cache
from sichuan_env.agents.nn.numba_policy import export, no_weights
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.hybrid import trigger_rows
from sichuan_env.agents.search.net_rollout import evaluate_candidates_net
from sichuan_env.agents.search.rollout import (
    MAX_CANDIDATES,
    ORACLE,
    add_candidate,
    decision_candidates,
    evaluate_candidates,
)
from sichuan_env.agents.search.value_leaf import ValueLeafSearch
from sichuan_env.train.policy.search_labels import (
    FIELDS,
    missing_shards,
    open_label_dir,
    rows_on_disk,
    seed_of,
    write_shard,
)

from sichuan_env import RuleConfig
from sichuan_env._cli import add_overwrite, dir_problem, fail, float_arg, int_arg, run
from sichuan_env._jit import njit
from sichuan_env.engine.state import PH_CLAIM, PH_ROB, PH_TURN, STATE_DTYPE
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables

PROG = "sichuan_env.train.policy.exit_labels"
EXTRA = 2
"""The network's best actions (by its own logits) added to each row's candidates."""


@njit(parallel=True)
def label_rows(states, scratch, extra, seeds, knobs, env, net, cands_o, gain_o, se_o, base_o, ok_o):
    """Score the candidates of the decision in each of ``states`` (the seat to act); see the module docstring.

    ``extra[i]``: actions to add to row ``i``'s candidates when legal (-1: none).
    ``ok_o[i]`` is False for a row that is not a searched decision (setup).
    Gains are paired over the samples, relative to the heuristic's action (``base_o``).
    ``net`` is ``(net_seats bool[N, 4], weights)``: with ``knobs[4]`` (network
    rollouts) the seats ``net_seats[i]`` of row ``i``'s rollouts play the network
    (``numba_policy.export``'s weights), the others the heuristic.
    """
    n_samples, draws, gap, claims, net_rollouts = knobs
    net_seats, weights = net
    styles, rules, flags, waits, dist = env
    n = states.shape[0]
    raw_states = states.view(np.uint8).reshape(n, -1)
    for i in numba.prange(n):
        work = scratch[i]
        raw = work.view(np.uint8).reshape(2, -1)
        raw[0, :] = raw_states[i]
        st = work[0]
        me = st.to_act
        obs = np.zeros((83, 27), dtype=np.uint8)
        mask = np.zeros(88, dtype=np.int8)
        cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
        vals = np.zeros((n_samples, MAX_CANDIDATES), dtype=np.float64)
        no_bel = np.zeros((0, BELIEF_COLUMNS), dtype=np.float64)
        d = style_action(st, styles[me], rules, flags, obs, mask, dist)
        nc = decision_candidates(st, rules, flags, mask, dist, gap, claims, False, cands)
        ok_o[i] = nc > 0 and d >= 0
        if not ok_o[i]:
            continue
        for k in range(-1, extra.shape[1]):
            nc = add_candidate(cands, nc, d if k < 0 else extra[i, k], mask)
        base = 0
        for c in range(nc):
            if cands[c] == d:
                base = c
        if nc >= 2 and net_rollouts:
            evaluate_candidates_net(
                work, raw, raw_states[i], me, cands, nc, n_samples, draws, no_bel, seeds[i],
                styles, rules, flags, waits, obs, mask, dist, vals, net_seats[i], weights,
                new_cache(weights),
            )  # fmt: skip
        elif nc >= 2:
            evaluate_candidates(
                work, raw, raw_states[i], me, cands, nc, n_samples, draws, no_bel, seeds[i],
                styles, rules, flags, waits, obs, mask, dist, vals,
            )  # fmt: skip
        cands_o[i, :] = -1
        gain_o[i, :] = 0.0
        se_o[i, :] = 0.0
        for c in range(nc):
            cands_o[i, c] = cands[c]
            if nc >= 2:
                m, s = paired_stats(vals, n_samples, c, base)
                gain_o[i, c] = m
                se_o[i, c] = s
        base_o[i] = base


_M64 = (1 << 64) - 1


def _mix(seed: int, hand: int, k: int) -> int:
    h = (seed_of(seed, hand) ^ (0x9E3779B97F4A7C15 * (k + 1))) & _M64
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & _M64
    return h ^ (h >> 31)


def _draw(seed: int, hand: int, k: int) -> float:
    """A uniform draw in [0, 1) from (label seed, hand, decision ``k``): independent of the batching."""
    return _mix(seed, hand, k) / 2.0**64


def _seed(seed: int, hand: int, k: int) -> np.uint64:
    """The rollout seed of decision ``k`` of ``hand``."""
    return np.uint64(_mix(seed, hand, k) ^ 0xD1B54A32D192ED03)


def leaf_labels(leaf: ValueLeafSearch, states: np.ndarray, mask: np.ndarray, extra: np.ndarray):
    """``(cands, gain, se, base, ok)`` of own-turn rows, as ``label_rows``'s, scored by ``leaf``.

    The default (base) is the style's action (the heuristic's, as in rollout labels), and
    ``extra``'s legal actions join the candidates.
    """
    v = leaf.action_values(states, mask, extra=extra)
    n = len(states)
    cands = np.full((n, MAX_CANDIDATES), -1, np.int16)
    slot = np.arange(MAX_CANDIDATES)[None, :] < v.n[:, None]
    cands[slot] = v.cands[slot]
    gain = np.where(slot, v.gain, 0.0).astype(np.float32)
    se = np.where(slot, v.se, 0.0).astype(np.float32)
    ok = (v.n >= 1) & (v.base >= 0)
    return cands, gain, se, v.base.astype(np.int8), ok


@torch.no_grad()
def network_choices(
    net: PolicyNet, obs: np.ndarray, mask: np.ndarray, heuristic: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(greedy actions int64[N], the EXTRA best actions by the network's own logits int64[N, EXTRA])``.

    One forward pass: the greedy action is the network's acting rule (its
    logits plus ``prior_gain`` on the heuristic's action, for a prior network).
    ``heuristic``: the heuristic's actions of the rows, when the caller has them.
    """
    o = torch.from_numpy(np.ascontiguousarray(obs[:, : net.config.public_rows]))
    legal = torch.from_numpy(mask != 0)
    raw = net.logits(o, None, prior=torch.full((len(o),), -1, dtype=torch.long)).float()
    raw = raw.masked_fill(~legal, -float("inf"))
    top = raw.topk(EXTRA, dim=1)
    extra = torch.where(torch.isfinite(top.values), top.indices, -1).numpy().astype(np.int64)
    lg = raw.clone()
    if net.prior_gain is not None:
        h = heuristic_choices(o.numpy(), mask) if heuristic is None else heuristic
        rows = np.flatnonzero(h >= 0)
        lg[rows, h[rows]] += float(net.prior_gain)
    return lg.argmax(1).numpy().astype(np.int64), extra


def label_shard(net: PolicyNet, seed: int, first: int, n_hands: int, *, samples: int, draws: int,
                gap: int, p_label: float, claims: bool, pool: float,
                rollout: str = "heuristic", rollout_net: PolicyNet | None = None,
                after_win: bool = False, leaf: ValueLeafSearch | None = None,
                ) -> tuple[dict[str, np.ndarray], int]:  # fmt: skip
    """Rows of hands ``first .. first + n_hands - 1`` (deal seeds ``seed_of(seed, hand)``) and the decisions played.

    With ``rollout="network"`` the rollouts' network seats play ``rollout_net`` (default:
    ``net`` itself), e.g. a small network distilled from ``net`` that costs less per decision.
    ``after_win``: label only decisions taken once some seat has won (the 血战 phase where
    the after-win hybrid searches, ``sichuan_env.agents.search.hybrid``).
    ``leaf``: score the candidates by this value-leaf search instead of rollouts (own
    turns only: ``claims`` must be False; ``samples``, ``draws``, ``gap`` are the search's).
    """
    if leaf is not None and claims:
        raise ValueError("value-leaf labels score own turns only: claims must be False")
    t = get_tables()
    env = (np.zeros(4, dtype=np.int64), RuleConfig().as_array(), t["FLAGS"], t["WAITS"], t["DIST"])
    hands = np.arange(first, first + n_hands, dtype=np.int64)
    venv = VectorEnv(n_hands)
    obs, mask, seats = venv.reset(seeds=np.array([seed_of(seed, h) for h in hands], np.uint64))
    in_pool = np.array([_draw(seed, int(h), 0) < pool for h in hands], bool)
    net_seat = hands % 4  # the network's seat in a pool hand
    done = np.zeros(n_hands, bool)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
    knobs = (samples, draws, gap, claims, rollout == "network")
    player = net if rollout_net is None else rollout_net
    weights = export(player) if rollout == "network" else no_weights()
    decisions = 0
    while not done.all():
        act = heuristic_choices(obs, mask)
        by_net = ~done & ~(in_pool & (seats != net_seat))
        rows = np.flatnonzero(by_net)
        if len(rows):
            a, extra = network_choices(net, obs[rows], mask[rows], act[rows])
            act[rows] = a
            states = venv.states_of(rows)
            ph = states["phase"]
            search = (ph == PH_TURN) | (claims & ((ph == PH_CLAIM) | (ph == PH_ROB)))
            if after_win:  # the after-win hybrid's own trigger: the same decisions it searches
                search &= trigger_rows(states, after_win=True, claims=claims)
            logs = states["n_log"].astype(np.int64) + 1
            pick = search & np.array(
                [
                    _draw(seed, int(hands[i]), int(g)) < p_label
                    for i, g in zip(rows, logs, strict=True)
                ]
            )
            if pick.any():
                sel = rows[pick]
                n = len(sel)
                seeds = np.array([_seed(seed, int(hands[i]), int(g)) for i, g in zip(sel, logs[pick], strict=True)],
                                 np.uint64)  # fmt: skip
                out = (np.full((n, MAX_CANDIDATES), -1, np.int16), np.zeros((n, MAX_CANDIDATES), np.float32),
                       np.zeros((n, MAX_CANDIDATES), np.float32), np.zeros(n, np.int8), np.zeros(n, bool))  # fmt: skip
                # the rollouts' network seats: all four in self-play, the network's one in a pool hand
                seats_net = np.ones((n, 4), bool)
                pool_rows = np.flatnonzero(in_pool[sel])
                seats_net[pool_rows] = np.arange(4)[None, :] == net_seat[sel][pool_rows, None]
                if leaf is not None:
                    out = leaf_labels(leaf, states[pick], mask[sel], extra[pick])
                else:
                    label_rows(np.ascontiguousarray(states[pick]), np.zeros((n, 2), STATE_DTYPE),
                               extra[pick], seeds, knobs, env, (seats_net, weights), *out)  # fmt: skip
                ok = out[4]
                parts["obs"].append(obs[sel][ok, :83].copy())
                parts["mask"].append(mask[sel][ok].astype(np.int8))
                for k, v in zip(("cands", "gain", "se", "base"), out[:4], strict=True):
                    parts[k].append(v[ok])
                parts["hand"].append(hands[sel][ok])
                parts["seat"].append(seats[sel][ok].astype(np.int8))
        decisions += int((~done).sum())
        obs, mask, seats, _, hand_over, _ = venv.step(act)
        done |= hand_over
    empty = {"obs": (0, 83, 27), "mask": (0, 88), "cands": (0, MAX_CANDIDATES),
             "gain": (0, MAX_CANDIDATES), "se": (0, MAX_CANDIDATES)}  # fmt: skip
    dtypes = {"obs": np.uint8, "mask": np.int8, "cands": np.int16, "gain": np.float32,
              "se": np.float32, "base": np.int8, "hand": np.int64, "seat": np.int8}  # fmt: skip
    rows_out = {k: (np.concatenate(v) if v else np.zeros(empty.get(k, (0,)), dtypes[k]))
                for k, v in parts.items()}  # fmt: skip
    return rows_out, decisions


def leaf_model_path(spec: str) -> Path:
    """The file of a value model spec: a shipped name (``table_value``) or a ``.pt`` path."""
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    shipped = Path(SHIPPED_DIR) / f"{spec}.pt"
    return (
        shipped
        if "/" not in spec and not spec.endswith(".pt") and shipped.is_file()
        else Path(spec)
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m sichuan_env.train.policy.exit_labels``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], prog=PROG)
    p.add_argument(
        "--net", type=Path, required=True, help="the policy checkpoint whose play is labelled"
    )
    p.add_argument("--out", type=Path, required=True, help="directory of the shards")
    p.add_argument("--hands", type=int_arg(1, 10**8), default=4096, help="hands to play (4096)")
    p.add_argument("--shard-hands", type=int_arg(1, 4096), default=256, help="hands per shard, played side by side (256)")  # fmt: skip
    p.add_argument("--samples", type=int_arg(2, 4096), default=16, help="determinizations per decision (16)")  # fmt: skip
    p.add_argument("--draws", type=int_arg(1, 256), default=8, help="draws per determinization (8)")
    p.add_argument("--gap", type=int_arg(-1, 14), default=1, help="discards within GAP shanten (1)")
    p.add_argument("--p-label", type=float_arg(0, 1), default=0.35, help="share of searched decisions labelled")  # fmt: skip
    p.add_argument("--no-claims", dest="claims", action="store_false", help="label own turns only")
    p.add_argument("--rollout", choices=("heuristic", "network"), default="heuristic",
                   help="who plays the rollouts: the heuristic (default), or the network in its seats "
                        "(the heuristic in the others; several times slower)")  # fmt: skip
    p.add_argument("--rollout-net", type=Path, default=None,
                   help="with --rollout network: the network that plays the rollouts' network seats "
                        "(default: --net); a small one distilled from --net is cheaper per decision")  # fmt: skip
    p.add_argument("--pool", type=float_arg(0, 1, include_lo=True), default=0.5,
                   help="share of hands with one network seat against three heuristics (0.5)")  # fmt: skip
    p.add_argument("--oracle", action="store_true", help="rollouts from the true state, the undrawn wall reshuffled: unbiased values where the play went (--search rollout)")  # fmt: skip
    p.add_argument("--after-win", action="store_true",
                   help="label only decisions taken once some seat has won (the after-win hybrid's)")  # fmt: skip
    p.add_argument("--search", choices=("rollout", "value-leaf"), default="rollout",
                   help="what scores the candidates: rollouts to the end of the hand (default), or "
                        "the value-leaf search (own turns only: with --no-claims; --samples "
                        "determinizations, the next draw, then --value-model)")  # fmt: skip
    p.add_argument("--value-model", default="table_value",
                   help="with --search value-leaf: the whole-table value model, a shipped name or "
                        "a .pt path (table_value)")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0, 2**31 - 1), default=0)
    p.add_argument("--threads", type=int_arg(1, 256), default=2, help="numba and torch threads")
    p.add_argument("--resume", action="store_true", help="keep existing shards, make the rest")
    add_overwrite(p, "label set")
    return p


def main(argv: list[str] | None = None) -> dict:
    """Write the label shards; returns the settings and row counts."""
    p = build_parser()
    args = p.parse_args(argv)
    problem = dir_problem(args.out)
    if problem:
        p.error(f"--out: {problem}")
    try:
        net, _ = load_network(args.net)
        net_sha = file_sha256(args.net)
    except (OSError, ValueError) as exc:
        fail(PROG, f"--net: {exc}")
    if net.config.obs_version != 1:
        fail(PROG, "--net must read observation v1 (the labels store v1 observations)")
    net.eval()
    leaf = None
    if args.search == "value-leaf":
        if args.claims or args.oracle:
            p.error(
                "--search value-leaf scores own turns only, determinized: pass --no-claims, no --oracle"
            )
        if args.rollout != "heuristic":
            p.error("--rollout is the rollout search's: --search value-leaf plays no rollouts")
        try:
            leaf = ValueLeafSearch(args.seed, value_model=args.value_model, samples=args.samples,
                                   draws=args.draws, gap=args.gap)  # fmt: skip
            value_sha = file_sha256(leaf_model_path(args.value_model))
        except (OSError, ValueError) as exc:
            fail(PROG, f"--value-model: {exc}")
    rollout_net, rollout_sha = None, None
    if args.rollout_net is not None:
        if args.rollout != "network":
            p.error("--rollout-net plays network rollouts: pass --rollout network too")
        try:
            rollout_net, _ = load_network(args.rollout_net)
            rollout_sha = file_sha256(args.rollout_net)
            export(rollout_net)
        except (OSError, ValueError) as exc:
            fail(PROG, f"--rollout-net: {exc}")
        rollout_net.eval()
    from rich.progress import track

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(args.threads)
    settings = {k: getattr(args, k) for k in ("samples", "draws", "gap", "p_label", "seed",
                                                "claims", "pool", "shard_hands")}  # fmt: skip
    # older label sets have no rollout key: theirs are heuristic rollouts
    if args.rollout != "heuristic":
        settings["rollout"] = args.rollout
    if rollout_sha is not None:
        settings["rollout_net_sha256"] = rollout_sha
    if args.after_win:  # older label sets have no such key: theirs label every phase
        settings["after_win"] = True
    if args.oracle:  # nor this one: theirs are determinized
        settings["oracle"] = True
    if leaf is not None:  # older label sets have no such key: theirs are rollout labels
        settings["search"] = args.search
        settings["value_sha256"] = value_sha
    settings["net_sha256"] = net_sha
    open_label_dir(p, args.out, settings, args.hands, args.shard_hands, args.resume,
                   {"net": str(args.net), "format": "search_labels"},
                   "other settings or another network", args.overwrite)  # fmt: skip
    n_shards = -(-args.hands // args.shard_hands)
    rows = decisions = 0
    t0 = time.time()
    todo = missing_shards(args.out, args.hands, args.shard_hands)
    for s, first, n in track(todo, description="exit label shards"):
        part, dec = label_shard(net, args.seed, first, n, samples=args.samples,
                                draws=ORACLE if args.oracle else args.draws,
                                gap=args.gap, p_label=args.p_label, claims=args.claims, pool=args.pool,
                                rollout=args.rollout, rollout_net=rollout_net,
                                after_win=args.after_win, leaf=leaf)  # fmt: skip
        write_shard(args.out, s, part)
        rows += len(part["obs"])
        decisions += dec
    # "rows": every row on disk (a resumed run's earlier shards too), "new_rows": this call's
    summary = {"shards": n_shards, "new_rows": rows, **rows_on_disk(PROG, args.out),
               "decisions_played": decisions, "seconds": round(time.time() - t0, 1)}  # fmt: skip
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
