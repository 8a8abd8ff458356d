"""Luck-adjusted evaluation: points minus the luck of the draws, unbiased by construction.

In the spirit of AIVAT (Burch et al., AAAI 2018): at every chance event of a
hand, the correction is the value of what happened minus the expected value
over what could have happened, computed with a value model of the full state
(all hands and the wall). The chance events are the deal and every draw from
the wall, kong replacements included; at a draw the next tile is uniform over
the tiles still in the wall (it was shuffled once, and nobody has seen the
rest), so the expectation is an exact sum over at most 27 tile types
(``luck_features``). A seat's adjusted points are its points minus the sum of
its corrections.

Why it is unbiased whatever the value model: given everything before a draw,
the correction's expectation over that draw is zero (the sum defines it so),
hence so is the expectation of their sum (a martingale), and the adjusted
points have the expectation of the points. A better model removes more luck;
a poor one only removes less. The deal's correction is the value of the deal
minus ``deal_baseline`` (the model's mean over independent training deals, by
seat relative to the dealer); in a duplicate match, where every wall is dealt
once per rotation of the lineup, the four deal corrections of a wall sum to
exactly zero for every agent, because the value model does not depend on who
sits where and its four seats' values sum to zero.

Decisions are not corrected: the shipped agents act deterministically at
play time (a correction at a deterministic decision is zero), and leaving a
correction out never biases the estimate.

The value model (``ValueNet``) scores each seat from its ``NF`` features and
the mean of the other three seats' (who it may pay or be paid by) with a small
MLP and subtracts the four seats' mean (values sum to zero, as points do). It is trained by ``python -m sichuan_env.train.value`` on self-play of a
mix of agents and tied to the rules it was trained on: ``LuckModel.covers``
says whether it applies to a ruleset, and the tools fall back to plain
estimates with a message when it does not.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval.luck_events import CHUNK, Events, extract
from sichuan_env.agents.eval.luck_features import NF
from torch import nn

from sichuan_env.rules.config import PRESETS, RuleConfig

FORMAT = "sichuan-luck-value/1"
"""The ``format`` field of every value-model checkpoint's JSON."""
FEATURES_VERSION = 2
"""The feature set (``luck_features``); stored as the checkpoint's ``obs_version``."""
SHIPPED = "luck"
"""The shipped value model: ``agents/checkpoints/luck.pt``."""
REQUIRED = {
    "format": str,
    "arch": dict,
    "obs_version": int,
    "rules": dict,
    "command": str,
    "commit": str,
    "wall_clock_s": (int, float),
    "created": str,
    "sha256": str,
    "deal_baseline": list,
}
"""Keys every value-model JSON holds, with their JSON types."""
MAX_HIDDEN = 512


@dataclass(frozen=True)
class ValueConfig:
    """The value MLP: ``NF`` features per seat, two hidden layers, one output per seat."""

    hidden: int = 64
    hidden2: int = 64
    obs_version: int = FEATURES_VERSION

    @classmethod
    def from_dict(cls, doc: object) -> ValueConfig:
        """Validate an ``arch`` object (``ValueError`` on unknown, missing or bad fields)."""
        if not isinstance(doc, dict) or set(doc) != {"hidden", "hidden2", "obs_version"}:
            raise ValueError(f"a value-model arch has the keys hidden, hidden2, obs_version: {doc}")
        for key in ("hidden", "hidden2"):
            v = doc[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_HIDDEN:
                raise ValueError(f"arch {key} must be an integer in 1..{MAX_HIDDEN}, got {v!r}")
        if doc["obs_version"] != FEATURES_VERSION:
            raise ValueError(f"feature version {doc['obs_version']!r} is not {FEATURES_VERSION}")
        return cls(doc["hidden"], doc["hidden2"], FEATURES_VERSION)

    def to_dict(self) -> dict[str, int]:
        """The ``arch`` object."""
        return asdict(self)


class ValueNet(nn.Module):
    """Per-seat score ``g(features)``; the value of seat ``k`` is ``g_k`` minus the seats' mean."""

    def __init__(self, config: ValueConfig | None = None) -> None:
        super().__init__()
        self.config = config or ValueConfig()
        c = self.config
        self.body = nn.Sequential(
            nn.Linear(2 * NF, c.hidden), nn.ReLU(), nn.Linear(c.hidden, c.hidden2), nn.ReLU(),
            nn.Linear(c.hidden2, 1),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``float[..., 4, NF]`` -> zero-sum values ``float[..., 4]``."""
        others = (x.sum(-2, keepdim=True) - x) / 3.0
        g = self.body(torch.cat([x, others], dim=-1)).squeeze(-1)
        return g - g.mean(-1, keepdim=True)


KIND = checkpoint.Kind(FORMAT, REQUIRED, ValueConfig.from_dict, ValueNet)
"""Value-model checkpoints, read and written by ``sichuan_env.agents.checkpoint``."""


def rules_name(rules: RuleConfig) -> str:
    """The preset name of ``rules``, or ``"custom"``."""
    return next((name for name, r in PRESETS.items() if r == rules), "custom")


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0, out=x)


@dataclass
class Corrections:
    """Per hand and seat, the luck removed: ``deal`` and ``draw`` (``float64[H, 4]``)."""

    deal: np.ndarray
    draw: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """``deal + draw``: subtract from the points for the adjusted points."""
        return self.deal + self.draw


class LuckModel:
    """A loaded value model: ``corrections(records)`` and ``adjusted(records)``.

    Its outputs are checked like its weights: a model whose values are not finite (weights
    that pass every load check but overflow float32 on its features) is a ``ValueError``
    naming the model, at construction for a probe of the features and at every batch of
    corrections, never NaN adjusted points.

    Args:
        net: the value network.
        doc: its checkpoint's JSON (``rules``, ``deal_baseline``).
        source: what the model is called in errors (its spec or path).

    Raises:
        ValueError: a bad ``deal_baseline``, or non-finite values on the probe.
    """

    def __init__(self, net: ValueNet, doc: dict[str, Any], source: str = "in memory") -> None:
        self.net = net.float().eval()
        self.doc = doc
        self.source = str(source)
        self.rules = RuleConfig.from_dict(doc["rules"])
        base = doc["deal_baseline"]
        if len(base) != 4 or not all(isinstance(x, (int, float)) for x in base):
            raise ValueError("value-model config: deal_baseline must be 4 numbers")
        self.deal_baseline = np.asarray(base, dtype=np.float64)
        if not np.isfinite(self.deal_baseline).all():
            raise ValueError("value-model config: deal_baseline must be finite")
        layers = [m for m in self.net.body if isinstance(m, nn.Linear)]
        self._w = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                   for m in layers]  # fmt: skip
        self._probe()

    def _overflow(self, where: str) -> ValueError:
        return ValueError(
            f"the value model {self.source!r} gives non-finite values {where}: its weights "
            "overflow float32 (a damaged or diverged model); it cannot adjust for luck"
        )

    def _probe(self) -> None:
        """Raise ``ValueError`` unless the values of all-zero and all-one features are finite."""
        probe = np.stack([np.zeros((4, NF)), np.ones((4, NF))]).astype(np.float32)
        if not np.isfinite(self.values(probe)).all():
            raise self._overflow("on a probe of its features")

    @classmethod
    def load(cls, spec: str | os.PathLike = SHIPPED) -> LuckModel:
        """Load a value model: the shipped ``"luck"`` or a ``.pt`` path (checked like every checkpoint).

        Raises:
            ValueError: any check of ``sichuan_env.agents.checkpoint.load`` fails, or the
                model's values are not finite (``LuckModel``).
        """
        net, doc = checkpoint.load(spec, KIND)
        assert isinstance(net, ValueNet)
        return cls(net, doc, str(spec))

    def covers(self, rules: RuleConfig) -> bool:
        """Whether the model was trained on ``rules`` (else the estimates stay plain)."""
        return rules == self.rules

    def values(self, feats: np.ndarray) -> np.ndarray:
        """Zero-sum values ``float32[M, 4]`` of feature rows ``float32[M, 4, NF]`` (numpy)."""
        f = feats.reshape(-1, 4, NF)
        with np.errstate(over="ignore", invalid="ignore"):  # checked by the callers instead
            others = (f.sum(axis=1, keepdims=True) - f) / np.float32(3.0)
            x = np.concatenate([f, others], axis=2).reshape(-1, 2 * NF)
            for k, (w, b) in enumerate(self._w):
                x = x @ w
                x += b
                if k < len(self._w) - 1:
                    x = _relu(x)
            g = x.reshape(-1, 4)
            return g - g.mean(axis=1, keepdims=True)

    def corrections_of(self, ev: Events) -> Corrections:
        """The corrections of the hands of ``ev``.

        Raises:
            ValueError: the model's values are not finite on these hands.
        """
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite: checked below
            c = self._corrections_of(ev)
        if not (np.isfinite(c.deal).all() and np.isfinite(c.draw).all()):
            raise self._overflow(f"on {ev.final.shape[0]} hands")
        return c

    def event_corrections(self, ev: Events) -> tuple[np.ndarray, np.ndarray]:
        """``(c float64[H, E, 4], live bool[H, E])``: each draw's correction, unchecked.

        ``live``: a draw event (not the deal) with a tile that could come; ``c`` is 0
        elsewhere, and its sum over a hand's events is the hand's draw correction.
        Callers check finiteness (``corrections_of`` does).
        """
        h, e = ev.probs.shape[:2]
        valid = ev.probs > 0
        valid[:, 0, :] = False
        valid &= (np.arange(e)[None, :] < ev.n_events[:, None])[:, :, None]
        vals = np.zeros((h, e, 27, 4), dtype=np.float64)
        vals[valid] = self.values(ev.feats[valid])
        p = np.where(valid, ev.probs, 0.0).astype(np.float64)
        norm = p.sum(axis=2, keepdims=True)
        p = np.divide(p, norm, out=np.zeros_like(p), where=norm > 0)
        expected = (p[..., None] * vals).sum(axis=2)  # [H, E, 4]
        happened = np.take_along_axis(vals, ev.actual[:, :, None, None], axis=2)[:, :, 0]
        live = norm[:, :, 0] > 0
        return np.where(live[..., None], happened - expected, 0.0), live

    def _corrections_of(self, ev: Events) -> Corrections:
        h = ev.final.shape[0]
        c, _ = self.event_corrections(ev)
        draw = c.sum(axis=1)
        deal_v = self.values(ev.feats[:, 0, 0][:, None]).astype(np.float64)
        rel = (np.arange(4)[None, :] - ev.dealer[:, None]) % 4
        deal = deal_v - self.deal_baseline[rel]
        if not np.isfinite(c).all():  # whatever the sums made of it
            raise self._overflow(f"on {h} hands")
        return Corrections(deal=deal, draw=draw)

    def corrections(
        self, records: Sequence[Any], progress: Callable[[int], object] | None = None
    ) -> Corrections:
        """Per record (finished hands of the model's rules) and seat, the luck removed.

        Args:
            records: the hands' records.
            progress: called with the number of hands done after each batch.

        Raises:
            ValueError: a record of other rules, one that cannot be replayed, or
                non-finite corrections (a value model that overflows).
        """
        deal = np.zeros((len(records), 4))
        draw = np.zeros((len(records), 4))
        for first in range(0, len(records), CHUNK):
            chunk = records[first : first + CHUNK]
            c = self.corrections_of(extract(chunk, self.rules, first=first))
            if not (np.isfinite(c.deal).all() and np.isfinite(c.draw).all()):
                raise self._overflow(f"on hands {first}..{first + len(chunk) - 1}")
            deal[first : first + len(chunk)] = c.deal
            draw[first : first + len(chunk)] = c.draw
            if progress is not None:
                progress(len(chunk))
        return Corrections(deal=deal, draw=draw)


def load_for(
    rules: RuleConfig,
    spec: str | os.PathLike | None = SHIPPED,
    loader: Callable[[str | os.PathLike], Any] | None = None,
    what: str = "the value model",
) -> tuple[Any, str]:
    """``(model, why)``: the value model for ``rules``, or None and a one-line reason.

    ``spec`` None turns the adjustment off. A model of other rules, or no usable model
    (torch missing, a damaged file), gives None and says why; never raises for those.
    ``loader`` loads ``spec`` (default ``LuckModel.load``; the whole-table model passes
    its own), ``what`` names the model in the reason.
    """
    if spec is None:
        return None, "luck adjustment off"
    try:
        model = (loader or LuckModel.load)(spec)
    except (ValueError, OSError) as exc:
        return None, f"no luck adjustment: the value model cannot be loaded ({exc})"
    if not model.covers(rules):
        return None, (
            f"no luck adjustment: the value model was trained on the rules "
            f"{rules_name(model.rules)!r}, not {rules_name(rules)!r} (plain estimates only)"
        )
    return model, f"luck-adjusted with {what} {spec}"
