"""The collector's per-step bookkeeping as numba kernels (``sichuan_env.train.policy.rollout``).

Each kernel is one pass over a step's arrays doing what the collector did with several
numpy gathers and scatters (each allocating a temporary): the same stores in the same
order, so the rollouts are bit for bit the earlier ones (``tests/test_collector_golden.py``).
"""

from __future__ import annotations

from sichuan_env._jit import njit


@njit
def gather_obs(obs, rows, n_rows, out) -> None:
    """``out[j] = obs[rows[j], :n_rows]`` for every ``j`` (no temporary)."""
    for j in range(rows.shape[0]):
        src = obs[rows[j]]
        dst = out[j]
        for r in range(n_rows):
            for t in range(src.shape[1]):
                dst[r, t] = src[r, t]


@njit
def link_rows(last, rows, seat, k0, next_idx, buf_actions, actions) -> None:
    """Chain the learner's decisions ``k0 + j`` (of env ``rows[j]``) into their seat-trajectories.

    The seat's previous open decision points to the new one (``next_idx``), the new
    one becomes the seat's last, and the sampled action is copied to ``actions``.
    """
    for j in range(rows.shape[0]):
        i = rows[j]
        s = seat[i]
        k = k0 + j
        prev = last[i, s]
        if prev >= 0:
            next_idx[prev] = k
        last[i, s] = k
        actions[i] = buf_actions[k]


@njit
def credit_step(last, rewards, done, scale, buf_rewards, buf_dones, learner_seat, acc,
                ended_slots, ended_points) -> int:  # fmt: skip
    """Credit a step's rewards; close the trajectories of ended hands.

    Each seat's reward (times ``scale``) goes to its last stored decision; a pool
    slot's learner seat accumulates its points in ``acc``. For each ended hand, the
    seats' last decisions are marked done and forgotten, and a pool slot's points are
    reported in ``ended_slots[:m]`` / ``ended_points[:m]`` (its ``acc`` reset); returns ``m``.
    """
    m = 0
    for i in range(last.shape[0]):
        for s in range(4):
            k = last[i, s]
            if k >= 0:
                buf_rewards[k] += rewards[i, s] * scale
        ls = learner_seat[i]
        if ls >= 0:
            acc[i] += rewards[i, ls]
        if done[i]:
            for s in range(4):
                k = last[i, s]
                if k >= 0:
                    buf_dones[k] = True
                last[i, s] = -1
            if ls >= 0:
                ended_slots[m] = i
                ended_points[m] = acc[i]
                m += 1
            acc[i] = 0.0
    return m
