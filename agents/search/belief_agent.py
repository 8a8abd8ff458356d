"""``BeliefSearchAgent``: the rollout search with determinizations resampled by the belief model.

``SearchAgent`` keeps, of ``draws`` uniform deals of the unseen tiles, the one
whose opponents are closest to ready. This agent asks the belief model
(``sichuan_env.agents.belief.model``) what each opponent holds and whether it
is tenpai, from the searching seat's public observation (v2), and keeps one
of the ``draws`` deals with probability proportional to how well it agrees
with those beliefs (sampling importance resampling, see
``sichuan_env.agents.search.determinize``). Everything else (candidates,
paired rollouts, the ``z`` rule) is the search's.

The beliefs are one batched forward pass per ``act_states`` call, before the
numba search; they read only the seat's observation, so the agent still uses
only what its seat may see. Its cost is the search's: the resampling scores
the same draws the closest-to-ready rule scores.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.tiles import InputTypeError

NEEDED_HEADS = ("hand", "tenpai")
"""The belief heads the resampling reads."""


class BeliefSearchAgent(SearchAgent):
    """``SearchAgent`` whose determinizations follow the belief model; see the module docstring.

    Args:
        seed: as ``SearchAgent``.
        samples: as ``SearchAgent``.
        draws: uniform deals drawn per sample, one kept by its belief likelihood ratio (2..256;
            more than ``SearchAgent``'s 8: resampling needs a choice, and draws are cheap
            next to rollouts).
        belief: a ``BeliefModel``, a shipped checkpoint's name or a ``.pt`` path (default
            ``"belief"``, the shipped model); it must read the planes only (no event tokens)
            and predict the ``hand`` and ``tenpai`` heads.
        gap: as ``SearchAgent``.
        z: as ``SearchAgent``.
        style: as ``SearchAgent``.
        rules: as ``SearchAgent``.
        claims: as ``SearchAgent``.
        setup: as ``SearchAgent``.
        rollout_net: as ``SearchAgent``.
        rollout_seats: as ``SearchAgent``.

    Raises:
        ValueError: the ``SearchAgent`` checks, ``draws`` < 2, or a belief model that cannot serve.
    """

    name = "search-belief"

    def __init__(
        self,
        seed: int | None = None,
        samples: int = 32,
        draws: int = 32,
        gap: int = 1,
        z: float = 1.0,
        style: str = "heuristic",
        rules: RuleConfig | None = None,
        claims: bool = False,
        belief: BeliefModel | str | os.PathLike = "belief",
        setup: bool = False,
        rollout_net: object = None,
        rollout_seats: str = "self",
    ) -> None:
        super().__init__(seed, samples, draws, gap, z, style, rules, claims, setup, rollout_net,
                         rollout_seats)  # fmt: skip
        self.model = resampling_model(belief, self.draws)

    def to(self, device: Any) -> BeliefSearchAgent:
        """Run the belief model on ``device`` (``sichuan_env.agents.device``); returns self.

        Raises:
            DeviceError: a device this machine does not have (a ``ValueError``).
        """
        self.model.to(device)
        return self

    def _beliefs(self, states: np.ndarray) -> np.ndarray:
        return belief_rows(self.model, states, self.rules)


def resampling_model(belief: object, draws: int) -> BeliefModel:
    """``belief`` loaded and checked for resampling determinizations among ``draws`` deals.

    ``belief`` is a ``BeliefModel``, a shipped checkpoint's name or a ``.pt`` path.

    Raises:
        TypeError: ``belief`` is none of those.
        ValueError: ``draws`` < 2, a model without the heads the resampling reads, or one
            that reads event tokens.
    """
    if draws < 2:
        raise ValueError(f"belief resampling chooses among draws: draws must be >= 2, got {draws}")
    if not isinstance(belief, (BeliefModel, str)) and not hasattr(belief, "__fspath__"):
        raise InputTypeError("belief must be a BeliefModel, a name or a .pt path")
    model = belief if isinstance(belief, BeliefModel) else BeliefModel.load(belief)
    missing = [h for h in NEEDED_HEADS if h not in model.heads]
    if missing:
        raise ValueError(f"the belief model lacks the heads {missing} the resampling reads")
    if model.needs_tokens:
        raise ValueError(
            "the belief model reads event tokens; the search needs a planes-only model"
        )
    return model


def belief_rows(model: BeliefModel, states: np.ndarray, rules: RuleConfig) -> np.ndarray:
    """``float64[N, 4, 28]``: for each state's seat to act, the belief row of every seat.

    Row ``s`` holds ``model``'s probabilities that seat ``s`` holds tile ``t``
    (columns 0-26, head ``hand``) and is tenpai (column 27, head ``tenpai``),
    read from the acting seat's public observation; the acting seat's own row is 0.
    """
    n = len(states)
    spec = get_obs_version(model.obs_version)
    obs = np.zeros((n, *spec.shape()), dtype=np.uint8)
    seats = np.zeros(n, dtype=np.int64)
    spec.encode_batch(states, seats, False, rules.as_array(), obs)
    pred = model.predict(obs)
    bel = np.zeros((n, 4, BELIEF_COLUMNS), dtype=np.float64)
    rows = np.arange(n)
    for k in range(3):  # the model's opponents in relative order: next, opposite, previous
        seat = (seats + 1 + k) % 4
        bel[rows, seat, :27] = pred["hand"][:, k]
        bel[rows, seat, 27] = pred["tenpai"][:, k]
    return bel


def search_belief(seed: int | None = None) -> BeliefSearchAgent:
    """``BeliefSearchAgent(seed)`` with the shipped belief model (the ``search-belief`` agent)."""
    return BeliefSearchAgent(seed)
