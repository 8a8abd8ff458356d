"""Where a network agrees with the after-win hybrid: searched decisions, the others, the changed ones.

    python -m research.hybrid.agreement --nets agents/checkpoints/distill.pt runs/bc-hybrid/last.pt

The hybrid (``--teacher``, default ``strongest``) plays all four seats of
``--envs`` hands for ``--steps`` steps (the first ``--skip`` steps, openings
only, are left out). At every decision with two or more legal actions, each
network's greedy action (its acting rule: logits plus its prior) is compared
with the hybrid's, split by whether the hybrid's trigger fired (it searched)
or not, and, for the searched decisions where the hybrid left the first
network's choice ("changed"), how often each network picks the hybrid's
action. Prints a table; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from sichuan_env.agents.nn.policy import masked_logits
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.hybrid import HybridAgent, trigger_rows

from sichuan_env._files import write_atomic
from sichuan_env.envs.acting import Decisions, SeatMemory, ask
from sichuan_env.envs.vector import VectorEnv


def hybrid_decisions(
    teacher: HybridAgent, envs: int, steps: int, skip: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(obs, masks, actions, searched)`` of the teacher's decisions with 2+ legal actions."""
    venv = VectorEnv(envs, seed=seed)
    obs, mask, seat = venv.reset()
    memory = SeatMemory(envs)
    every = np.arange(envs)
    parts: list[tuple[np.ndarray, ...]] = []
    for step in range(steps):
        states = venv.states_of(every)
        d = Decisions(states, mask, venv.rules, seat, obs=obs, obs_version=1, memory=memory)
        act = ask(teacher, d)
        keep = mask.sum(axis=1) > 1
        if step >= skip:
            fired = trigger_rows(
                states, teacher.late, teacher.after_win, teacher.melds, teacher.claims
            )
            parts.append((obs[keep].copy(), mask[keep].copy(), act[keep], fired[keep]))
        obs, mask, seat, _, done, _ = venv.step(act)
        memory.hand_started(np.flatnonzero(done))
    o, m, a, f = (np.concatenate([p[k] for p in parts]) for k in range(4))
    return o, m, a, f


@torch.no_grad()
def greedy(path: str, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The network's greedy actions (its logits plus its prior, as ``TorchAgent`` acts)."""
    net, _ = load_network(path)
    net.eval()
    o, m = torch.from_numpy(obs), torch.from_numpy(masks)
    out = []
    for lo in range(0, len(o), 4096):
        s = slice(lo, lo + 4096)
        lg = net.logits(o[s], net.aux_of(o[s]), m[s], net.prior_of(o[s], m[s]))
        out.append(masked_logits(lg, m[s]).argmax(1).numpy())
    return np.concatenate(out)


def main(argv: list[str] | None = None) -> int:
    """Print (and with ``--json`` write) each network's agreement with the hybrid."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--nets", nargs="+", required=True, help="checkpoints; the first defines 'changed'")  # fmt: skip
    p.add_argument("--teacher", default="strongest", help="a registered HybridAgent (strongest)")
    p.add_argument("--envs", type=int, default=128)
    p.add_argument("--steps", type=int, default=260)
    p.add_argument("--skip", type=int, default=60, help="first steps left out (openings)")
    p.add_argument("--seed", type=int, default=991)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if not (1 <= args.envs <= 4096 and 0 <= args.skip < args.steps <= 10_000 and args.seed >= 0):
        p.error("need 1 <= --envs <= 4096, 0 <= --skip < --steps <= 10000 and --seed >= 0")
    teacher = make_agent(args.teacher, seed=0)
    if not isinstance(teacher, HybridAgent):
        p.error(f"--teacher {args.teacher} is not a HybridAgent")
    obs, masks, acts, fired = hybrid_decisions(teacher, args.envs, args.steps, args.skip, args.seed)
    picks = [greedy(n, obs, masks) for n in args.nets]
    changed = fired & (picks[0] != acts)
    rows = []
    print(f"{len(acts)} decisions; searched {fired.mean():.1%}; "
          f"the hybrid left {args.nets[0]} at {changed.sum() / max(fired.sum(), 1):.1%} of those")  # fmt: skip
    for name, pick in zip(args.nets, picks, strict=True):
        ok = pick == acts
        row = {"net": name, "all": ok.mean(), "searched": ok[fired].mean(),
               "not_searched": ok[~fired].mean(), "changed": ok[changed].mean()}  # fmt: skip
        rows.append({k: (float(v) if k != "net" else v) for k, v in row.items()})
        print(f"{name:40s} all {row['all']:.4f}  searched {row['searched']:.4f}  "
              f"not searched {row['not_searched']:.4f}  changed {row['changed']:.4f}")  # fmt: skip
    if args.json is not None:
        body = {"teacher": args.teacher, "decisions": len(acts), "searched": int(fired.sum()),
                "changed": int(changed.sum()), "seed": args.seed, "nets": rows}  # fmt: skip
        write_atomic(args.json, json.dumps(body, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
