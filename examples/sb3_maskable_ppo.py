"""Train sb3-contrib's ``MaskablePPO`` on the single-seat Gymnasium env, then evaluate it.

    pip install -e ".[scale]"
    python examples/sb3_maskable_ppo.py --steps 5000 --eval-hands 200 --seed 0

The learner plays one seat (rotating every hand) of
``gymnasium.make("SichuanMahjong-v0", opponents=("heuristic",) * 3)``;
``MaskablePPO`` reads the legal actions from the env's ``action_masks()``
(found through the wrappers), so it never picks an illegal action. After
``--steps`` learner decisions it plays ``--eval-hands`` hands greedily and,
on the same walls, a uniformly random legal policy, and prints the points per
hand of each with a 95% confidence interval. A few thousand steps only show
that the loop works: the heuristic opponents are far stronger than such a
short training run (the shipped ``ppo`` agent took 15.6M decisions of
``sichuan_env.train.policy.ppo`` to reach parity with them).
"""

from __future__ import annotations

# numba's OpenMP threads spin between parallel calls and starve torch's (7x slower here)
import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO

import sichuan_env  # noqa: F401  (registers SichuanMahjong-v0)

ENV_ID = "SichuanMahjong-v0"


def make_env(**kwargs: Any) -> gymnasium.Env:
    """The single-seat env against three heuristics (keyword arguments go to ``gymnasium.make``)."""
    return gymnasium.make(ENV_ID, opponents=("heuristic",) * 3, **kwargs)


def train(steps: int, seed: int, verbose: int = 0) -> MaskablePPO:
    """``MaskablePPO`` with an MLP policy, trained for ``steps`` learner decisions."""
    env = make_env()
    env.reset(seed=seed)
    n_steps = max(64, min(512, steps))
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=64,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=1.0,
        seed=seed,
        device="cpu",
        verbose=verbose,
    )
    model.learn(total_timesteps=steps)
    return model


def play(act: Callable[[np.ndarray, np.ndarray], int], hands: int, seed: int) -> np.ndarray:
    """Points of ``act(obs, mask)`` in each of ``hands`` hands (walls from ``seed``, seats rotating)."""
    env = make_env()
    points = np.zeros(hands)
    for h in range(hands):
        obs, _ = env.reset(seed=seed if h == 0 else None)
        done = False
        while not done:
            action = act(obs, env.unwrapped.action_masks())
            obs, reward, terminated, truncated, _ = env.step(action)
            points[h] += reward
            done = terminated or truncated
    env.close()
    return points


def summary(points: np.ndarray) -> dict[str, float]:
    """Mean points per hand and the half-width of its 95% confidence interval."""
    ci = 1.96 * points.std(ddof=1) / np.sqrt(len(points)) if len(points) > 1 else 0.0
    return {"points_per_hand": float(points.mean()), "ci95": float(ci), "hands": len(points)}


def evaluate(model: MaskablePPO, hands: int, seed: int) -> dict[str, dict[str, float]]:
    """The trained policy (greedy) and a random legal policy on the same ``hands`` walls."""
    rng = np.random.default_rng(seed)

    def greedy(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])

    def random_legal(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return {
        "maskable_ppo": summary(play(greedy, hands, seed)),
        "random_legal": summary(play(random_legal, hands, seed)),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the results."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=5000, help="learner decisions to train on")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-hands", type=int, default=200, help="hands of the evaluation")
    p.add_argument("--verbose", action="store_true", help="SB3's training log")
    p.add_argument("--threads", type=int, default=1, help="torch threads (a small MLP: 1 is best)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.eval_hands < 2 or args.seed < 0:
        p.error("--steps must be >= 1, --eval-hands >= 2 and --seed >= 0")
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    model = train(args.steps, args.seed, verbose=int(args.verbose))
    t1 = time.perf_counter()
    results = evaluate(model, args.eval_hands, args.seed + 1)
    print(f"trained {args.steps} steps in {t1 - t0:.0f} s ({args.steps / (t1 - t0):.0f} steps/s)")
    for name, s in results.items():
        print(
            f"{name:>13}: {s['points_per_hand']:+.2f} +- {s['ci95']:.2f} points per hand "
            f"vs 3 heuristics ({s['hands']} hands)"
        )
    doc = {"steps": args.steps, "seed": args.seed, "train_seconds": t1 - t0, **results}
    print(json.dumps(doc))
    return doc


if __name__ == "__main__":
    main()
