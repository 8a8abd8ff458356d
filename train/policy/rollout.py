"""PPO's rollouts: seat-trajectories in a flat buffer, the collector, and GAE over them.

``sichuan_env.train.policy.ppo`` explains the bookkeeping (its docstring's *Trajectories* and
*Opponents*); this module holds the parts a rollout worker needs without the
update (``sichuan_env.train.policy.ppo_ray`` runs the same ``Collector`` on Ray actors):

- ``gae``: advantages over seat-trajectories linked by ``next_idx``;
- ``Buffer``: one rollout's stored decisions;
- ``Collector``: plays ``VectorEnv`` hands with the learner and the pool and
  credits every reward to the receiving seat's last stored decision.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from sichuan_env.agents.base import Agent
from sichuan_env.agents.device import autocast
from sichuan_env.agents.nn.features import AUX_SIZE, aux_features, heuristic_choices
from sichuan_env.agents.nn.policy import PolicyNet, masked_logits
from sichuan_env.train.policy.rollout_book import (
    credit_step,
    gather_step,
    link_rows,
    mask_words,
    step_rows,
)

from sichuan_env._jit import njit
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules


@njit
def gae(rewards, values, dones, next_idx, boot, gamma, lam, adv, ret) -> None:
    """GAE over seat-trajectories stored in one flat buffer (every array of length n).

    Decision ``k`` is followed in its trajectory by ``next_idx[k]`` (> k), or
    ends the trajectory: terminally (``dones[k]``: the hand ended) or open
    (bootstrapped with ``boot[k]``). Writes ``adv`` and ``ret = adv + values``.
    """
    for k in range(rewards.shape[0] - 1, -1, -1):
        nxt = next_idx[k]
        if dones[k]:
            next_value = 0.0
            next_adv = 0.0
        elif nxt >= 0:
            next_value = values[nxt]
            next_adv = adv[nxt]
        else:
            next_value = boot[k]
            next_adv = 0.0
        delta = rewards[k] + gamma * next_value - values[k]
        adv[k] = delta + gamma * lam * next_adv
        ret[k] = adv[k] + values[k]


STAT_KEYS = ("t_env", "t_policy", "t_opp", "t_encode", "t_forward", "t_copy", "t_book")
"""``Collector.stats`` timers (seconds): the env's steps, the learner's decisions (``t_policy``:
the sum of gathering and uploading observations ``t_encode``, the forward pass and
sampling ``t_forward``, downloads ``t_copy`` and the buffer writes of the decisions), the
opponents' decisions, and the bookkeeping (``t_book``: buffer writes, trajectory links,
reward credit). The bootstrap values of a rollout's open trajectories add their views'
encoding, the critic's forward pass and its download to ``t_encode``, ``t_forward`` and
``t_copy`` (not to ``t_policy``)."""


class Buffer:
    """The stored decisions of one rollout (at most ``cap``), linked into seat-trajectories."""

    def __init__(self, cap: int, rows: int, oracle_rows: int, aux: int = 0) -> None:
        self.obs = np.zeros((cap, rows, 27), dtype=np.uint8)
        self.aux = np.zeros((cap, aux), dtype=np.float32) if aux else None
        self.oracle = np.zeros((cap, oracle_rows, 27), dtype=np.uint8) if oracle_rows else None
        self.masks = np.zeros((cap, 88), dtype=np.int8)
        self.prior = np.full(cap, -1, dtype=np.int64)
        self.actions = np.zeros(cap, dtype=np.int64)
        self.logp = np.zeros(cap, dtype=np.float32)
        self.values = np.zeros(cap, dtype=np.float32)
        self.rewards = np.zeros(cap, dtype=np.float32)
        self.dones = np.zeros(cap, dtype=np.bool_)
        self.next_idx = np.full(cap, -1, dtype=np.int64)
        self.boot = np.zeros(cap, dtype=np.float32)
        self.n = 0

    def clear(self) -> None:
        """Forget every decision."""
        self.rewards[:] = 0
        self.dones[:] = False
        self.next_idx[:] = -1
        self.boot[:] = 0
        self.n = 0

    FIELDS = (
        "obs", "aux", "oracle", "masks", "prior", "actions", "logp", "values", "rewards",
        "dones", "next_idx", "boot",
    )  # fmt: skip
    """The per-decision arrays (``aux`` and ``oracle`` may be None)."""

    def advantages(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """``(advantages, returns)`` of the stored decisions."""
        n = self.n
        adv = np.zeros(n, dtype=np.float32)
        ret = np.zeros(n, dtype=np.float32)
        gae(
            self.rewards[:n], self.values[:n], self.dones[:n], self.next_idx[:n], self.boot[:n],
            np.float32(gamma), np.float32(lam), adv, ret,
        )  # fmt: skip
        return adv, ret


class Collector:
    """Plays ``VectorEnv`` hands with the learner and the pool, filling a ``Buffer``.

    Args:
        net: the learner.
        venv: the env (``oracle=True`` when the net has an oracle critic).
        pool: opponents ``[(name, agent)]``; may be empty when ``pool_frac`` is 0. An agent
            that reads the engine state (``reads_state``, e.g. the search) gets the
            states (``VectorEnv.states_of``), the others their observations.
        pool_frac: share of slots where the learner plays one seat against the pool.
        pool_heuristic: probability that a pool slot's opponent is the heuristic
            (``pool[0]`` must then be it); the rest is uniform over the others.
        reward_scale: points -> reward.
        seed: seeds the action sampling and opponent draws.
        bf16: bfloat16 autocast of the policy's forward passes (``sichuan_env.train.policy.ppo --bf16``).
        cast: the autocast dtype of the forward passes (``--amp``; None: ``bf16``'s). The
            batches run on the network's device.
        device_sampling: sample actions on the network's device (Gumbel-max with a
            device generator seeded by ``seed``) and download actions, log-probabilities
            and values in one copy; None: whenever that device is not the CPU. Off, the
            logits come to the CPU and ``torch.multinomial`` samples there (the rollouts of
            earlier versions, bit for bit).
    """

    def __init__(
        self,
        net: PolicyNet,
        venv: VectorEnv,
        pool: list[tuple[str, Agent]],
        pool_frac: float,
        pool_heuristic: float,
        reward_scale: float,
        seed: int,
        bf16: bool = False,
        cast: torch.dtype | None = None,
        device_sampling: bool | None = None,
    ) -> None:
        self.net, self.venv, self.pool = net, venv, pool
        self.device = next(net.parameters()).device
        self.reward_scale = reward_scale
        self.pool_heuristic = pool_heuristic
        self.rng = np.random.default_rng(seed)
        self.gen = torch.Generator().manual_seed(seed)
        n = venv.num_envs
        self.rows = net.config.public_rows
        self.oracle = net.config.oracle_critic
        self.n_pool = round(n * pool_frac) if pool else 0
        self.learner_seat = np.where(np.arange(n) < self.n_pool, np.arange(n) % 4, -1)
        self.opponent = np.zeros(n, dtype=np.int64)
        self._draw(np.arange(self.n_pool))
        self.last = np.full((n, 4), -1, dtype=np.int64)
        self.obs, self.mask, self.seat = venv.reset()
        self.spec = get_obs_version(venv.obs_version)
        self.stats = dict.fromkeys(STAT_KEYS, 0.0)
        self.stats["steps"] = 0
        self.profile = False  # True: synchronize the device around each part (exact splits)
        cuda = self.device.type == "cuda"
        self._pin = cuda  # observations staged in pinned host memory, one copy each way
        self.device_sampling = (
            self.device.type != "cpu" if device_sampling is None else device_sampling
        )
        self._dev_gen = torch.Generator(device=self.device).manual_seed(seed)
        self._staging: dict[str, torch.Tensor] = {}  # one pinned buffer per upload of a step
        self.bf16 = bf16
        self.cast = cast if cast is not None else (torch.bfloat16 if bf16 else None)
        self.hand_points: dict[str, list[float]] = {name: [] for name, _ in pool}
        self._buf_rewards = np.zeros(0, dtype=np.float32)
        self._buf_dones = np.zeros(0, dtype=np.bool_)
        self._acc = np.zeros(n)
        self._ended, self._ended_points = np.zeros(n, np.int64), np.zeros(n)
        self._aux_tmp = np.zeros((0, AUX_SIZE), dtype=np.float32)  # features when buf has none
        self._dist = get_tables()["DIST"]

    def _draw(self, slots: np.ndarray) -> None:
        if len(slots) == 0 or not self.pool:
            return
        k = len(self.pool)
        heur = self.rng.random(len(slots)) < self.pool_heuristic
        other = self.rng.integers(1, k, len(slots)) if k > 1 else np.zeros(len(slots), np.int64)
        self.opponent[slots] = np.where(heur | (k == 1), 0, other)

    @torch.no_grad()
    def collect(self, steps: int, buf: Buffer) -> None:
        """Play ``steps`` steps of every slot, storing the learner's decisions in ``buf``."""
        buf.clear()
        self._buf_rewards, self._buf_dones = buf.rewards, buf.dones
        self.last[:] = -1
        n = self.venv.num_envs
        slots = np.arange(n)
        actions = np.zeros(n, dtype=np.int64)
        learner = np.zeros(n, dtype=np.bool_)
        row_buf = np.zeros(n, dtype=np.int64)
        for _ in range(steps):
            obs, mask, seat = self.obs, self.mask, self.seat
            tp = time.perf_counter()
            n_rows = step_rows(mask, mask_words(mask), seat, self.learner_seat, actions,
                               learner, row_buf)  # fmt: skip
            rows = row_buf[:n_rows]
            t0 = time.perf_counter()
            self.stats["t_book"] += t0 - tp
            if rows.size:
                if buf.n + rows.size > len(buf.actions):
                    raise ValueError("rollout buffer too small for steps x envs decisions")
                self._learner_step(rows, obs, mask, buf.n, buf)
                t_book = time.perf_counter()
                link_rows(self.last, rows, seat, buf.n, buf.next_idx, buf.actions, actions)
                buf.n += rows.size
                self.stats["t_book"] += time.perf_counter() - t_book
            t1 = time.perf_counter()
            opp_rows = np.flatnonzero(~learner)
            for j, (_, agent) in enumerate(self.pool):
                idx = opp_rows[self.opponent[opp_rows] == j]
                if idx.size and getattr(agent, "reads_state", False):  # e.g. the search
                    actions[idx] = agent.act_states(
                        self.venv.states_of(idx), mask[idx], self.venv.rules
                    )
                elif idx.size:
                    actions[idx] = agent.act_batch(obs[idx, : self.rows], mask[idx])
            t2 = time.perf_counter()
            self.obs, self.mask, self.seat, rewards, done, _ = self.venv.step(actions)
            t3 = time.perf_counter()
            self._credit(rewards, done, slots)
            self.stats["t_book"] += time.perf_counter() - t3
            self.stats["t_policy"] += t1 - t0
            self.stats["t_opp"] += t2 - t1
            self.stats["t_env"] += t3 - t2
            self.stats["steps"] += n
        self._bootstrap(buf)

    def _sync(self) -> None:
        if self.profile and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def _upload(self, host: np.ndarray, key: str) -> torch.Tensor:
        """``host`` on the network's device: through pinned staging buffer ``key`` on CUDA.

        Each step downloads its results (a synchronization) before the next step's
        uploads overwrite the staging buffers.
        """
        if not self._pin:
            return torch.from_numpy(host).to(self.device)
        raw = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
        buf = self._staging.get(key)
        if buf is None or buf.numel() < raw.size:
            buf = torch.empty(max(raw.size, 1 << 20), dtype=torch.uint8).pin_memory()
            self._staging[key] = buf
        view = buf[: raw.size]
        view.numpy()[:] = raw
        dtype = torch.from_numpy(host[:0]).dtype
        return view.view(dtype).view(*host.shape).to(self.device, non_blocking=True)

    def _learner_step(
        self, rows: np.ndarray, obs: np.ndarray, mask: np.ndarray, lo: int, buf: Buffer
    ) -> None:
        """The learner's decisions of ``rows``, stored at buffer indices ``lo, lo + 1, ...``.

        On the CPU: a forward pass and ``torch.multinomial`` with the collector's generator
        (the reference path). On a device: observations and masks in one pinned upload
        each, sampling (Gumbel-max) and log-probabilities on the device, and one download
        of actions, log-probabilities and values together.
        """
        t0 = time.perf_counter()
        dev = self.device
        hi = lo + rows.size
        # one parallel pass gathers observations and masks straight into the buffer and
        # computes the numba features there (no round trip through the device)
        aux_host = None
        if self.net.config.aux and buf.aux is not None:
            aux_host = buf.aux[lo:hi]
        elif self.net.config.aux:  # a buffer without features: computed all the same
            if len(self._aux_tmp) < rows.size:
                self._aux_tmp = np.zeros((rows.size, AUX_SIZE), dtype=np.float32)
            aux_host = self._aux_tmp[: rows.size]
        aux_out = self._aux_tmp[:0] if aux_host is None else aux_host
        if buf.oracle is not None:
            np.take(obs, rows, axis=0, out=buf.oracle[lo:hi])
            buf.obs[lo:hi] = buf.oracle[lo:hi, : self.rows]
            np.take(mask, rows, axis=0, out=buf.masks[lo:hi])
            if aux_host is not None:
                aux_host[:] = aux_features(buf.obs[lo:hi])
        else:
            gather_step(obs, mask, rows, self.rows, buf.obs[lo:hi], buf.masks[lo:hi],
                        self._dist, aux_host is not None, aux_out)  # fmt: skip
        public, rows_mask = buf.obs[lo:hi], buf.masks[lo:hi]
        prior_host = heuristic_choices(public, rows_mask) if self.net.config.prior else None
        full = self._upload(buf.oracle[lo:hi] if self.oracle and buf.oracle is not None
                            else obs[rows] if self.oracle else public, "obs")  # fmt: skip
        m_dev = self._upload(rows_mask, "mask")
        o = full[:, : self.rows]
        aux = None if aux_host is None else self._upload(aux_host, "aux")
        prior = None if prior_host is None else self._upload(prior_host, "prior")
        self._sync()
        t1 = time.perf_counter()
        with autocast(dev, self.cast):
            logits, value = self.net(o, aux, m_dev, prior)
            if self.oracle:
                value = self.net.oracle_value(full)
        if not self.device_sampling:
            logp_all = torch.log_softmax(masked_logits(logits.float(), m_dev), dim=1)
            a = torch.multinomial(logp_all.exp(), 1, generator=self.gen).squeeze(1)
            logp = logp_all.gather(1, a[:, None]).squeeze(1)
            self._sync()
            t2 = time.perf_counter()
            out_a, out_logp, out_v = a.numpy(), logp.numpy(), value.float().numpy()
        else:  # no host sync until the one download below
            lg = logits.float().masked_fill(m_dev == 0, float("-inf"))
            logp_all = torch.log_softmax(lg, dim=1)
            u = torch.rand(lg.shape, device=dev, generator=self._dev_gen)
            a = (logp_all - torch.log(-torch.log(u.clamp_min(1e-20)))).argmax(dim=1)
            logp = logp_all.gather(1, a[:, None]).squeeze(1)
            packed = torch.stack([a.float(), logp, value.float()], dim=1)
            self._sync()
            t2 = time.perf_counter()
            packed = packed.cpu().numpy()
            out_a, out_logp, out_v = packed[:, 0].astype(np.int64), packed[:, 1], packed[:, 2]
        t3 = time.perf_counter()
        if prior_host is not None:
            buf.prior[lo:hi] = prior_host
        buf.actions[lo:hi] = out_a
        buf.logp[lo:hi] = out_logp
        buf.values[lo:hi] = out_v
        t4 = time.perf_counter()
        self.stats["t_encode"] += t1 - t0
        self.stats["t_forward"] += t2 - t1
        self.stats["t_copy"] += t3 - t2
        self.stats["t_book"] += t4 - t3

    def _credit(self, rewards: np.ndarray, done: np.ndarray, slots: np.ndarray) -> None:
        """Rewards to each seat's last decision; ended hands close their trajectories."""
        n = len(slots)
        if len(self._ended) < n:
            self._ended, self._ended_points = np.zeros(n, np.int64), np.zeros(n)
        m = credit_step(self.last, rewards, done, float(self.reward_scale), self._buf_rewards,
                        self._buf_dones, self.learner_seat, self._acc, self._ended,
                        self._ended_points)  # fmt: skip
        if m:
            ended = self._ended[:m].copy()
            for i, pts in zip(ended, self._ended_points[:m], strict=True):
                self.hand_points[self.pool[self.opponent[i]][0]].append(float(pts))
            self._draw(ended)

    def _bootstrap(self, buf: Buffer) -> None:
        """Values of the seats' current views for trajectories left open.

        Timed as the steps are: building the views is encoding, the critic's pass forward,
        its download a copy and the stores bookkeeping.
        """
        t0 = time.perf_counter()
        open_i, open_s = np.nonzero(self.last >= 0)
        if open_i.size == 0:
            return
        oracle = self.oracle
        shape = self.spec.shape(oracle)
        views = np.zeros((open_i.size, *shape), dtype=np.uint8)
        states = self.venv.states  # a read-only snapshot already
        r = kernel_rules(self.venv.rules)
        self.spec.encode_many(states, open_i, open_s, oracle, r, views)
        with torch.no_grad():
            v = torch.from_numpy(views).to(self.device)
            self._sync()
            t1 = time.perf_counter()
            value = self.net.oracle_value(v) if oracle else self.net.state_value(v[:, : self.rows])
            self._sync()
            t2 = time.perf_counter()
            host = value.float().cpu().numpy()
        t3 = time.perf_counter()
        buf.boot[self.last[open_i, open_s]] = host
        st = self.stats
        st["t_encode"] += t1 - t0
        st["t_forward"] += t2 - t1
        st["t_copy"] += t3 - t2
        st["t_book"] += time.perf_counter() - t3
