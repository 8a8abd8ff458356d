"""Train a masked PPO with RLlib (new API stack) on the four-player AEC env, one shared policy.

    python3 -m venv .venv-rllib     # ray[rllib] 2.60 pins gymnasium 1.2.2: its own venv
    .venv-rllib/bin/pip install torch==2.13.0 -e . "ray[rllib]==2.60.0"
    .venv-rllib/bin/python examples/rllib_ppo.py --iterations 3

The PettingZoo AEC env (``sichuan_env.env``) goes into RLlib as its docs show:
``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` turns it into a
``MultiAgentEnv``, and a thin PettingZoo wrapper (``ActionMaskObservations``)
renames the observation to the keys of RLlib's action-masking example,
``{"observations": float32[83 * 27], "action_mask": float32[88]}``. The policy
is RLlib's own ``ActionMaskingTorchRLModule`` (``ray.rllib.examples.rl_modules.
classes.action_masking_rlm``): a PPO module that adds ``log(mask)`` to the
logits, so illegal actions get no probability. All four players map to the one
module ``"shared"`` (parameter sharing). Rewards are each seat's point changes,
delivered by the AEC env when the seat next acts (or when the hand ends).

RLlib's env checks stay on. The check steps the env once with an action
sampled from the bare ``Discrete(88)`` space, not from the mask, so the env is
made with ``illegal_action="penalize"``: an illegal id leaves the hand as it
was and costs the seat ``illegal_penalty`` points (here 1). The callback
``LegalityCheck`` reads every sampled action back against the mask the seat
saw, so a run shows how many of the actions PPO sampled were illegal: with the
masking module, none.

A few tiny iterations only show that the loop works; ``sichuan_env.train.policy.ppo``
is the project's own trainer (the shipped ``ppo`` agent).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import ray
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import sichuan_env

ENV_NAME = "sichuan_xuezhan"
POLICY = "shared"


class ActionMaskObservations(BaseWrapper):
    """The AEC env with RLlib's action-masking observation: ``{"observations", "action_mask"}``.

    ``observations`` is the env's ``uint8[83, 27]`` plane stack, flattened, as
    float32; ``action_mask`` the env's ``int8[88]`` mask as float32 (the module
    takes its logarithm). Everything else is the wrapped env's.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        n_obs = int(np.prod(inner["observation"].shape))
        n_actions = int(inner["action_mask"].shape[0])
        self._space = spaces.Dict(
            {
                "observations": spaces.Box(0.0, 1.0, (n_obs,), np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (n_actions,), np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Dict:
        """The same ``Dict`` space for every agent."""
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The wrapped env's observation of ``agent``, renamed and converted."""
        obs = self.env.observe(agent)
        return {
            "observations": obs["observation"].reshape(-1).astype(np.float32),
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def make_env(config: dict[str, Any] | None = None) -> PettingZooEnv:
    """The RLlib ``MultiAgentEnv`` of one table (``config``: RLlib's env config, unused keys ok)."""
    config = config or {}
    aec = sichuan_env.env(
        illegal_action="penalize", illegal_penalty=float(config.get("illegal_penalty", 1.0))
    )
    return PettingZooEnv(ActionMaskObservations(aec))


def _column(obs: Any, key: str) -> np.ndarray:
    """``obs[key]`` of every step: RLlib keeps dict observations batched or as a list of dicts."""
    if isinstance(obs, dict):
        return np.asarray(obs[key])
    return np.stack([o[key] for o in obs])


class LegalityCheck(RLlibCallback):
    """Counts the sampled actions and those the mask did not allow (metrics, summed)."""

    def on_sample_end(
        self, *, env_runner: Any = None, metrics_logger: Any = None, samples: Any, **kwargs: Any
    ) -> None:
        """Check every agent's actions in ``samples`` against the masks it observed."""
        total = illegal = 0
        for episode in samples:
            for agent_episode in episode.agent_episodes.values():
                actions = np.asarray(agent_episode.get_actions(), dtype=np.int64)
                if actions.size == 0:
                    continue
                masks = _column(agent_episode.get_observations(), "action_mask")
                allowed = masks[np.arange(actions.size), actions] > 0
                total += int(actions.size)
                illegal += int((~allowed).sum())
        if metrics_logger is not None:
            metrics_logger.log_value("sampled_actions", total, reduce="sum")
            metrics_logger.log_value("illegal_sampled_actions", illegal, reduce="sum")


def build_config(batch: int = 512, seed: int = 0) -> PPOConfig:
    """PPO on the new API stack: one local env runner, one shared masked module.

    Args:
        batch: env steps per training iteration (all four players' steps).
        seed: RLlib's seed (the env runner's and the module's).
    """
    return (
        PPOConfig()
        .environment(ENV_NAME)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .multi_agent(
            policies={POLICY},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY,
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    POLICY: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={
                            "head_fcnet_hiddens": [64],
                            "head_fcnet_activation": "relu",
                        },
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(128, batch),
            num_epochs=1,
            lr=3e-4,
            gamma=1.0,
        )
        .callbacks(LegalityCheck)
        .debugging(seed=seed)
    )


def _metric(result: dict[str, Any], key: str) -> float:
    value = result.get("env_runners", {}).get(key, 0)
    return float(getattr(value, "peek", lambda: value)())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """CLI entry point: train, print one line per iteration and the results (JSON); returns them."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--iterations", type=int, default=3, help="training iterations")
    p.add_argument("--batch", type=int, default=512, help="env steps per iteration")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.iterations < 1 or args.batch < 32 or args.seed < 0:
        p.error("--iterations must be >= 1, --batch >= 32 and --seed >= 0")
    register_env(ENV_NAME, make_env)
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    algo = build_config(args.batch, args.seed).build_algo()
    t0 = time.perf_counter()
    done = []
    try:
        for i in range(args.iterations):
            result = algo.train()
            row = {
                "iteration": i + 1,
                "env_steps": int(result["num_env_steps_sampled_lifetime"]),
                "episodes": int(result.get("env_runners", {}).get("num_episodes_lifetime", 0)),
                "sampled_actions": int(_metric(result, "sampled_actions")),
                "illegal_sampled_actions": int(_metric(result, "illegal_sampled_actions")),
            }
            done.append(row)
            print(json.dumps(row))
    finally:
        algo.stop()
        if started_ray:
            ray.shutdown()
    doc = {
        "iterations": len(done),
        "seconds": time.perf_counter() - t0,
        "env_steps": done[-1]["env_steps"],
        "sampled_actions": sum(r["sampled_actions"] for r in done),
        "illegal_sampled_actions": sum(r["illegal_sampled_actions"] for r in done),
        "per_iteration": done,
    }
    print(json.dumps({k: v for k, v in doc.items() if k != "per_iteration"}))
    return doc


if __name__ == "__main__":
    main()
