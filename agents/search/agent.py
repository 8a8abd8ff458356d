"""``SearchAgent``: a rule-based style improved by determinized rollout search (``sichuan_env.agents.search.rollout``).

At each of its own turns (discard / kong / win), and with ``claims=True`` at
each claim answer (hu / pong / kong / pass), and with ``setup=True`` at its
定缺 declaration, the agent scores its
candidate actions by playing the hand to the end from ``samples`` redrawn
versions of what it cannot see (each the best of ``draws`` draws, see
``sichuan_env.agents.search.rollout.determinize_best``), every seat playing the style
(or, given ``rollout_net``, the seats in ``rollout_seats`` playing that network); it
leaves the style's own action only for a candidate whose mean gain is more
than ``z`` standard errors above it. 换三张 picks, and claims and 定缺 unless
asked for, are the style's. All in numba, parallel over the rows of a batch.

The agent reads the engine state (``reads_state = True``): hosts that hold
the states call ``act_states(states, masks, rules)`` (``sichuan_env.agents.eval.evaluate``,
``sichuan_env.train.policy.bc``, ``sichuan_env.play`` and the Gymnasium env's opponents do). It
uses only what its seat may see: every hidden fact of the state (the other
hands, the wall order, others' 过胡 memory) is redrawn before a rollout
(``tests/test_search.py`` checks that a state differing only in hidden facts
gets the same answer). Its randomness is a function of its seed and the
public state, so a result does not depend on how a match is batched or
split over workers. ``act(obs, mask)`` alone cannot search and raises.

Cost: about 20 ms per own-turn decision on one core at the defaults.
"""

from __future__ import annotations

import os

import numba
import numpy as np
from sichuan_env.agents.base import BaseAgent, check_masks, check_seed
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.nn.net_cache import new_cache
from sichuan_env.agents.rule_based.fused import STYLES, style_action
from sichuan_env.agents.search.determinize import BELIEF_COLUMNS
from sichuan_env.agents.search.net_rollout import search_action_net
from sichuan_env.agents.search.rollout import MAX_CANDIDATES, search_action

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.deal import splitmix64
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.tiles import InputTypeError

_T = get_tables()


@njit
def _public_seed(st, seed: np.uint64) -> np.uint64:
    """A seed from the agent's seed and public facts of the decision (not the hidden ones)."""
    h = seed ^ np.uint64(st.n_log) * np.uint64(0x9E3779B97F4A7C15)
    h ^= np.uint64(st.to_act + 1) << np.uint64(56)
    for s in range(4):
        for j in range(st.n_river[s]):
            h, _ = splitmix64(h ^ np.uint64(st.river[s, j] + 1))
        for t in range(27):  # the seat's own hand is its own to see
            if s == st.to_act:
                h ^= np.uint64(st.hands[s, t]) << np.uint64(2 * (t % 30))
    h, r = splitmix64(h)
    return r


@njit(parallel=True)
def search_rows(states, scratch, seed: np.uint64, knobs, env, bel, prior, net, out) -> None:
    """The agent's action for every row of ``states`` (the seat to act in each).

    ``scratch`` is a ``STATE_DTYPE[N, 2]`` work area; ``bel`` ``float64[N, 4, 28]`` the
    belief rows of each row's determinizations, or ``float64[N, 0, 28]`` for none
    (``sichuan_env.agents.search.determinize``); ``prior`` ``int64[N]`` each row's default
    action (-1: the style's): searched decisions keep it unless a candidate beats it,
    the others play it. ``net`` is ``(mode, weights)``: who plays the rollouts besides
    the style (``ROLLOUT_SEATS``: 0 none, 1 the searching seat, 2 every seat) and the
    network's ``numba_policy.export`` weights.
    """
    n_samples, draws, gap, z, claims, setup = knobs
    styles, rules, flags, waits, dist = env
    mode, weights = net
    n = states.shape[0]
    raw_states = states.view(np.uint8).reshape(n, -1)
    for i in numba.prange(n):
        work = scratch[i]
        raw = work.view(np.uint8).reshape(2, -1)
        obs = np.zeros((83, 27), dtype=np.uint8)
        mask = np.zeros(88, dtype=np.int8)
        cands = np.zeros(MAX_CANDIDATES, dtype=np.int64)
        gains = np.zeros(MAX_CANDIDATES, dtype=np.float64)
        vals = np.zeros((max(n_samples, 1), MAX_CANDIDATES), dtype=np.float64)
        r = _public_seed(states[i], seed)
        if mode == 0:
            a = search_action(
                work, raw, raw_states[i], n_samples, draws, gap, z, claims, setup, bel[i],
                prior[i], r, styles, rules, flags, waits, obs, mask, dist, cands, gains, vals,
            )  # fmt: skip
        else:
            seats = np.zeros(4, dtype=np.bool_)
            seats[:] = mode == 2
            seats[states[i].to_act] = True
            a = search_action_net(
                work, raw, raw_states[i], n_samples, draws, gap, z, claims, setup, bel[i],
                prior[i], r, styles, rules, flags, waits, obs, mask, dist, cands, gains, vals,
                seats, weights, new_cache(weights),
            )  # fmt: skip
        if a < 0 and prior[i] >= 0:
            a = prior[i]
        elif a < 0:
            raw[0, :] = raw_states[i]
            a = style_action(work[0], styles[work[0].to_act], rules, flags, obs, mask, dist)
        out[i] = a


class SearchAgent(BaseAgent):
    """A style plus rollout search; see the module docstring.

    Args:
        seed: seeds the search's sampling (None: 0).
        samples: determinized rollouts per candidate (1..4096).
        draws: determinizations drawn per sample, the one with opponents closest to ready kept (1..256).
        gap: candidates: discards within ``gap`` shanten of the best (-1: every legal discard).
        z: standard errors a candidate's gain must clear to replace the style's action (>= 0).
        style: the rule-based style searched over and played in the rollouts by every
            seat that ``rollout_net`` does not play.
        claims: search the answers in claim and robbing windows too (hu, pong, kong, pass;
            passing a win for a bigger one is legal), not only own turns.
        setup: search the 定缺 declaration too (each legal void suit; the declarations made
            before it are hidden and made again in every determinization).
        rules: the ruleset the states are played under (default docs/rules.md §9).
        rollout_net: a network that plays rollout seats instead of the style: a
            ``PolicyNet`` (an MLP over observation v1), a network agent holding one
            (``TorchAgent``), or a checkpoint path or registered network name
            (None: the style plays every seat).
        rollout_seats: the seats ``rollout_net`` plays in the rollouts: ``"self"``
            (the searching seat: its own future play) or ``"all"``.

    Raises:
        ValueError: a knob out of range, a style or ``rollout_seats`` not known, a
            ``rollout_net`` numba cannot play (``numba_policy.export``).
    """

    name = "search"
    obs_version = 1
    reads_state = True

    def __init__(
        self,
        seed: int | None = None,
        samples: int = 32,
        draws: int = 8,
        gap: int = 1,
        z: float = 1.0,
        style: str = "heuristic",
        rules: RuleConfig | None = None,
        claims: bool = False,
        setup: bool = False,
        rollout_net: object = None,
        rollout_seats: str = "self",
    ) -> None:
        for name, v, lo, hi in (
            ("samples", samples, 1, 4096),
            ("draws", draws, 1, 256),
            ("gap", gap, -1, 14),
        ):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InputTypeError(f"{name} must be an integer, got {v!r}")
            if not lo <= v <= hi:
                raise ValueError(f"{name} must be in {lo}..{hi}, got {v}")
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 <= z < float("inf"):
            raise ValueError(f"z must be a finite number >= 0, got {z!r}")
        for name, flag in (("claims", claims), ("setup", setup)):
            if not isinstance(flag, (bool, np.bool_)):
                raise InputTypeError(f"{name} must be True or False, got {flag!r}")
        self.claims, self.setup = bool(claims), bool(setup)
        if style not in STYLES:
            raise ValueError(f"style must be one of {sorted(STYLES)}, got {style!r}")
        rules = RuleConfig() if rules is None else rules
        if not isinstance(rules, RuleConfig):
            raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        self.samples, self.draws, self.gap, self.z, self.style = (
            int(samples),
            int(draws),
            int(gap),
            float(z),
            style,
        )
        self.rules = rules
        self._seed = np.uint64(check_seed(0 if seed is None else seed))
        styles = np.full(4, STYLES[style], dtype=np.int64)
        self._env = (styles, rules.as_array(), _T["FLAGS"], _T["WAITS"], _T["DIST"])
        if rollout_seats not in ROLLOUT_SEATS or rollout_seats == "none":
            raise ValueError(f"rollout_seats must be 'self' or 'all', got {rollout_seats!r}")
        if rollout_net is None and rollout_seats != "self":
            raise ValueError(f"rollout_seats={rollout_seats!r} needs a rollout_net to play them")
        self.rollout_seats = rollout_seats if rollout_net is not None else "none"
        self._net = (ROLLOUT_SEATS.index(self.rollout_seats), rollout_weights(rollout_net))

    def reset(self, seed: int | None = None) -> None:
        """Reseed the search (it keeps no memory between decisions)."""
        if seed is not None:
            self._seed = np.uint64(check_seed(seed))

    def act_states(
        self,
        states: np.ndarray,
        masks: np.ndarray,
        rules: RuleConfig | None = None,
        prior: np.ndarray | None = None,
    ) -> np.ndarray:
        """One action per row: ``states`` ``STATE_DTYPE[N]`` (not modified), ``masks`` their legal actions.

        ``rules``: the ruleset the host plays (checked against the agent's: the
        rollouts must play the same game). ``prior``: ``int[N]`` legal actions to search
        against instead of the style's (a network's choices, see ``HybridAgent``); a row
        the search does not score plays its prior.

        Raises:
            ValueError: states that are not ``STATE_DTYPE[N]`` or masks that do not match them,
                a state whose seat to act has no legal action, other rules than the agent's,
                or a ``prior`` that is not one legal action per row.
        """
        if rules is not None and rules != self.rules:
            raise ValueError(
                "the search agent was made for other rules than the game's: "
                "make it with SearchAgent(rules=...) for this ruleset"
            )
        masks = check_states(states, masks)
        rows = np.ascontiguousarray(states)
        if prior is None:
            prior = np.full(len(rows), -1, dtype=np.int64)
        else:
            prior = check_prior(prior, masks)
        out = np.empty(len(rows), dtype=np.int64)
        knobs = (self.samples, self.draws, self.gap, self.z, self.claims, self.setup)
        scratch = np.zeros((len(rows), 2), dtype=STATE_DTYPE)
        bel = self._beliefs(rows)
        search_rows(rows, scratch, self._seed, knobs, self._env, bel, prior, self._net, out)
        bad = (out < 0) | (out >= masks.shape[1])
        bad[~bad] = masks[np.flatnonzero(~bad), out[~bad]] == 0
        if bad.any():
            raise ValueError(f"states row {int(np.flatnonzero(bad)[0])} does not match its mask")
        return out

    def _beliefs(self, states: np.ndarray) -> np.ndarray:
        """Belief rows for each state's determinizations: none (``float64[N, 0, 28]``)."""
        return np.zeros((len(states), 0, BELIEF_COLUMNS), dtype=np.float64)

    def _act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise RuntimeError(
            "SearchAgent searches over the engine state: call act_states(states, masks) "
            "(sichuan_env.agents.eval.evaluate does); it cannot act from observations alone"
        )


ROLLOUT_SEATS = ("none", "self", "all")
"""Who plays a ``SearchAgent``'s rollouts besides the style (``search_rows``' mode codes)."""


def rollout_weights(net: object) -> tuple:
    """``numba_policy.export``'s weights of a rollout network (its ``no_weights`` for None).

    ``net``: a ``PolicyNet``, an agent holding one in ``.net`` (``TorchAgent``), a
    shipped network's name or a ``.pt`` path, or a registered agent's name.

    Raises:
        InputTypeError: something that holds no policy network (a ``ValueError``).
        ValueError: a spec that names no network, or one numba cannot play.
    """
    if net is None:
        return no_weights()
    from sichuan_env.agents.nn.numba_policy import export  # torch: only for a network
    from sichuan_env.agents.nn.policy import PolicyNet

    if isinstance(net, (str, os.PathLike)):
        if not str(net):
            raise ValueError("rollout_net is an empty name")
        from sichuan_env.agents.checkpoint import resolve
        from sichuan_env.agents.nn.torch_agent import load_network
        from sichuan_env.agents.registry import make_agent

        try:
            path = resolve(net)  # a shipped network's name or a .pt path
        except ValueError:
            net = make_agent(str(net))  # a registered agent that holds a network
        else:
            net = load_network(path)[0]
    for _ in range(4):  # an agent that holds a network agent that holds the network
        if isinstance(net, PolicyNet) or not hasattr(net, "net"):
            break
        net = net.net
    if not isinstance(net, PolicyNet):
        raise InputTypeError(
            "rollout_net must be a policy network: a PolicyNet, a network agent (TorchAgent), "
            f"a shipped network's name or a .pt path; got {type(net).__name__}"
        )
    return export(net)


def check_states(states: object, masks: object) -> np.ndarray:
    """Check ``states`` (``STATE_DTYPE[N]``) and ``masks`` (one row each); returns the masks."""
    if not isinstance(states, np.ndarray) or states.dtype != STATE_DTYPE or states.ndim != 1:
        raise InputTypeError("states must be a STATE_DTYPE[N] array (the engine's hand records)")
    checked = check_masks(masks, batch=True)
    if len(checked) != len(states):
        raise ValueError(f"masks has {len(checked)} rows for {len(states)} states")
    return checked


def check_prior(prior: object, masks: np.ndarray) -> np.ndarray:
    """``prior`` as ``int64[N]``: one legal action of each row of ``masks`` (else a clear error)."""
    if not isinstance(prior, np.ndarray) or prior.dtype.kind not in "iu" or prior.ndim != 1:
        raise InputTypeError("prior must be an integer array, one action per row")
    if len(prior) != len(masks):
        raise ValueError(f"prior has {len(prior)} actions for {len(masks)} rows")
    prior = prior.astype(np.int64)
    bad = (prior < 0) | (prior >= masks.shape[1])
    bad[~bad] = masks[np.flatnonzero(~bad), prior[~bad]] == 0
    if bad.any():
        raise ValueError(f"prior row {int(np.flatnonzero(bad)[0])} is not a legal action")
    return prior


def search_claims(seed: int | None = None) -> SearchAgent:
    """``SearchAgent(seed, claims=True)``: own turns and claim answers searched (the ``search-claims`` agent)."""
    return SearchAgent(seed, claims=True)


def search_setup(seed: int | None = None) -> SearchAgent:
    """``SearchAgent(seed, setup=True)``: own turns and the 定缺 declaration searched (``search-setup``)."""
    return SearchAgent(seed, setup=True)
