"""``GuardedAgent``: a policy with a belief-model deal-in guard on its discards.

On its own turn the guarded agent takes its base policy's discard unless the
belief model's deal-in probability of that tile exceeds ``threshold``; then
it discards instead the legal tile with the lowest deal-in probability among
those that leave the hand at most ``slack`` shanten worse than the base's
choice and keep at least the share ``keep`` of its acceptance (unseen copies
of the tiles that would then lower the shanten); the base's own choice stays
among them. Every other decision (exchange, void, claims, wins, kongs) is the
base policy's.

Registered as ``distill-guard``: the shipped ``distill`` network guarded by
the shipped belief model at the pre-registered setting ``t=0.1, s=0, k=0.9``
(+0.026 ± 0.011 points per hand over ``distill`` on 20,000 walls × 4
rotations against three heuristics; ``research/belief_play``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sichuan_env.agents.base import Agent, BaseAgent
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

from sichuan_env._jit import njit
from sichuan_env.encoding.observation import HAND, VISIBLE, VOIDS
from sichuan_env.engine.actions import DISCARD
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables

V1_ROWS = 83
"""Observation v2's first rows are v1 (what the heuristic reads)."""


@njit
def discard_shanten(obs, mask, dist, out, accept) -> None:
    """Shanten and acceptance of each row's hand after each legal discard.

    ``out[i, t]``: shanten after discarding ``t`` (99 where illegal); ``accept[i, t]``:
    the unseen copies of the tiles that would then lower that shanten.
    """
    hand = np.zeros(27, dtype=np.uint8)
    for i in range(obs.shape[0]):
        void = -1
        for s in range(3):
            if obs[i, VOIDS, 9 * s]:
                void = s
        for t in range(27):
            hand[t] = 0
            for k in range(4):
                hand[t] += obs[i, HAND + k, t] != 0
        for t in range(27):
            out[i, t] = 99
            accept[i, t] = 0
            if mask[i, DISCARD + t] and hand[t] > 0:
                hand[t] -= 1
                base = shanten(hand, void, dist)
                out[i, t] = base
                for x in range(27):
                    unseen = 4
                    for k in range(4):
                        unseen -= obs[i, VISIBLE + k, x] != 0
                    if unseen <= 0 or hand[x] >= 4 or x // 9 == void:
                        continue
                    hand[x] += 1
                    if shanten(hand, void, dist) < base:
                        accept[i, t] += unseen
                    hand[x] -= 1
                hand[t] += 1


def guard_choice(
    base: np.ndarray, mask: np.ndarray, p_deal: np.ndarray, shan: np.ndarray, threshold: float,
    slack: int, accept: np.ndarray | None = None, keep: float = 0.0,
) -> np.ndarray:  # fmt: skip
    """The guarded actions: ``base`` unless its discard's ``p_deal`` exceeds ``threshold``.

    Args:
        base: the heuristic's actions ``int[N]``.
        mask: legal masks ``[N, 88]``.
        p_deal: deal-in probabilities ``float[N, 27]``.
        shan: shanten after each discard ``int[N, 27]`` (``discard_shanten``).
        threshold: guard when the chosen discard's probability is above this.
        slack: shanten a replacement discard may lose against the heuristic's.
        accept: acceptance after each discard ``int[N, 27]`` (``discard_shanten``).
        keep: a replacement keeps at least this share of the heuristic's acceptance.
    """
    out = base.copy()
    is_discard = (base >= DISCARD) & (base < DISCARD + 27)
    rows = np.flatnonzero(is_discard)
    if rows.size == 0:
        return out
    t = base[rows] - DISCARD
    risky = p_deal[rows, t] > threshold
    rows, t = rows[risky], t[risky]
    if rows.size == 0:
        return out
    legal = mask[rows, DISCARD : DISCARD + 27] == 1
    ok = legal & (shan[rows] <= shan[rows, t][:, None] + slack)
    if accept is not None and keep > 0:
        ok &= accept[rows] >= keep * accept[rows, t][:, None]
    cost = np.where(ok, p_deal[rows], np.inf)
    out[rows] = DISCARD + cost.argmin(axis=1)
    return out


class GuardedAgent(BaseAgent):
    """``HeuristicAgent`` with a belief-model deal-in guard on its discards (observation v2).

    Args:
        model: the belief model (reads observation v2).
        threshold: guard a discard whose deal-in probability is above this.
        slack: shanten a replacement discard may lose.
        keep: a replacement keeps at least this share of the heuristic's acceptance.
        far: ``(threshold, slack, keep)`` used instead when the heuristic's discard
            leaves the hand ``far_shanten`` or more from ready (a hand unlikely to win
            may fold harder); ``None``: one setting for every hand.
        far_shanten: where ``far`` starts (shanten after the heuristic's discard; 0 is ready).
        base: the policy guarded, an agent reading observation v1 (default: a
            ``HeuristicAgent``); "the heuristic's discard" above is then its discard.
    """

    obs_version = 2

    def __init__(
        self, model: BeliefModel, threshold: float = 0.1, slack: int = 0, keep: float = 0.0,
        far: tuple[float, int, float] | None = None, far_shanten: int = 2,
        base: Agent | None = None,
    ) -> None:  # fmt: skip
        if model.obs_version != 2:
            raise ValueError(f"the guard reads observation v2, the model v{model.obs_version}")
        _check_setting(threshold, slack, keep)
        if far is not None:
            if not isinstance(far, tuple) or len(far) != 3:
                raise TypeError(f"far must be a (threshold, slack, keep) tuple, got {far!r}")
            _check_setting(*far)
        if isinstance(far_shanten, bool) or not isinstance(far_shanten, int) or far_shanten < 1:
            raise ValueError(f"far_shanten must be an integer >= 1, got {far_shanten!r}")
        self.model, self.threshold, self.slack, self.keep = model, float(threshold), slack, keep
        self.far, self.far_shanten = far, far_shanten
        if base is None:
            base = HeuristicAgent()
        if not callable(getattr(base, "act_batch", None)) or getattr(base, "obs_version", 1) != 1:
            raise TypeError(f"base must be an agent reading observation v1, got {base!r}")
        self.name = setting_name(threshold, slack, keep, far, far_shanten)
        if not isinstance(base, HeuristicAgent):
            self.name = f"{getattr(base, 'name', type(base).__name__)}+{self.name}"
        self.base = base
        self.dist = get_tables()["DIST"]
        self.guarded = 0
        self.discards = 0

    def to(self, device: Any) -> GuardedAgent:
        """Run the belief model (and a base agent that has ``to``) on ``device``; returns self.

        Raises:
            DeviceError: a device this machine does not have (a ``ValueError``).
        """
        self.model.to(device)
        to = getattr(self.base, "to", None)
        if callable(to):
            to(device)
        return self

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        base = self.base.act_batch(np.ascontiguousarray(obs[:, :V1_ROWS]), masks)
        rows = np.flatnonzero((base >= DISCARD) & (base < DISCARD + 27))
        if rows.size == 0:
            return base
        p = self.model.predict(obs[rows])["deal_in"]
        shan = np.empty((rows.size, 27), dtype=np.int64)
        acc = np.empty((rows.size, 27), dtype=np.int64)
        discard_shanten(obs[rows], masks[rows], self.dist, shan, acc)
        b, m = base[rows], masks[rows]
        got = guard_choice(b, m, p, shan, self.threshold, self.slack, acc, self.keep)
        if self.far is not None:
            th, slack, keep = self.far
            far_rows = shan[np.arange(rows.size), b - DISCARD] >= self.far_shanten
            got = np.where(far_rows, guard_choice(b, m, p, shan, th, slack, acc, keep), got)
        out = base.copy()
        out[rows] = got
        self.discards += rows.size
        self.guarded += int((got != b).sum())
        return out


def _check_setting(threshold: float, slack: int, keep: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    if isinstance(slack, bool) or not isinstance(slack, int) or slack < 0:
        raise ValueError(f"slack must be a non-negative integer, got {slack!r}")
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must be in [0, 1], got {keep!r}")


def setting_name(
    threshold: float, slack: int, keep: float, far: tuple[float, int, float] | None = None,
    far_shanten: int = 2,
) -> str:  # fmt: skip
    """A guard setting as text, e.g. ``guard(t=0.2,s=0,k=0.8|>=2:t=0.1,s=1)``."""

    def one(t: float, s: int, k: float) -> str:
        return f"t={t:g},s={s}" + (f",k={k:g}" if k else "")

    far_txt = f"|>={far_shanten}:{one(*far)}" if far is not None else ""
    return f"guard({one(threshold, slack, keep)}{far_txt})"


def parse_far(text: str) -> tuple[float, int, float] | None:
    """``"T,S,K"`` (threshold, slack, keep) or ``"none"``, as given to ``--far``."""
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    if len(parts) != 3:
        raise ValueError(f"--far takes THRESHOLD,SLACK,KEEP or none, got {text!r}")
    try:
        far = (float(parts[0]), int(parts[1]), float(parts[2]))
    except ValueError:
        raise ValueError(f"--far takes THRESHOLD,SLACK,KEEP or none, got {text!r}") from None
    _check_setting(*far)
    return far


def _shipped_guard(base: BaseAgent) -> GuardedAgent:
    """``base`` guarded by the shipped belief model with the registered setting (t=0.1, k=0.9)."""
    return GuardedAgent(BeliefModel.load("belief"), threshold=0.1, slack=0, keep=0.9, base=base)


def load_distill_guard(seed: int | None = None) -> GuardedAgent:
    """The registered ``distill-guard``: shipped ``distill`` + shipped belief model, t=0.1, k=0.9."""
    from sichuan_env.agents.nn.torch_agent import load_distill

    return _shipped_guard(load_distill(seed))


def load_exit_valueleaf_guard(seed: int | None = None) -> GuardedAgent:
    """``exit-valueleaf`` with ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    from sichuan_env.agents.nn.torch_agent import load_exit_valueleaf

    return _shipped_guard(load_exit_valueleaf(seed))


def load_ensemble6_guard(seed: int | None = None) -> GuardedAgent:
    """``ensemble6`` with ``distill-guard``'s deal-in guard (shipped belief model, t=0.1, k=0.9)."""
    from sichuan_env.agents.nn.ensemble import load_ensemble6

    return _shipped_guard(load_ensemble6(seed))
