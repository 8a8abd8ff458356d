"""Value-leaf search: determinized look-ahead to the next draw, then the whole-table value ``V``.

At an own-turn decision of seat ``me``, every candidate action (as the rollout
search: each legal kong and each discard within ``gap`` shanten of the best; a
legal win is always taken) is scored in ``samples`` *determinizations* (everything
``me`` cannot see drawn again, ``sichuan_env.agents.search.determinize``) by
applying it and letting every seat play its rule-based style only until the next
draw from the wall (the claims on the discard, a pong's discard, a kong's
replacement draw: depth ``d = 0`` in draws), and then reading the whole-table value
network there with the exact expectation over that draw
(``table_states.state_values(expected=True)``: the mean of ``V`` over every tile the
drawer could have drawn). A candidate's value in a sample is ``me``'s points gained
on the way plus ``me``'s value at the leaf; a hand that ends on the way is worth its
points. Every candidate meets the same determinizations (common random numbers),
and a candidate replaces the default (the network's choice, given as ``prior``, or
the style's) only when its mean gain is more than ``z`` standard errors above zero
(``rollout.search_choice``). With ``depth`` ``d`` > 0 the play goes on through ``d``
more draws of the determinized wall (every seat its style, the drawer included)
before the leaf: the opponents' replies are played, not valued.

Where the rollout search plays each sample to the end of the hand (a noisy
sample of everything after), a leaf here costs one batched evaluation of ``V``
over at most 27 draws: a few samples suffice, and it can run at every own turn.
The leaves of all the rows of a batch are found in numba (in parallel over the
rows) and scored by ``V`` in one batched call, on the CPU or a device.

Only what ``me`` may see is used: the hidden hands and the wall are redrawn before
any candidate is played (``tests/test_value_leaf.py`` checks that states differing
only in hidden facts get the same answer). The determinizations are uniform (of
``draws`` deals the one with opponents closest to ready kept), or, with ``belief``,
resampled by the belief model from ``me``'s public observation as in
``BeliefSearchAgent`` (of ``draws`` uniform deals one kept by its likelihood ratio).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sichuan_env.agents.base import BaseAgent, check_seed
from sichuan_env.agents.rule_based.fused import STYLES
from sichuan_env.agents.search.agent import check_prior, check_states
from sichuan_env.agents.search.belief_agent import belief_rows, resampling_model
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.leaf_kernels import (
    MAX_LEAF_CANDIDATES,
    choose_rows,
    leaf_rows,
    paired_rows,
)
from sichuan_env.agents.search.rollout import MAX_CANDIDATES

from sichuan_env import RuleConfig
from sichuan_env.engine.state import PH_OVER, STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.tiles import InputTypeError

_T = get_tables()


class LeafValues(NamedTuple):
    """``ValueLeafSearch.action_values``: per row, its candidates and their paired values.

    ``cands int64[N, MAX_CANDIDATES]`` (the first ``n[i]`` are row ``i``'s), ``n int64[N]``,
    ``base int64[N]`` (the default's index), ``vals float64[N, samples, MAX_CANDIDATES]``
    (each candidate's value in each determinization: points on the way plus ``V`` at the
    leaf), ``gain`` and ``se`` (``float64[N, MAX_CANDIDATES]``: the mean gain over the
    default, paired over the determinizations, and its standard error; 0 where ``n`` <= 1).
    """

    cands: np.ndarray
    n: np.ndarray
    base: np.ndarray
    vals: np.ndarray
    gain: np.ndarray
    se: np.ndarray


class ValueLeafSearch(BaseAgent):
    """The value-leaf search of the module's text, over engine states (``reads_state``).

    Args:
        seed: seeds the determinizations (None: 0).
        value_model: a loaded ``TableModel``, or a spec for ``TableModel.load``
            (``"table_value"`` or a ``.pt`` path).
        samples: determinizations per decision (1..256); every candidate meets each.
        draws: deals drawn per determinization, the one with opponents closest to
            ready kept (1..256).
        gap: candidates: discards within ``gap`` shanten of the best (-1: every one).
        z: standard errors a candidate's gain must clear to replace the default.
        style: the rule-based style that plays every seat on the way to the leaf, and
            the default where no ``prior`` is given.
        rules: the ruleset (default docs/rules.md §9); the value model must cover it.
        device: where ``V`` runs (``"cpu"``, ``"cuda"``).
        self_policy: the policy ``V`` is told plays the searching seat (a name of
            ``table_rows.VOCAB``, e.g. ``"distill"`` for the hybrid whose network plays
            on after the search); None: ``unknown``. The other seats are always
            ``unknown``: the searcher does not know who it plays against.
        belief: None (uniform determinizations), or a planes-only ``BeliefModel``, a
            shipped checkpoint's name (``"belief"``) or a ``.pt`` path, whose beliefs
            resample the determinizations (``draws`` >= 2).
        depth: ``d``, the draws from the determinized wall played (every seat its style)
            before the leaf, whose next draw is then averaged exactly (0..8; 0: the leaf
            is the state right after the next draw, averaged over that draw).

    Raises:
        ValueError: a knob out of range, an unknown style, a value model that does not
            cover ``rules`` or cannot be loaded, a belief model that cannot serve or
            ``draws`` < 2 with one.
    """

    name = "value-leaf"
    obs_version = 1
    reads_state = True

    def __init__(
        self,
        seed: int | None = None,
        value_model: object = "table_value",
        samples: int = 8,
        draws: int = 8,
        gap: int = 1,
        z: float = 1.0,
        style: str = "heuristic",
        rules: RuleConfig | None = None,
        device: str = "cpu",
        self_policy: str | None = None,
        belief: object = None,
        depth: int = 0,
    ) -> None:
        from sichuan_env.agents.eval.table_rows import UNKNOWN, VOCAB, vocab_id
        from sichuan_env.agents.eval.table_value import TableModel

        for name, v, lo, hi in (("samples", samples, 1, 256), ("draws", draws, 1, 256),
                                ("gap", gap, -1, 14), ("depth", depth, 0, 8)):  # fmt: skip
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InputTypeError(f"{name} must be an integer, got {v!r}")
            if not lo <= v <= hi:
                raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 <= z < float("inf"):
            raise ValueError(f"z must be a finite number >= 0, got {z!r}")
        if style not in STYLES:
            raise ValueError(f"style must be one of {sorted(STYLES)}, got {style!r}")
        rules = RuleConfig() if rules is None else rules
        if not isinstance(rules, RuleConfig):
            raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        model = value_model if isinstance(value_model, TableModel) else None
        if model is None:
            if not isinstance(value_model, str) and not hasattr(value_model, "__fspath__"):
                raise InputTypeError("value_model must be a TableModel, a name or a .pt path")
            model = TableModel.load(value_model, device)
            model.check_outputs()
        if not model.covers(rules):
            raise ValueError("the value model was trained on other rules than the agent's")
        self.model = model
        if self_policy is not None and (
            not isinstance(self_policy, str) or self_policy not in VOCAB
        ):
            raise ValueError(f"self_policy must be one of {list(VOCAB)}, got {self_policy!r}")
        self.self_id = UNKNOWN if self_policy is None else vocab_id(self_policy)
        self.belief = None if belief is None else resampling_model(belief, draws)
        self.samples, self.draws, self.gap, self.z = int(samples), int(draws), int(gap), float(z)
        self.depth = int(depth)
        self.style, self.rules = style, rules
        self._seed = np.uint64(check_seed(0 if seed is None else seed))
        styles = np.full(4, STYLES[style], dtype=np.int64)
        self._env = (styles, rules.as_array(), _T["FLAGS"], _T["WAITS"], _T["DIST"])

    def reset(self, seed: int | None = None) -> None:
        """Reseed the determinizations (the search keeps no memory between decisions)."""
        if seed is not None:
            self._seed = np.uint64(check_seed(seed))

    def to(self, device: object) -> ValueLeafSearch:
        """Run ``V`` (and the belief model, if any) on ``device``; returns self."""
        import torch

        self.model.device = torch.device(str(device))
        self.model.net.to(self.model.device)
        if self.belief is not None:
            self.belief.to(self.model.device)
        return self

    def leaf_values(self, leaves: np.ndarray, me: np.ndarray) -> np.ndarray:
        """``me``'s value at each leaf state: 0 where the hand is over, else ``E_draw V``."""
        from sichuan_env.agents.eval.table_states import state_values

        out = np.zeros(len(leaves))
        live = np.flatnonzero(leaves["phase"] != PH_OVER)
        if live.size:
            ids = np.zeros((live.size, 4), np.int8)
            ids[np.arange(live.size), me[live]] = self.self_id
            v = state_values(self.model, leaves[live], self.rules, ids, expected=True)
            out[live] = v[np.arange(live.size), me[live]]
        return out

    def action_values(
        self,
        states: np.ndarray,
        masks: np.ndarray,
        prior: np.ndarray | None = None,
        extra: np.ndarray | None = None,
    ) -> LeafValues:
        """Every candidate's value of each row's decision, paired over the determinizations.

        The candidates are the search's (the default, ``prior`` or the style's action,
        among them) plus ``extra[i]``'s legal actions (``int64[N, E]``, -1: none; e.g. a
        network's best actions, for training labels); rows that are not own turns, and
        own turns with a legal win, have one candidate and no values.

        Raises:
            ValueError: as ``act_states``.
        """
        masks = check_states(states, masks)
        rows = np.ascontiguousarray(states)
        n = len(rows)
        prior = np.full(n, -1, np.int64) if prior is None else check_prior(prior, masks)
        if extra is None:
            extra = np.zeros((n, 0), np.int64)
        extra = np.asarray(extra)
        if extra.ndim != 2 or extra.shape[0] != n or not np.issubdtype(extra.dtype, np.integer):
            raise ValueError(f"extra must be an integer array of shape ({n}, E), got "
                             f"{extra.dtype} {extra.shape}")  # fmt: skip
        k = self.samples
        leaves = np.zeros((n, k, MAX_LEAF_CANDIDATES), dtype=STATE_DTYPE)
        gain = np.zeros((n, k, MAX_LEAF_CANDIDATES))
        cands = np.zeros((n, MAX_CANDIDATES), np.int64)
        n_c = np.zeros(n, np.int64)
        base = np.zeros(n, np.int64)
        bel = self._beliefs(rows)
        scratch = np.zeros((n, 2), dtype=STATE_DTYPE)
        leaf_rows(rows, scratch, self._seed, (k, self.draws, self.gap, self.depth), self._env,
                  bel, prior,
                  extra.astype(np.int64), leaves, gain, cands, n_c, base)  # fmt: skip
        vals = np.zeros((n, k, MAX_CANDIDATES))
        used = n_c > 1
        if used.any():
            slots = np.arange(MAX_LEAF_CANDIDATES)[None, None, :] < n_c[:, None, None]
            slots = slots & used[:, None, None] & np.ones((1, k, 1), bool)
            i, s, c = np.nonzero(slots)
            me = rows["to_act"].astype(np.int64)[i]
            vals[i, s, c] = gain[i, s, c] + self.leaf_values(leaves[i, s, c], me)
        mean, se = np.zeros((n, MAX_CANDIDATES)), np.zeros((n, MAX_CANDIDATES))
        paired_rows(vals, k, n_c, base, mean, se)
        return LeafValues(cands, n_c, base, vals, mean, se)

    def act_states(
        self,
        states: np.ndarray,
        masks: np.ndarray,
        rules: RuleConfig | None = None,
        prior: np.ndarray | None = None,
    ) -> np.ndarray:
        """One action per row (``STATE_DTYPE[N]``, not modified); ``prior`` as ``SearchAgent``'s.

        Rows that are not own turns play their ``prior`` (or the style's action).

        Raises:
            ValueError: as ``SearchAgent.act_states``.
        """
        if rules is not None and rules != self.rules:
            raise ValueError("the value-leaf search was made for other rules than the game's: "
                             "make it with ValueLeafSearch(rules=...) for this ruleset")  # fmt: skip
        v = self.action_values(states, masks, prior)
        masks = np.asarray(masks)
        out = np.zeros(len(v.n), np.int64)
        choose_rows(v.vals, self.samples, self.z, v.cands, v.n, v.base, out)
        bad = (out < 0) | (out >= masks.shape[1])
        bad[~bad] = masks[np.flatnonzero(~bad), out[~bad]] == 0
        if bad.any():
            raise ValueError(f"states row {int(np.flatnonzero(bad)[0])} does not match its mask")
        return out

    def _beliefs(self, rows: np.ndarray) -> np.ndarray:
        """``float64[N, 4, 28]`` belief rows of each row's acting seat, or ``[N, 0, 28]``."""
        if self.belief is None:
            return np.zeros((len(rows), 0, BELIEF_COLUMNS))
        return belief_rows(self.belief, rows, self.rules)

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise RuntimeError(
            "ValueLeafSearch searches over the engine state: call act_states(states, masks) "
            "(sichuan_env.agents.eval.evaluate does); it cannot act from observations alone"
        )


def distill_valueleaf(seed: int | None = None) -> BaseAgent:
    """``distill`` everywhere; the value-leaf search (8 determinizations) at every own turn."""
    from sichuan_env.agents.search.hybrid import MAX_WALL, HybridAgent

    search = ValueLeafSearch(seed, self_policy="distill")
    return HybridAgent(seed, late=MAX_WALL, after_win=False, search=search)


def distill_valueleaf_after_win(seed: int | None = None) -> BaseAgent:
    """``distill`` everywhere; the value-leaf search at its own turns once a seat has won."""
    from sichuan_env.agents.search.hybrid import HybridAgent

    return HybridAgent(seed, search=ValueLeafSearch(seed, self_policy="distill"))
