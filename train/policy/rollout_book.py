"""The collector's per-step bookkeeping as numba kernels (``sichuan_env.train.policy.rollout``).

Each kernel is one pass over a step's arrays doing what the collector did with several
numpy gathers and scatters (each allocating a temporary): the same stores in the same
order, so the rollouts are bit for bit the earlier ones (``tests/test_collector_golden.py``).
"""

from __future__ import annotations

import numba
import numpy as np
from sichuan_env.agents.nn.features import aux_into

from sichuan_env._jit import njit

_ONES = np.uint64(0x0101010101010101)
"""The lowest bit of each byte of a 64-bit word."""


def mask_words(mask: np.ndarray) -> np.ndarray:
    """``mask`` (``int8[N, A]``, C-contiguous) as ``uint64[N, A // 8]``, eight actions a word.

    A mask of another element size, not C-contiguous or whose width is not a multiple of 8
    gives an empty array (``step_rows`` then reads the entries one by one).
    """
    if mask.ndim != 2 or mask.itemsize != 1 or mask.shape[1] % 8 or not mask.flags.c_contiguous:
        return np.zeros((0, 0), dtype=np.uint64)
    return mask.view(np.uint64)


@njit
def step_rows(mask, words, seat, learner_seat, actions, learner, rows) -> int:
    """One pass over a step's masks; returns how many learner decisions are free.

    Writes each env's first legal action (the forced choice) into ``actions``, whether
    the learner owes its decision into ``learner``, and the learner's free decisions (more
    than one legal action) into ``rows[:count]``. ``words`` is ``mask_words(mask)``: the
    legal actions are counted eight at a time (a nonzero byte counts one).
    """
    count = 0
    by_word = words.shape[0] == mask.shape[0]
    for i in range(mask.shape[0]):
        first = -1
        legal = 0
        if by_word:
            for j in range(words.shape[1]):
                w = words[i, j]
                if w == 0:
                    continue
                x = w | (w >> np.uint64(4))  # fold each byte's bits into its lowest bit
                x |= x >> np.uint64(2)
                x |= x >> np.uint64(1)
                x &= _ONES
                legal += np.int64((x * _ONES) >> np.uint64(56))  # the sum of the bytes
                if first < 0:
                    for a in range(8 * j, 8 * j + 8):
                        if mask[i, a]:
                            first = a
                            break
        else:
            for a in range(mask.shape[1]):
                if mask[i, a]:
                    legal += 1
                    if first < 0:
                        first = a
        actions[i] = max(first, 0)
        mine = learner_seat[i] < 0 or learner_seat[i] == seat[i]
        learner[i] = mine
        if mine and legal > 1:
            rows[count] = i
            count += 1
    return count


@njit(parallel=True)
def gather_step(obs, mask, rows, n_rows, out_obs, out_mask, dist, aux, out_aux) -> None:
    """A step's learner rows into the buffer in one parallel pass: observations, masks, features.

    ``out_obs[j] = obs[rows[j], :n_rows]``, ``out_mask[j] = mask[rows[j]]`` and, when
    ``aux``, ``out_aux[j]`` = ``aux_features`` of ``out_obs[j]``, computed while the row
    is in cache (the same values as a gather, ``np.take`` and ``aux_features``).
    """
    for j in numba.prange(rows.shape[0]):
        src = obs[rows[j]]
        dst = out_obs[j]
        for r in range(n_rows):
            for t in range(src.shape[1]):
                dst[r, t] = src[r, t]
        for a in range(mask.shape[1]):
            out_mask[j, a] = mask[rows[j], a]
        if aux:
            aux_into(dst, dist, out_aux[j])


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
