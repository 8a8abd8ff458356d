"""``HybridAgent``: a network everywhere, the rollout search only where a cheap rule says it matters.

The network (any registered network agent: ``distill`` by default) answers
every decision. At the seat's own turns where the **trigger** fires, the
rollout search (``SearchAgent``, or ``BeliefSearchAgent`` with
``belief=True``) scores the candidates against the *network's* choice and
replaces it only with a candidate whose mean gain is more than ``z``
standard errors above it (``search_action``'s ``prior``): where the search
cannot tell, the network's answer stands.

The trigger reads public facts of the state only (what the seat may see):

- ``late``: the wall has at most ``late`` tiles left (0..55; 55 fires on every turn,
  -1 never by this test);
- ``after_win``: some seat has already won (the 血战 phase, where the wall is
  short for the rest and every deal-in counts);
- ``melds``: some other active seat has at least ``melds`` exposed melds
  (0: off).

It fires when any enabled test holds. ``stats()`` counts the decisions, the
searched ones and the seconds spent, for points-against-cost tables
(``research/hybrid``).

Registered as ``distill-search-after-win``: ``distill``, and the search at
its own turns once some seat has won (the defaults: ``after_win=True``, the
other tests off), the trigger the screening run picked and a run on fresh
walls confirmed: +0.091 ± 0.050 points per hand over ``distill`` (1,000 walls,
adjusted, against three heuristics) at 2.7 ms per decision in a match. With
64 rollouts per candidate instead of 32 (``distill-search64-after-win``, the
``strongest`` alias until December 2026) it gains +0.094 ± 0.055 more, screened on
one seed and confirmed on another, at 3.5 ms (``research/hybrid/README.md``).

Registered as ``ensemble6-guard-search64-after-win`` (the target of ``strongest``):
the same 64-rollout search on ``ensemble6-guard`` (``strongest-net``) instead of
``distill``, +0.030 ± 0.020 points per hand over ``distill-search64-after-win`` on
8,000 fresh walls against three heuristics (advantage sum, paired;
``research/ensemble/README.md``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sichuan_env.agents.base import Agent, BaseAgent, check_seed
from sichuan_env.agents.search.agent import SearchAgent, check_states

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.state import PH_CLAIM, PH_ROB, PH_TURN
from sichuan_env.tiles import InputTypeError

MAX_WALL = 55
"""Tiles in the wall after the deal (108 - 53)."""


def _int_in(name: str, v: object, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InputTypeError(f"{name} must be an integer, got {v!r}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
    return int(v)


def trigger_rows(
    states: np.ndarray,
    late: int = -1,
    after_win: bool = False,
    melds: int = 0,
    claims: bool = False,
) -> np.ndarray:
    """``bool[N]``: where the trigger fires for the seat to act (public facts only).

    Own turns, and with ``claims`` claim and robbing windows too; see the module
    docstring for the three tests.
    """
    phase = states["phase"]
    decision = phase == PH_TURN
    if claims:
        decision |= (phase == PH_CLAIM) | (phase == PH_ROB)
    fire = np.zeros(len(states), dtype=bool)
    if late >= 0:
        fire |= (states["tail"].astype(np.int64) - states["head"] + 1) <= late
    if after_win:
        fire |= states["won"].any(axis=1)
    if melds > 0:
        me = states["to_act"].astype(np.int64)
        other = np.arange(4)[None, :] != me[:, None]
        active = states["won"] == 0
        exposed = states["n_melds"].astype(np.int64) * (other & active)
        fire |= exposed.max(axis=1) >= melds
    return fire & decision


class HybridAgent(BaseAgent):
    """A network that calls the search where the trigger fires; see the module docstring.

    Args:
        seed: seeds the network's sampling (if it samples) and the search.
        net: the network agent, a registered name or ``.pt`` path (default ``"distill"``),
            or an ``Agent`` already made; it must act from observations (not read states).
        late: the trigger's wall test (tiles left, -1..55; -1: off).
        after_win: the trigger's "some seat has won" test.
        melds: the trigger's exposed-melds test (0..4; 0: off).
        belief: search with the belief model's deals (``BeliefSearchAgent``).
        samples: the search's determinized rollouts per candidate (``SearchAgent``).
        draws: the search's deals drawn per sample (at least 32 with ``belief``).
        gap: the search's discard candidates (within ``gap`` shanten of the best).
        z: standard errors a candidate must clear to replace the network's choice.
        claims: search the claim answers too where the trigger fires.
        rules: the ruleset (default docs/rules.md §9).
        rollouts: who plays the search's rollouts: ``"style"`` (the heuristic in every
            seat), ``"self"`` (the network in the searching seat, its own future play;
            the heuristic in the others) or ``"all"`` (the network in every seat). The
            network plays in numba (``sichuan_env.agents.nn.net_cache``): an MLP over
            observation v1.
        rollout_net: the network that plays the rollouts' network seats instead of ``net``
            (a registered name, a ``.pt`` path, a ``PolicyNet`` or a network agent): a
            smaller one distilled from it costs less per decision
            (``agents/checkpoints/rollout-aux.pt``). None: ``net``.
        search: a searcher made already, used instead of the rollout search (and the
            search knobs above): anything with ``act_states(states, masks, rules,
            prior=...)`` and ``reset``, e.g. ``value_leaf.ValueLeafSearch``.

    Raises:
        ValueError: bad knobs, a network that reads states, or network rollouts with a
            network numba cannot play.
    """

    name = "hybrid"
    reads_state = True

    def __init__(
        self,
        seed: int | None = None,
        net: str | Agent = "distill",
        late: int = -1,
        after_win: bool = True,
        melds: int = 0,
        belief: bool = False,
        samples: int = 32,
        draws: int = 8,
        gap: int = 1,
        z: float = 1.0,
        claims: bool = False,
        rules: RuleConfig | None = None,
        rollouts: str = "style",
        rollout_net: object = None,
        search: Any = None,
    ) -> None:
        from sichuan_env.agents.registry import make_agent

        seed = check_seed(seed)
        self.late = _int_in("late", late, -1, MAX_WALL)
        self.melds = _int_in("melds", melds, 0, 4)
        for name, flag in (("after_win", after_win), ("belief", belief), ("claims", claims)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InputTypeError(f"{name} must be True or False, got {flag!r}")
        self.after_win, self.belief, self.claims = bool(after_win), bool(belief), bool(claims)
        if rollouts not in ("style", "self", "all"):
            raise ValueError(f"rollouts must be 'style', 'self' or 'all', got {rollouts!r}")
        if rollout_net is not None and rollouts == "style":
            raise ValueError("rollout_net needs network rollouts: rollouts='self' or 'all'")
        self.net = make_agent(net, seed) if isinstance(net, str) else net
        if not isinstance(self.net, Agent) or getattr(self.net, "reads_state", False):
            raise ValueError("net must be an agent that acts from observations (a network)")
        self.obs_version = int(self.net.obs_version)
        self._spec = get_obs_version(self.obs_version)
        rules = RuleConfig() if rules is None else rules
        knobs: dict[str, Any] = {"samples": samples, "gap": gap, "z": z, "rules": rules}
        knobs["claims"] = self.claims
        self.search: Any
        self.rollouts = rollouts
        if rollouts != "style":
            knobs["rollout_net"] = self.net if rollout_net is None else rollout_net
            knobs["rollout_seats"] = rollouts
        if search is not None:
            if not callable(getattr(search, "act_states", None)):
                raise InputTypeError("search must have act_states(states, masks, rules, prior=)")
            self.search = search
        elif self.belief:  # resampling needs more draws than the closest-to-ready rule
            from sichuan_env.agents.search.belief_agent import BeliefSearchAgent

            self.search = BeliefSearchAgent(seed, draws=max(draws, 32), **knobs)
        else:
            self.search = SearchAgent(seed, draws=draws, **knobs)
        self.rules = rules
        self.decisions = 0
        self.searched = 0
        self.seconds = 0.0

    def reset(self, seed: int | None = None) -> None:
        """Reseed the network and the search."""
        reset = getattr(self.net, "reset", None)
        if callable(reset):
            reset(seed)
        self.search.reset(seed)

    def to(self, device: Any) -> HybridAgent:
        """Run the network (and the belief model) on ``device``; returns self."""
        for part in (self.net, self.search):
            to = getattr(part, "to", None)
            if callable(to):
                to(device)
        return self

    def stats(self) -> dict[str, float]:
        """Decisions answered, the share searched, and milliseconds per decision so far."""
        n = max(self.decisions, 1)
        return {"decisions": self.decisions, "searched": self.searched,
                "search_rate": self.searched / n, "ms_per_decision": 1e3 * self.seconds / n}  # fmt: skip

    def triggered(self, states: np.ndarray) -> np.ndarray:
        """``bool[N]``: the rows the search answers (``trigger_rows`` with this agent's tests)."""
        return trigger_rows(states, self.late, self.after_win, self.melds, self.claims)

    def act_states(
        self, states: np.ndarray, masks: np.ndarray, rules: RuleConfig | None = None
    ) -> np.ndarray:
        """One action per row of ``states`` (``STATE_DTYPE[N]``, not modified) and ``masks``.

        Raises:
            ValueError: as ``SearchAgent.act_states``.
        """
        t0 = time.perf_counter()
        masks = check_states(states, masks)
        rules = self.rules if rules is None else rules
        if rules != self.rules:
            raise ValueError(
                "the hybrid agent was made for other rules than the game's: "
                "make it with HybridAgent(rules=...) for this ruleset"
            )
        rows = np.ascontiguousarray(states)
        obs = np.zeros((len(rows), *self._spec.shape()), dtype=np.uint8)
        seats = np.zeros(len(rows), dtype=np.int64)
        self._spec.encode_batch(rows, seats, False, rules.as_array(), obs)
        out = np.asarray(self.net.act_batch(obs, masks), dtype=np.int64)
        fire = np.flatnonzero(self.triggered(rows))
        if fire.size:
            out[fire] = self.search.act_states(rows[fire], masks[fire], rules, prior=out[fire])
        self.decisions += len(rows)
        self.searched += int(fire.size)
        self.seconds += time.perf_counter() - t0
        return out

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise RuntimeError(
            "HybridAgent searches over the engine state: call act_states(states, masks) "
            "(sichuan_env.agents.eval.evaluate does); it cannot act from observations alone"
        )


def distill_search_after_win(seed: int | None = None) -> HybridAgent:
    """``HybridAgent(seed)``: ``distill`` everywhere, the search at own turns once a seat has won."""
    return HybridAgent(seed)


def distill_search64_after_win(seed: int | None = None) -> HybridAgent:
    """``HybridAgent(seed, samples=64)``: as ``distill-search-after-win``, twice the rollouts."""
    return HybridAgent(seed, samples=64)


def ensemble6_guard_search64_after_win(seed: int | None = None) -> HybridAgent:
    """``HybridAgent(seed, net="ensemble6-guard", samples=64)``: ``strongest``.

    ``ensemble6-guard`` (``strongest-net``: six networks' mean logits under the
    belief model's deal-in guard) everywhere, and at its own turns once a seat has
    won the 64-rollout search, which replaces the network's choice only with a
    candidate one standard error better.
    """
    return HybridAgent(seed, net="ensemble6-guard", samples=64)


def distill_search128_selfaux_after_win(seed: int | None = None) -> HybridAgent:
    """``HybridAgent(seed, samples=128, rollouts="self", rollout_net="rollout-aux")``.

    As ``distill-search64-after-win`` with 128 rollouts per candidate, the
    searching seat played in them by ``rollout-aux`` (a 128-wide clone of
    ``distill``: its own future play, at about 0.7 of ``distill``'s cost per decision).
    """
    return HybridAgent(seed, samples=128, rollouts="self", rollout_net="rollout-aux")


def distill_search128_z15_after_win(seed: int | None = None) -> HybridAgent:
    """``HybridAgent(seed, samples=128, z=1.5)``: the after-win hybrid, stricter and with more rollouts.

    It has 128 rollouts per candidate, and leaves the network's choice only for a
    candidate 1.5 standard errors better. A candidate of equal value clears one
    standard error about one time in six, 1.5 about one in fifteen: the stricter
    bar keeps fewer of the search's noisy replacements, and the rollouts it adds
    keep the real ones in reach (``research/hybrid/README.md``).
    """
    return HybridAgent(seed, samples=128, z=1.5)
