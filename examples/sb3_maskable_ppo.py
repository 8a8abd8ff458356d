"""Train sb3-contrib's ``MaskablePPO`` on the single-seat Gymnasium env, then evaluate it.

    pip install -e ".[scale]"
    python examples/sb3_maskable_ppo.py --steps 5000 --eval-hands 200 --seed 0

This is sb3-contrib's documented loop, unchanged. Training runs on
``make_vec_env("SichuanMahjong-v0", n_envs=2)``: the learner plays one seat
(rotating every hand) against three ``heuristic`` agents (the env's default
opponents), each env wrapped in sb3-contrib's ``ActionMasker`` with
``mask_fn`` (the env's own ``action_masks()``; ``MaskablePPO`` would also find
that method without the wrapper). Then, on one
``gymnasium.make("SichuanMahjong-v0")`` env, the documented prediction loop::

    action_masks = get_action_masks(env)
    action, _states = model.predict(obs, action_masks=action_masks, deterministic=True)
    obs, reward, terminated, truncated, info = env.step(action)

(``action`` is the 0-d array ``predict`` returns, passed on as it is) plays
``--eval-hands`` hands, and a uniformly random legal policy plays the same walls;
the points per hand of each are printed with a 95% confidence interval. A few
thousand steps only show that the loop works: the heuristic opponents are far
stronger than such a short training run (the shipped ``ppo`` agent took 15.6M
decisions of ``sichuan_env.train.policy.ppo`` to reach parity with them).
"""

from __future__ import annotations

# first: sets OMP_WAIT_POLICY before torch loads OpenMP (sichuan_env.threads), registers the env
import sichuan_env  # noqa: F401

# isort: split
import argparse
import json
import time
from typing import Any

import gymnasium
import numpy as np
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.env_util import make_vec_env

from sichuan_env.threads import set_threads

ENV_ID = "SichuanMahjong-v0"


def mask_fn(env: gymnasium.Env) -> np.ndarray:
    """The legal actions now (``ActionMasker``'s ``action_mask_fn``): the env's ``action_masks()``."""
    return env.unwrapped.action_masks()


def make_env() -> gymnasium.Env:
    """One env for evaluation: ``gymnasium.make("SichuanMahjong-v0")`` in an ``ActionMasker``."""
    return ActionMasker(gymnasium.make(ENV_ID), mask_fn)


def train(steps: int, seed: int, n_envs: int = 2, verbose: int = 0) -> MaskablePPO:
    """``MaskablePPO`` with an MLP policy, trained for ``steps`` learner decisions on ``n_envs`` envs."""
    vec_env = make_vec_env(
        ENV_ID,
        n_envs=n_envs,
        seed=seed,
        wrapper_class=ActionMasker,
        wrapper_kwargs={"action_mask_fn": mask_fn},
    )
    n_steps = max(32, min(512, steps // n_envs))
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        n_steps=n_steps,
        batch_size=min(64, n_steps * n_envs),
        n_epochs=4,
        learning_rate=3e-4,
        gamma=1.0,
        seed=seed,
        device="cpu",
        verbose=verbose,
    )
    model.learn(total_timesteps=steps)
    vec_env.close()
    return model


def play(model: MaskablePPO | None, hands: int, seed: int) -> tuple[np.ndarray, int]:
    """Points per hand of ``model`` (greedy), or of a random legal policy for None.

    The walls come from ``seed``; the seat rotates every hand. Also returns how
    many actions the env rejected as illegal (``info["illegal_action"]``).
    """
    rng = np.random.default_rng(seed)
    env = make_env()
    points = np.zeros(hands)
    illegal = 0
    for h in range(hands):
        obs, _ = env.reset(seed=seed if h == 0 else None)
        terminated = truncated = False
        while not (terminated or truncated):
            action_masks = get_action_masks(env)
            if model is not None:
                action, _states = model.predict(obs, action_masks=action_masks, deterministic=True)
            else:
                action = rng.choice(np.flatnonzero(action_masks))
            obs, reward, terminated, truncated, info = env.step(action)
            points[h] += reward
            illegal += bool(info["illegal_action"])
    env.close()
    return points, illegal


def summary(points: np.ndarray, illegal: int) -> dict[str, float]:
    """Mean points per hand, the half-width of its 95% confidence interval, illegal actions."""
    ci = 1.96 * points.std(ddof=1) / np.sqrt(len(points)) if len(points) > 1 else 0.0
    return {
        "points_per_hand": float(points.mean()),
        "ci95": float(ci),
        "hands": len(points),
        "illegal_actions": illegal,
    }


def evaluate(model: MaskablePPO, hands: int, seed: int) -> dict[str, dict[str, float]]:
    """The trained policy (greedy) and a random legal policy on the same ``hands`` walls."""
    return {
        "maskable_ppo": summary(*play(model, hands, seed)),
        "random_legal": summary(*play(None, hands, seed)),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point; returns the results."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=5000, help="learner decisions to train on")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-envs", type=int, default=2, help="envs of make_vec_env")
    p.add_argument("--eval-hands", type=int, default=200, help="hands of the evaluation")
    p.add_argument("--verbose", action="store_true", help="SB3's training log")
    p.add_argument("--threads", type=int, default=1, help="torch threads (a small MLP: 1 is best)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.eval_hands < 2 or args.seed < 0 or not 1 <= args.n_envs <= 64:
        p.error("--steps must be >= 1, --eval-hands >= 2, --seed >= 0 and --n-envs 1..64")
    if args.threads < 1:
        p.error("--threads must be >= 1")
    set_threads(args.threads)
    t0 = time.perf_counter()
    model = train(args.steps, args.seed, args.n_envs, verbose=int(args.verbose))
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
