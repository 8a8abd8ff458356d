"""Points against cost: the network, the search, and hybrids that search only where a rule says.

    python -m research.hybrid.run --walls 300 --seed 11 --out research/hybrid/results/screen
    python -m research.hybrid.run --walls 300 --seed 11 --out research/hybrid/results/screen --resume

Every case plays the duplicate match ``CASE heuristic heuristic heuristic`` on
the same walls (``--seed``; each dealt four times, the seats rotated) and is
scored plain and luck-adjusted (``sichuan_env.agents.eval.luck``), and paired
wall by wall with ``distill`` (the network alone) and with ``--base`` when it
is another case. The
candidate is timed in every call the match makes to it: milliseconds per
decision are its seconds over its decisions (claims and passes included),
batched as the match batches them, on this machine's cores. A case done is a
line of ``OUT/cases.jsonl``; ``--resume`` plays only the missing ones.
Writes ``OUT/summary.json`` and ``OUT/points_vs_cost.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.base import Agent
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import LuckModel
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.hybrid import HybridAgent

from sichuan_env._files import write_atomic

VAR_FIT = "runs/var-fit/table_value.pt"
"""The whole-table value fitted to the adjusted estimate's per-hand variance (research/table_value)."""
VAR_WALL = "runs/var-wall2/table_value.pt"
"""The same, then to the per-wall variance (``--objective wall``)."""
VAR_HAND = "runs/var-hand/table_value.pt"
"""The library's variance refit (``table_value.variance --objective hand``, 2 epochs; the recipe
in research/table_value/README.md), which replaces the prototype's ``VAR_FIT``."""
CASES: dict[str, dict[str, Any] | str] = {
    "distill": "distill",
    "hybrid-always": {"late": 55},
    "hybrid-late36": {"late": 36},
    "hybrid-late24": {"late": 24},
    "hybrid-late12": {"late": 12},
    "hybrid-won-or-late12": {"late": 12, "after_win": True},
    "search": "search",
    "search-belief": "search-belief",
    "distill-guard": "distill-guard",
    "hybrid-won": {"late": -1, "after_win": True},
    "guard-won-or-late12": {"net": "distill-guard", "late": 12, "after_win": True},
    "belief-won-or-late12": {"late": 12, "after_win": True, "belief": True},
    "rollout-small": "agents/checkpoints/rollout-small.pt",
    "hybrid-won-s64": {"late": -1, "after_win": True, "samples": 64},
    "hybrid-won-z0.5": {"late": -1, "after_win": True, "z": 0.5},
    "hybrid-won-self": {"late": -1, "after_win": True, "rollouts": "self"},
    "hybrid-won-s64-self": {"late": -1, "after_win": True, "samples": 64, "rollouts": "self"},
    "hybrid-won-s64-all": {"late": -1, "after_win": True, "samples": 64, "rollouts": "all"},
    "hybrid-won-s128": {"late": -1, "after_win": True, "samples": 128},
    "hybrid-won-s128-self": {"late": -1, "after_win": True, "samples": 128, "rollouts": "self"},
    "hybrid-won-s64-selfaux": {
        "late": -1,
        "after_win": True,
        "samples": 64,
        "rollouts": "self",
        "rollout_net": "agents/checkpoints/rollout-aux.pt",
    },
    "rollout-aux": "agents/checkpoints/rollout-aux.pt",
    "hybrid-won-s128-selfaux": {
        "late": -1,
        "after_win": True,
        "samples": 128,
        "rollouts": "self",
        "rollout_net": "agents/checkpoints/rollout-aux.pt",
    },
    "hybrid-won-s64-z1.5": {"late": -1, "after_win": True, "samples": 64, "z": 1.5},
    "hybrid-won-s64-z2": {"late": -1, "after_win": True, "samples": 64, "z": 2.0},
    "hybrid-won-s128-z1.5": {"late": -1, "after_win": True, "samples": 128, "z": 1.5},
    "hybrid-won-s256": {"late": -1, "after_win": True, "samples": 256},
    "hybrid-won-s256-z1.5": {"late": -1, "after_win": True, "samples": 256, "z": 1.5},
    "vlguard-won-s64": {
        "net": "exit-valueleaf-guard",
        "late": -1,
        "after_win": True,
        "samples": 64,
    },
    "vl-won-s64": {"net": "exit-valueleaf", "late": -1, "after_win": True, "samples": 64},
    "valueleaf-always": "distill-valueleaf8",
    "valueleaf-won": "distill-valueleaf8-after-win",
    "valueleaf-won-s16": {"late": -1, "after_win": True, "valueleaf": {"samples": 16}},
    "valueleaf-won-var": {"late": -1, "after_win": True, "valueleaf": {"value_model": VAR_FIT}},
    "valueleaf-always-var": {"late": 55, "after_win": False, "valueleaf": {"value_model": VAR_FIT}},
    "valueleaf-won-wall": {"late": -1, "after_win": True, "valueleaf": {"value_model": VAR_WALL}},
    "valueleaf-won-var-belief": {
        "late": -1,
        "after_win": True,
        "valueleaf": {"value_model": VAR_FIT, "belief": "belief"},
    },
    "valueleaf-won-hand": {"late": -1, "after_win": True, "valueleaf": {"value_model": VAR_HAND}},
    "valueleaf-won-hand-d1": {
        "late": -1,
        "after_win": True,
        "valueleaf": {"value_model": VAR_HAND, "depth": 1},
    },
    "valueleaf-won-var-s16": {
        "late": -1,
        "after_win": True,
        "valueleaf": {"value_model": VAR_FIT, "samples": 16},
    },
}
"""Label -> a registered agent, or the ``HybridAgent`` knobs (network ``distill`` unless named;
``valueleaf``: the knobs of a ``ValueLeafSearch`` used as its searcher)."""


class Timed:
    """Forwards every call to ``agent`` and adds up its seconds and decisions."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = agent.name
        self.obs_version = agent.obs_version
        self.reads_state = bool(getattr(agent, "reads_state", False))
        self.seconds = 0.0
        self.decisions = 0

    def _timed(self, call: Any, n: int, *args: Any) -> Any:
        t0 = time.perf_counter()
        out = call(*args)
        self.seconds += time.perf_counter() - t0
        self.decisions += n
        return out

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The agent's ``act``, timed."""
        return int(self._timed(self.agent.act, 1, obs, mask))

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The agent's ``act_batch``, timed."""
        return self._timed(self.agent.act_batch, len(masks), obs, masks)

    def act_states(self, states: np.ndarray, masks: np.ndarray, rules: Any = None) -> np.ndarray:
        """The agent's ``act_states``, timed."""
        call = self.agent.act_states  # type: ignore[attr-defined]
        return self._timed(call, len(masks), states, masks, rules)

    def reset(self, seed: int | None = None) -> None:
        """The agent's ``reset``, if it has one."""
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset(seed)


def build(case: dict[str, Any] | str, seed: int) -> Agent:
    """The agent of a case."""
    if isinstance(case, str):
        return make_agent(case, seed)
    knobs = dict(case)
    leaf = knobs.pop("valueleaf", None)
    if leaf is not None:
        from sichuan_env.agents.search.value_leaf import ValueLeafSearch

        knobs["search"] = ValueLeafSearch(seed, self_policy="distill", **leaf)
    return HybridAgent(seed, **knobs)


def play_case(label: str, walls: int, seed: int, model: LuckModel) -> dict[str, Any]:
    """One case: per-wall plain and adjusted points, cost, and the search rate of a hybrid."""
    lineup = [label, "heuristic", "heuristic", "heuristic"]
    agent = build(CASES[label], seed)
    timed = Timed(agent)
    agents = {label: timed, "heuristic": make_agent("heuristic", seed)}
    t0 = time.perf_counter()
    records = play_duplicate(lineup, walls, model.rules, seed=seed, agents=agents, progress=True)
    play_s = time.perf_counter() - t0
    corr = model.corrections([r for _, _, r in records]).total
    plain, adjusted = per_wall(lineup, records, walls, corr)[label]
    assert adjusted is not None
    stats = agent.stats() if isinstance(agent, HybridAgent) else {}
    return {
        "label": label, "case": CASES[label], "walls": walls, "seed": seed,
        "plain": plain.tolist(), "adjusted": adjusted.tolist(),
        "decisions": timed.decisions, "agent_seconds": timed.seconds, "play_seconds": play_s,
        "ms_per_decision": 1e3 * timed.seconds / max(timed.decisions, 1),
        "search_rate": stats.get("search_rate"),
    }  # fmt: skip


def summarize(done: dict[str, dict[str, Any]], base: str) -> list[dict[str, Any]]:
    """Per case: plain and adjusted means and intervals, and the paired difference to ``base``."""
    rows = []
    ref = np.asarray(done[base]["adjusted"]) if base in done else None
    for label, c in done.items():
        plain, adj = np.asarray(c["plain"]), np.asarray(c["adjusted"])
        pm, pc = mean_ci(plain)
        am, ac = mean_ci(adj)
        row = {"label": label, "walls": c["walls"], "seed": c["seed"], "plain": [pm, pc],
               "adjusted": [am, ac], "ms_per_decision": c["ms_per_decision"],
               "search_rate": c["search_rate"], "decisions": c["decisions"]}  # fmt: skip
        if ref is not None and label != base:
            row["minus_" + base] = list(mean_ci(adj - ref))
        rows.append(row)
    return rows


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Adjusted points per hand (95% CI) against milliseconds per decision, log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, r in enumerate(rows):
        m, c = r["adjusted"]
        x = max(r["ms_per_decision"], 1e-3)
        ax.errorbar([x], [m], yerr=[c], fmt="o", capsize=4)
        dy = 4 if k % 2 == 0 else -12  # neighbours' labels on either side
        ax.annotate(r["label"], (x, m), textcoords="offset points", xytext=(6, dy), fontsize=8)
    ax.set_xscale("log")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(
        20, color="red", lw=0.8, ls="--", label="20 ms per decision (the strongest alias' bound)"
    )
    ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("ms per decision (2 cores, batched as in a match)")
    ax.set_ylabel("points per hand vs 3 heuristics (adjusted, 95% CI)")
    ax.set_title(title)
    fig.tight_layout()
    tmp = path.with_name(f".{path.stem}.{time.time_ns()}.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    """Play the missing cases, print the table, write the summary and the plot."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--walls", type=int, default=300)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--base", default="distill", choices=list(CASES),
                   help="a second case every case is paired with (besides distill)")  # fmt: skip
    args = p.parse_args(argv)
    if not 2 <= args.walls <= 100_000 or args.seed < 0:
        p.error("--walls must be in 2..100000 and --seed >= 0")
    log = args.out / "cases.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if args.out.exists() and not args.resume:
        p.error(f"{args.out} exists: pass --resume to continue it, or another --out")
    if log.exists():
        for n, line in enumerate(log.read_text().splitlines(), 1):
            try:
                rec = json.loads(line)
                key = (rec["walls"], rec["seed"])
            except (ValueError, KeyError, TypeError):
                p.error(f"{log} line {n} is not a case record")
            if key != (args.walls, args.seed):
                p.error(f"{log} was played with --walls {key[0]} --seed {key[1]}")
            if rec["label"] in CASES and rec["case"] == CASES[rec["label"]]:
                done[rec["label"]] = rec
    if args.base not in done and args.base not in args.cases:
        p.error(f"--base {args.base} is neither played here (--cases) nor in {log}")
    args.out.mkdir(parents=True, exist_ok=True)
    model = LuckModel.load()
    for label in args.cases:
        if label in done:
            continue
        print(f"{label}: {args.walls} walls x 4 rotations vs 3 heuristics ...", flush=True)
        rec = play_case(label, args.walls, args.seed, model)
        done[label] = rec
        with log.open("a") as f:
            f.write(json.dumps(rec) + "\n")
    order = [k for k in CASES if k in done]
    rows = summarize({k: done[k] for k in order}, "distill")
    if args.base != "distill" and args.base in done:
        for r, other in zip(rows, summarize({k: done[k] for k in order}, args.base), strict=True):
            r.update({k: v for k, v in other.items() if k.startswith("minus_")})
    for r in rows:
        d = r.get("minus_distill")
        b = r.get("minus_" + args.base) if args.base != "distill" else None
        print(
            f"{r['label']:22s} plain {r['plain'][0]:+.3f} ± {r['plain'][1]:.3f}  "
            f"adj {r['adjusted'][0]:+.3f} ± {r['adjusted'][1]:.3f}  "
            + (f"- distill {d[0]:+.3f} ± {d[1]:.3f}  " if d else "")
            + (f"- {args.base} {b[0]:+.3f} ± {b[1]:.3f}  " if b else "")
            + f"{r['ms_per_decision']:7.2f} ms/decision"
            + (f"  searched {r['search_rate']:.0%}" if r["search_rate"] is not None else "")
        )
    body = {"walls": args.walls, "seed": args.seed, "value_model": "luck", "base": args.base,
            "cases": rows}  # fmt: skip
    write_atomic(args.out / "summary.json", json.dumps(body, indent=2) + "\n")
    plot(rows, args.out / "points_vs_cost.png", f"{args.walls} walls x 4, seed {args.seed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
