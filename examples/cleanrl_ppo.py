"""Masked PPO on the batched Gymnasium vector env, in one file (CleanRL's ``ppo.py`` style).

    python examples/cleanrl_ppo.py --num-envs 256 --total-timesteps 500000

The env is ``gymnasium.make_vec("SichuanMahjong-v0", num_envs=N)``: N single-seat
hands against three heuristics, stepped in one numba call. Gymnasium's
next-step autoreset applies: the step after a hand ends resets that env, its
action is ignored and its reward is 0, so that transition is left out of the
advantages (``ignored`` below), as CleanRL does for its own next-step envs.
Illegal actions never happen: the policy's logits are masked with
``envs.action_masks()`` before sampling. At the end the policy plays greedy
hands against the heuristics and reports points per hand.

The network runs where CleanRL puts it: ``--cuda`` (the default) uses a GPU when
torch sees one (CUDA, else Apple's MPS; ``sichuan_env.agents.device``),
``--no-cuda`` the CPU. The envs always step on the CPU, in numba.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import gymnasium
import numpy as np
import torch
from sichuan_env.agents.device import resolve_device
from torch import nn

import sichuan_env  # noqa: F401  (registers SichuanMahjong-v0 and its vector entry point)


@dataclass
class Args:
    """The run's settings (CleanRL keeps them in one place)."""

    seed: int = 1
    num_envs: int = 64
    num_steps: int = 32
    total_timesteps: int = 50_000
    learning_rate: float = 2.5e-4
    gamma: float = 1.0  # one hand is one episode; points arrive at its end
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 0.1
    eval_hands: int = 64
    metrics: str = ""  # a JSONL file: one row per update (empty: none)
    cuda: bool = True  # run the network on a GPU when torch sees one (--no-cuda: the CPU)


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from the command line (``--num-envs 256`` sets ``num_envs``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        flag = f"--{name.replace('_', '-')}"
        if isinstance(value, bool):  # --cuda / --no-cuda
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=value)
        else:
            p.add_argument(flag, type=type(value), default=value)
    return Args(**vars(p.parse_args(argv)))


class Agent(nn.Module):
    """An MLP actor-critic over the flattened observation planes."""

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 256) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())  # fmt: skip
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        """The critic's value of each observation."""
        return self.critic(self.body(x)).squeeze(-1)

    def get_action_and_value(
        self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample (or score) masked actions: action, log-prob, entropy, value."""
        h = self.body(x)
        logits = self.actor(h).masked_fill(~mask, -1e9)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(h).squeeze(-1)


def device_of(args: Args) -> torch.device:
    """Where the network runs: CleanRL's ``--cuda`` (a GPU if torch sees one) or the CPU."""
    return resolve_device("auto" if args.cuda else "cpu")


def evaluate(agent: Agent, hands: int, seed: int) -> float:
    """Points per hand of the greedy policy against three heuristics (one env per hand)."""
    device = next(agent.parameters()).device
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=hands)
    obs, _ = envs.reset(seed=seed)
    total, done = np.zeros(hands), np.zeros(hands, dtype=bool)
    while not done.all():
        with torch.no_grad():
            x = torch.as_tensor(obs.reshape(hands, -1), dtype=torch.float32, device=device)
            logits = agent.actor(agent.body(x))
            mask = torch.as_tensor(envs.action_masks(), device=device)
            action = logits.masked_fill(~mask, -1e9).argmax(1).cpu().numpy()
        obs, reward, term, _, _ = envs.step(action)
        total += np.where(done, 0.0, reward)
        done |= term
    envs.close()
    return float(total.mean())


def train(args: Args) -> tuple[Agent, list[dict[str, float]]]:
    """Run PPO; returns the agent and one log row per update."""
    torch.manual_seed(args.seed)
    device = device_of(args)
    envs = gymnasium.make_vec(
        "SichuanMahjong-v0", num_envs=args.num_envs, reward_scale=args.reward_scale
    )
    n, steps = args.num_envs, args.num_steps
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    n_actions = int(envs.single_action_space.n)
    agent = Agent(obs_dim, n_actions).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    on = {"device": device}  # every tensor lives on the network's device
    obs_buf = torch.zeros((steps, n, obs_dim), **on)
    mask_buf = torch.zeros((steps, n, n_actions), dtype=torch.bool, **on)
    actions = torch.zeros((steps, n), dtype=torch.long, **on)
    logprobs, rewards, values = (torch.zeros((steps, n), **on) for _ in range(3))
    dones = torch.zeros((steps, n), **on)  # the hand ended at this step
    ignored = torch.zeros((steps, n), dtype=torch.bool, **on)  # an autoreset step: not a decision

    obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs.reshape(n, -1), dtype=torch.float32, **on)
    next_done = torch.zeros(n, **on)
    next_reset = np.zeros(n, dtype=bool)  # envs the next step resets (NEXT_STEP autoreset)
    batch = steps * n
    log: list[dict[str, float]] = []
    start = time.perf_counter()
    for update in range(1, args.total_timesteps // batch + 1):
        for step in range(steps):
            obs_buf[step], ignored[step] = next_obs, torch.as_tensor(next_reset, **on)
            mask_buf[step] = torch.as_tensor(envs.action_masks(), **on)
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, mask_buf[step])
            actions[step], logprobs[step], values[step] = action, logprob, value
            obs, reward, term, trunc, _ = envs.step(action.cpu().numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32, **on)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32, **on)
            dones[step] = next_done
            next_reset = term | trunc
            next_obs = torch.as_tensor(obs.reshape(n, -1), dtype=torch.float32, **on)

        with torch.no_grad():  # GAE; a hand's end cuts the bootstrap, autoreset rows carry 0
            next_value = agent.get_value(next_obs)
            advantages = torch.zeros((steps, n), **on)
            last = torch.zeros(n, **on)
            for t in reversed(range(steps)):
                nxt = next_value if t == steps - 1 else values[t + 1]
                cont = 1.0 - dones[t]
                delta = rewards[t] + args.gamma * nxt * cont - values[t]
                last = delta + args.gamma * args.gae_lambda * cont * last
                last = torch.where(ignored[t], torch.zeros(n, **on), last)
                advantages[t] = last
            returns = advantages + values

        keep = ~ignored.reshape(-1)
        b_obs, b_mask = obs_buf.reshape(batch, -1)[keep], mask_buf.reshape(batch, -1)[keep]
        b_act, b_logp = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_adv, b_ret = advantages.reshape(-1)[keep], returns.reshape(-1)[keep]
        size = int(keep.sum())
        mb = max(1, size // args.num_minibatches)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(size, **on).split(mb):
                _, newlogp, entropy, newv = agent.get_action_and_value(
                    b_obs[idx], b_mask[idx], b_act[idx]
                )
                ratio = (newlogp - b_logp[idx]).exp()
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
                pg = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newv - b_ret[idx]) ** 2).mean()
                loss = pg - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        row = {
            "update": update,
            "env_steps": update * batch,
            "decisions": size,
            "hands_finished": float(dones.sum()),
            # the sampling policy's points per hand: the window's rewards over its finished hands
            "points_per_hand": float(rewards.sum())
            / max(float(dones.sum()), 1.0)
            / args.reward_scale,
            "policy_loss": float(pg.detach()),
            "value_loss": float(v_loss.detach()),
            "steps_per_s": update * batch / (time.perf_counter() - start),
        }
        log.append(row)
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
        if args.metrics:
            with open(args.metrics, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
    envs.close()
    return agent, log


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Train, then evaluate greedily against three heuristics."""
    args = parse_args(argv)
    agent, log = train(args)
    points = evaluate(agent, args.eval_hands, seed=args.seed + 10_000)
    print(f"greedy policy: {points:+.3f} points per hand against 3 heuristics", flush=True)
    if args.metrics:
        with open(args.metrics, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"eval_hands": args.eval_hands, "points_per_hand": points}) + "\n")
    return {"updates": len(log), "points_per_hand": points}


if __name__ == "__main__":
    main()
