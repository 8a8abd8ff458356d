"""Does the belief model help play? The heuristic with and without a belief-based deal-in guard.

    python -m train.belief_play --walls 1500 --thresholds 0.05 0.1 0.2 --slack 0
        --keep 0 0.8 --json docs/belief_play.json

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

Each setting plays a duplicate match (``agents.evaluate``): the guarded
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

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.base import Agent, BaseAgent
from agents.belief_model import BeliefModel
from agents.evaluate import make_lineup_agents, play_duplicate, summarize
from agents.heuristic import HeuristicAgent
from sichuan_env import PRESETS, RuleConfig
from sichuan_env._cli import run
from sichuan_env._jit import njit
from sichuan_env.encoding.observation import HAND, VISIBLE, VOIDS
from sichuan_env.engine.actions import DISCARD
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables

V1_ROWS = 83
"""Observation v2's first rows are v1 (what the heuristic reads)."""


@njit
def discard_shanten(obs, mask, dist, out, accept) -> None:
    """Shanten and acceptance of each row's hand after each legal discard.

    ``out[i, t]``: shanten after discarding ``t`` (99 where illegal); ``accept[i, t]``:
    the unseen copies of the tiles that would then lower that shanten.
    """
    hand = np.zeros(27, dtype=np.uint8)
    for i in range(obs.shape[0]):
        void = -1
        for s in range(3):
            if obs[i, VOIDS, 9 * s]:
                void = s
        for t in range(27):
            hand[t] = 0
            for k in range(4):
                hand[t] += obs[i, HAND + k, t] != 0
        for t in range(27):
            out[i, t] = 99
            accept[i, t] = 0
            if mask[i, DISCARD + t] and hand[t] > 0:
                hand[t] -= 1
                base = shanten(hand, void, dist)
                out[i, t] = base
                for x in range(27):
                    unseen = 4
                    for k in range(4):
                        unseen -= obs[i, VISIBLE + k, x] != 0
                    if unseen <= 0 or hand[x] >= 4 or x // 9 == void:
                        continue
                    hand[x] += 1
                    if shanten(hand, void, dist) < base:
                        accept[i, t] += unseen
                    hand[x] -= 1
                hand[t] += 1


def guard_choice(
    base: np.ndarray, mask: np.ndarray, p_deal: np.ndarray, shan: np.ndarray, threshold: float,
    slack: int, accept: np.ndarray | None = None, keep: float = 0.0,
) -> np.ndarray:  # fmt: skip
    """The guarded actions: ``base`` unless its discard's ``p_deal`` exceeds ``threshold``.

    Args:
        base: the heuristic's actions ``int[N]``.
        mask: legal masks ``[N, 88]``.
        p_deal: deal-in probabilities ``float[N, 27]``.
        shan: shanten after each discard ``int[N, 27]`` (``discard_shanten``).
        threshold: guard when the chosen discard's probability is above this.
        slack: shanten a replacement discard may lose against the heuristic's.
        accept: acceptance after each discard ``int[N, 27]`` (``discard_shanten``).
        keep: a replacement keeps at least this share of the heuristic's acceptance.
    """
    out = base.copy()
    is_discard = (base >= DISCARD) & (base < DISCARD + 27)
    rows = np.flatnonzero(is_discard)
    if rows.size == 0:
        return out
    t = base[rows] - DISCARD
    risky = p_deal[rows, t] > threshold
    rows, t = rows[risky], t[risky]
    if rows.size == 0:
        return out
    legal = mask[rows, DISCARD : DISCARD + 27] == 1
    ok = legal & (shan[rows] <= shan[rows, t][:, None] + slack)
    if accept is not None and keep > 0:
        ok &= accept[rows] >= keep * accept[rows, t][:, None]
    cost = np.where(ok, p_deal[rows], np.inf)
    out[rows] = DISCARD + cost.argmin(axis=1)
    return out


class GuardedAgent(BaseAgent):
    """``HeuristicAgent`` with a belief-model deal-in guard on its discards (observation v2).

    Args:
        model: the belief model (reads observation v2).
        threshold: guard a discard whose deal-in probability is above this.
        slack: shanten a replacement discard may lose.
        keep: a replacement keeps at least this share of the heuristic's acceptance.
        far: ``(threshold, slack, keep)`` used instead when the heuristic's discard
            leaves the hand ``far_shanten`` or more from ready (a hand unlikely to win
            may fold harder); ``None``: one setting for every hand.
        far_shanten: where ``far`` starts (shanten after the heuristic's discard; 0 is ready).
        base: the policy guarded, an agent reading observation v1 (default: a
            ``HeuristicAgent``); "the heuristic's discard" above is then its discard.
    """

    obs_version = 2

    def __init__(
        self, model: BeliefModel, threshold: float = 0.1, slack: int = 0, keep: float = 0.0,
        far: tuple[float, int, float] | None = None, far_shanten: int = 2,
        base: Agent | None = None,
    ) -> None:  # fmt: skip
        if model.obs_version != 2:
            raise ValueError(f"the guard reads observation v2, the model v{model.obs_version}")
        _check_setting(threshold, slack, keep)
        if far is not None:
            if not isinstance(far, tuple) or len(far) != 3:
                raise TypeError(f"far must be a (threshold, slack, keep) tuple, got {far!r}")
            _check_setting(*far)
        if isinstance(far_shanten, bool) or not isinstance(far_shanten, int) or far_shanten < 1:
            raise ValueError(f"far_shanten must be an integer >= 1, got {far_shanten!r}")
        self.model, self.threshold, self.slack, self.keep = model, float(threshold), slack, keep
        self.far, self.far_shanten = far, far_shanten
        if base is None:
            base = HeuristicAgent()
        if not callable(getattr(base, "act_batch", None)) or getattr(base, "obs_version", 1) != 1:
            raise TypeError(f"base must be an agent reading observation v1, got {base!r}")
        self.name = setting_name(threshold, slack, keep, far, far_shanten)
        if not isinstance(base, HeuristicAgent):
            self.name = f"{getattr(base, 'name', type(base).__name__)}+{self.name}"
        self.base = base
        self.dist = get_tables()["DIST"]
        self.guarded = 0
        self.discards = 0

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        base = self.base.act_batch(np.ascontiguousarray(obs[:, :V1_ROWS]), masks)
        rows = np.flatnonzero((base >= DISCARD) & (base < DISCARD + 27))
        if rows.size == 0:
            return base
        p = self.model.predict(obs[rows])["deal_in"]
        shan = np.empty((rows.size, 27), dtype=np.int64)
        acc = np.empty((rows.size, 27), dtype=np.int64)
        discard_shanten(obs[rows], masks[rows], self.dist, shan, acc)
        b, m = base[rows], masks[rows]
        got = guard_choice(b, m, p, shan, self.threshold, self.slack, acc, self.keep)
        if self.far is not None:
            th, slack, keep = self.far
            far_rows = shan[np.arange(rows.size), b - DISCARD] >= self.far_shanten
            got = np.where(far_rows, guard_choice(b, m, p, shan, th, slack, acc, keep), got)
        out = base.copy()
        out[rows] = got
        self.discards += rows.size
        self.guarded += int((got != b).sum())
        return out


def _check_setting(threshold: float, slack: int, keep: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    if isinstance(slack, bool) or not isinstance(slack, int) or slack < 0:
        raise ValueError(f"slack must be a non-negative integer, got {slack!r}")
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must be in [0, 1], got {keep!r}")


def setting_name(
    threshold: float, slack: int, keep: float, far: tuple[float, int, float] | None = None,
    far_shanten: int = 2,
) -> str:  # fmt: skip
    """A guard setting as text, e.g. ``guard(t=0.2,s=0,k=0.8|>=2:t=0.1,s=1)``."""

    def one(t: float, s: int, k: float) -> str:
        return f"t={t:g},s={s}" + (f",k={k:g}" if k else "")

    far_txt = f"|>={far_shanten}:{one(*far)}" if far is not None else ""
    return f"guard({one(threshold, slack, keep)}{far_txt})"


def parse_far(text: str) -> tuple[float, int, float] | None:
    """``"T,S,K"`` (threshold, slack, keep) or ``"none"``, as given to ``--far``."""
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    if len(parts) != 3:
        raise ValueError(f"--far takes THRESHOLD,SLACK,KEEP or none, got {text!r}")
    try:
        far = (float(parts[0]), int(parts[1]), float(parts[2]))
    except ValueError:
        raise ValueError(f"--far takes THRESHOLD,SLACK,KEEP or none, got {text!r}") from None
    _check_setting(*far)
    return far


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
    p = argparse.ArgumentParser(prog="python -m train.belief_play", description=__doc__,
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
    sys.exit(run(main, "train.belief_play"))
