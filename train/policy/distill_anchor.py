"""Anchor rows for search distillation: decisions the label set says nothing about.

Two kinds, both from heuristic self-play and both in the label rows' format
(``sichuan_env.train.policy.search_labels``), never held out:

- ``anchor_rows``: claims, setup and wins, each with the heuristic's answer as
  its one candidate (gain 0), so the hinge keeps every other legal action
  below it;
- ``before_win_rows``: the decisions taken before any seat has won, each
  labelled with a reference network's own predicted gains (its logits less
  the logit of the heuristic's action). Fitting after-win labels
  (``exit_labels --after-win``) from an ``--init`` network changes the shared
  trunk and so its play before a win too, where no label speaks; these rows
  hold that play where it was.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.policy import PolicyNet
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.rollout import MAX_CANDIDATES
from sichuan_env.train.policy.bc import teacher_stream
from sichuan_env.train.policy.distill_objective import raw_logits

from sichuan_env.engine.actions import DISCARD, HU, PASS, PONG
from sichuan_env.envs.vector import VectorEnv

OBS_ROWS = 83
"""The observation rows label sets keep (the v1 public view)."""


def _rows(obs: np.ndarray, mask: np.ndarray, cands: np.ndarray, gain: np.ndarray,
          base: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    n = len(cands)
    return {
        "obs": obs, "mask": mask.astype(np.int8), "cands": cands, "gain": gain,
        "se": np.zeros_like(gain), "base": base.astype(np.int8),
        "hand": np.full(n, -1, np.int64), "seat": np.zeros(n, np.int8),
    }  # fmt: skip


def anchor_rows(
    decisions: int, seed: int, envs: int = 256, claims: bool = True
) -> dict[str, np.ndarray]:
    """Heuristic self-play decisions that are not own-turn discards (claims, setup, wins) as single-candidate rows.

    ``claims=False`` leaves out claim answers (labels that search them hold their own).
    """
    teacher = make_agent("heuristic", seed=seed)
    venv = VectorEnv(envs, seed=seed)
    stream = teacher_stream(teacher, venv, 64)
    obs_l, mask_l, act_l, seen = [], [], [], 0
    while seen < decisions:
        o, m, a = next(stream)
        seen += len(a)
        keep = (m[:, DISCARD : DISCARD + 27].sum(1) == 0) | (m[:, HU] == 1)
        if not claims:
            keep &= m[:, PONG : PASS + 1].sum(1) == 0
        obs_l.append(o[keep, :OBS_ROWS])
        mask_l.append(m[keep])
        act_l.append(a[keep])
    act = np.concatenate(act_l)
    cands = np.full((len(act), MAX_CANDIDATES), -1, np.int16)
    cands[:, 0] = act
    gain = np.zeros((len(act), MAX_CANDIDATES), np.float32)
    return _rows(np.concatenate(obs_l), np.concatenate(mask_l), cands, gain, np.zeros(len(act)))


def before_any_win(states: np.ndarray) -> np.ndarray:
    """``bool[N]``: no seat of the hand has won yet."""
    return ~states["won"].any(axis=1)


@torch.no_grad()
def gain_targets(
    net: PolicyNet, obs: np.ndarray, mask: np.ndarray, floor: float, batch: int = 4096
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cands int16[N, 32], gain float32[N, 32], base int8[N])``: ``net``'s own predicted gains.

    A row's candidates are its legal actions whose predicted gain over the
    heuristic's action (``l[a] - l[h]``, ``net``'s raw logits) is above
    ``-floor``, best first, at most ``MAX_CANDIDATES`` (the heuristic's action
    always among them); the other legal actions are the ones the distillation
    hinge keeps at ``-floor`` or below, where ``net`` already has them.
    """
    n = len(obs)
    base_act = heuristic_choices(obs, mask)
    if (base_act < 0).any():
        raise ValueError("rows without a legal action have no heuristic action")
    cands = np.full((n, MAX_CANDIDATES), -1, np.int16)
    gain = np.zeros((n, MAX_CANDIDATES), np.float32)
    base = np.zeros(n, np.int8)
    dev = next(net.parameters()).device
    for i in range(0, n, batch):
        sl = slice(i, min(i + batch, n))
        o = torch.from_numpy(np.ascontiguousarray(obs[sl])).to(dev)
        lg = raw_logits(net, o, net.aux_of(o)).float().cpu().numpy()
        rows = np.arange(sl.stop - sl.start)
        diff = lg - lg[rows, base_act[sl]][:, None]
        diff[mask[sl] == 0] = -np.inf
        diff[rows, base_act[sl]] = np.inf  # first, so never cut by the cap; its gain is 0
        order = np.argsort(-diff, axis=1, kind="stable")[:, :MAX_CANDIDATES]
        top = np.take_along_axis(diff, order, 1)
        keep = top > -floor
        cands[sl] = np.where(keep, order, -1)
        gain[sl] = np.where(keep & np.isfinite(top), top, 0.0)
    return cands, gain, base  # the heuristic's action is candidate 0 of every row


def before_win_rows(
    net: PolicyNet, rows: int, seed: int, floor: float, envs: int = 256
) -> dict[str, np.ndarray]:
    """``rows`` heuristic self-play decisions from before any seat has won, labelled by ``net`` (``gain_targets``)."""
    net.eval()
    teacher = make_agent("heuristic", seed=seed)
    stream = teacher_stream(teacher, VectorEnv(envs, seed=seed), 64, select=before_any_win)
    obs_l, mask_l, seen = [], [], 0
    while seen < rows:
        o, m, _ = next(stream)
        seen += len(o)
        obs_l.append(o[:, :OBS_ROWS])
        mask_l.append(m)
    obs = np.ascontiguousarray(np.concatenate(obs_l)[:rows])
    mask = np.concatenate(mask_l)[:rows]
    cands, gain, base = gain_targets(net, obs, mask, floor)
    return _rows(obs, mask, cands, gain, base)
