"""Does the belief model help play? The heuristic with and without a belief-based deal-in guard.

    python -m research.belief_play.run --walls 1500 --thresholds 0.05 0.1 0.2 --slack 0
        --keep 0 0.8 --json research/belief_play/results/belief_play.json

``GuardedAgent`` is ``HeuristicAgent`` plus the shipped ``BeliefModel``: on
its own turn it takes the heuristic's discard unless the model's deal-in
probability of that tile exceeds ``threshold``; then it discards instead the
legal tile with the lowest deal-in probability among those that leave the
hand at most ``slack`` shanten worse than the heuristic's choice and keep at
least the share ``keep`` of its acceptance (unseen copies of the tiles that
would then lower the shanten); the heuristic's own choice stays among them.
Every other decision (exchange, void, claims, wins, kongs) is the
heuristic's. The same policy with and without the beliefs: the only
difference is the guard. ``--far T,S,K`` gives hands at least
``--far-shanten`` from ready their own setting, and ``--base distill`` (any
agent reading observation v1) guards another policy's discards instead of
the heuristic's.

Each setting plays a duplicate match (``sichuan_env.agents.eval.evaluate``): the guarded
agent in one seat, three heuristics in the others, every wall under the four
rotations. The heuristic in that seat would score exactly 0 (the match is
zero-sum and it would hold every seat of every wall), so the guarded agent's
points per hand, with its 95% confidence interval over walls, is its gain
over the plain heuristic; its deal-in and win rates compare with the plain
heuristic's, measured on the same walls. With another ``--base``, its own row
is played the same way and each guarded row's ``gain`` is the difference,
paired wall by wall, with a 95% interval over walls.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sichuan_env.agents.base import Agent
from sichuan_env.agents.belief.guard import GuardedAgent, parse_far
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_duplicate
from sichuan_env.agents.eval.match_stats import summarize
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import run


def experiment(
    walls: int, thresholds: list[float], slacks: list[int], seed: int, rules: RuleConfig,
    model: BeliefModel, progress: bool = False, keeps: tuple[float, ...] = (0.0,),
    fars: tuple[tuple[float, int, float] | None, ...] = (None,), far_shanten: int = 2,
    base: str = "heuristic",
) -> dict[str, Any]:  # fmt: skip
    """The unguarded policy and every guarded setting, duplicate against three heuristics.

    The settings are every combination of ``thresholds``, ``slacks``, ``keeps`` and
    ``fars`` (``GuardedAgent``'s arguments; ``None`` in ``fars``: no far-hand setting).
    ``base`` names the policy guarded (a registered agent reading observation v1 or
    a checkpoint, e.g. ``distill``). Every row is one seat against three heuristics on
    the same walls; ``gain`` is a row's points per hand minus the unguarded policy's,
    paired wall by wall (``gain_ci95``: its 95% interval over walls).
    """
    t0 = time.perf_counter()
    plain_agent = make_lineup_agents([base] * 4, seed)[base]
    ref_name = "heuristic" if isinstance(plain_agent, HeuristicAgent) else base
    ref_row, ref = _match(plain_agent, ref_name, walls, rules, seed, progress)
    rows = [{**ref_row, "changed_discards": 0.0, "gain": 0.0, "gain_ci95": 0.0}]
    for far in fars:
        for keep in keeps:
            for slack in slacks:
                for th in thresholds:
                    guarded = make_lineup_agents([base] * 4, seed)[base]
                    agent = GuardedAgent(model, th, slack, keep, far, far_shanten, guarded)
                    row, per_wall = _match(agent, agent.name, walls, rules, seed, progress)
                    diff = per_wall - ref
                    ci = 1.96 * diff.std(ddof=1) / np.sqrt(walls) if walls > 1 else 0.0
                    changed = agent.guarded / max(agent.discards, 1)
                    rows.append({**row, "changed_discards": changed,
                                 "gain": float(diff.mean()), "gain_ci95": float(ci)})  # fmt: skip
    return {
        "walls": walls,
        "seed": seed,
        "base": base,
        "far_shanten": far_shanten,
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": rows,
    }


def _match(
    agent: Agent, name: str, walls: int, rules: RuleConfig, seed: int, progress: bool
) -> tuple[dict[str, Any], np.ndarray]:
    """``agent`` in one seat against three heuristics: its summary row and points per wall.

    When ``agent`` is the heuristic itself, the four seats are all the heuristic
    (every wall then scores exactly 0: the match is zero-sum).
    """
    lineup = [name, "heuristic", "heuristic", "heuristic"]
    agents: dict[str, Agent] = {name: agent}
    if name != "heuristic":
        agents["heuristic"] = HeuristicAgent()
    recs = play_duplicate(lineup, walls, rules, seed, progress, agents=agents)
    per_wall, count = np.zeros(walls), np.zeros(walls)
    for wall, rot, record in recs:
        for s in range(4):
            if lineup[(s + rot) % 4] == name:
                per_wall[wall] += record["result"]["scores"][s]
                count[wall] += 1
    return {"agent": name, **summarize(lineup, recs, walls)[name]}, per_wall / count


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="python -m research.belief_play.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--checkpoint", default="belief", help="belief checkpoint (default: shipped)")
    p.add_argument("--walls", type=int, default=400)
    p.add_argument("--thresholds", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    p.add_argument("--slack", type=int, nargs="+", default=[0, 1])
    p.add_argument(
        "--keep",
        type=float,
        nargs="+",
        default=[0.0],
        help="share of the heuristic's acceptance a replacement keeps (0: any)",
    )
    p.add_argument(
        "--far",
        nargs="+",
        default=["none"],
        metavar="T,S,K",
        help="threshold,slack,keep for hands --far-shanten or more from ready, or none",
    )
    p.add_argument("--far-shanten", type=int, default=2)
    p.add_argument("--base", default="heuristic", help="the policy guarded (v1), e.g. distill")
    p.add_argument("--preset", choices=sorted(PRESETS), default="xuezhan")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", type=Path)
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    try:
        fars = tuple(parse_far(f) for f in args.far)
        model = BeliefModel.load(args.checkpoint)
        res = experiment(args.walls, args.thresholds, args.slack, args.seed,
                         RuleConfig.preset(args.preset), model, args.progress,
                         tuple(args.keep), fars, args.far_shanten, args.base)  # fmt: skip
    except (TypeError, ValueError) as exc:
        p.error(str(exc))
    hdr = f"{'agent':44} {'pts/hand':>9} {'ci95':>6} {'gain':>7} {'ci95':>6} {'win':>6} {'deal-in':>8}"
    print(hdr + f" {'changed':>8}")
    for r in res["rows"]:
        print(f"{r['agent']:44} {r['points_per_hand']:9.3f} {r['ci95']:6.3f} {r['gain']:7.3f} "
              f"{r['gain_ci95']:6.3f} {r['win_rate']:6.3f} {r['deal_in_rate']:8.3f} "
              f"{r['changed_discards']:8.3f}")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "research.belief_play.run"))
