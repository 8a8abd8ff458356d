"""Belief-resampled determinizations (``sichuan_env.agents.search.determinize``) and the
``search-belief`` agent: the uniform-deal probabilities are exact, resampling keeps every
visible fact, follows the beliefs (true beliefs bring the deals closer to the truth), reads
nothing hidden, and the agent answers legally and reproducibly."""

import math

import numpy as np
import pytest
import torch
from sichuan_env.agents.belief.model import BeliefConfig, BeliefModel, BeliefNet
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.belief_agent import BeliefSearchAgent
from sichuan_env.agents.search.determinize import (
    closest_to_ready,
    determinize_at,
    determinize_best,
    holding_log_ratios,
    no_belief,
)
from test_search import _public, _turn_states, _unseen

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.invariants import check_invariants
from sichuan_env.engine.step import legal_mask_at
from sichuan_env.kernels.tables import get_tables

T = get_tables()
RULES = RuleConfig()
R = RULES.as_array()


@njit
def _best_at(states, i, me, rng, draws, bel, rules, dist):
    return determinize_best(states[i], me, rng, draws, bel, rules, dist)


@njit
def _ready_at(states, i, me, rng, draws, rules, dist):
    return closest_to_ready(states[i], me, rng, draws, rules, dist)


@njit
def _ratios_at(states, i, me, bel, l1, l0):
    holding_log_ratios(states[i], me, bel, l1, l0)


def _truth_beliefs(st: np.ndarray, p: float = 0.95) -> np.ndarray:
    """Beliefs that know the true holdings (``p`` for a held tile, ``1 - p`` otherwise)."""
    bel = np.zeros((4, 28))
    bel[:, :27] = np.where(st["hands"] > 0, p, 1 - p)
    bel[:, 27] = 0.5
    return bel


def test_uniform_holding_probabilities_are_exact():
    """``q`` inside the log ratios equals the frequency of holdings over many uniform deals."""
    states = _turn_states(40, seed=5)
    k = next(i for i in range(len(states)) if states[i]["n_river"].sum() == 0)  # no void evidence
    st = states[k : k + 1]
    me = int(st[0]["to_act"])
    bel = np.full((4, 28), 0.5)
    l1, l0 = np.zeros((4, 27)), np.zeros((4, 27))
    _ratios_at(st, 0, me, bel, l1, l0)
    q = np.where(l1 != 0, 1.0 / (1.0 + np.exp(l1 - l0)), 0.0)  # p = 1/2: l1 - l0 = log((1-q)/q)
    held = np.zeros((4, 27))
    n = 3000
    for j in range(n):
        row = st.copy()
        determinize_at(row, 0, me, np.uint64(j))
        held += row[0]["hands"] > 0
    freq = held / n
    others = [s for s in range(4) if s != me]
    assert (q[others] > 0).sum() >= 60  # the case happened: most tiles are unseen
    assert np.abs(freq[others] - q[others]).max() < 0.04
    assert not l1[me].any() and not l0[me].any()


def test_resampling_keeps_the_public_state():
    states = _turn_states(120, seed=2)
    changed = 0
    for k in range(len(states)):
        row = states[k : k + 1].copy()
        me = int(row[0]["to_act"])
        _best_at(row, 0, me, np.uint64(k), 16, _truth_beliefs(states[k]), R, T["DIST"])
        check_invariants(row[0], RULES)
        assert _public(row[0], me) == _public(states[k], me)
        assert np.array_equal(_unseen(row[0], me), _unseen(states[k], me))
        changed += row.tobytes() != states[k : k + 1].tobytes()
    assert changed > 90


def test_without_beliefs_it_is_the_closest_to_ready_rule():
    states = _turn_states(30, seed=3)
    for k in range(len(states)):
        a, b = states[k : k + 1].copy(), states[k : k + 1].copy()
        me = int(a[0]["to_act"])
        ra = _best_at(a, 0, me, np.uint64(k), 8, no_belief(), R, T["DIST"])
        rb = _ready_at(b, 0, me, np.uint64(k), 8, R, T["DIST"])
        assert ra == rb and a.tobytes() == b.tobytes()


def test_true_beliefs_bring_the_deals_closer_to_the_truth():
    """With beliefs that know the holdings, resampled deals share more tiles with the real hands."""
    states = _turn_states(30, seed=4)
    gain = []
    for k in range(len(states)):
        me = int(states[k]["to_act"])
        others = [s for s in range(4) if s != me and not states[k]["won"][s]]
        overlap = {}
        for name, bel, draws in (
            ("uniform", no_belief(), 1),
            ("belief", _truth_beliefs(states[k]), 32),
        ):
            tot = 0
            for j in range(40):
                row = states[k : k + 1].copy()
                _best_at(row, 0, me, np.uint64(j), draws, bel, R, T["DIST"])
                tot += np.minimum(row[0]["hands"][others], states[k]["hands"][others]).sum()
            overlap[name] = tot / 40
        gain.append(overlap["belief"] - overlap["uniform"])
    assert np.mean(gain) > 1.0  # tiles per state, summed over the opponents
    assert np.mean(np.array(gain) > 0) > 0.8


def test_resampling_reads_nothing_hidden():
    """Two states that differ only in hidden facts give the same deal (same beliefs, same rng)."""
    states = _turn_states(20, seed=6)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(77 + k))
    assert other.tobytes() != states.tobytes()
    bel = np.random.default_rng(0).uniform(0.05, 0.95, (4, 28))
    for k in range(len(states)):
        a, b = states[k : k + 1].copy(), other[k : k + 1].copy()
        me = int(a[0]["to_act"])
        _best_at(a, 0, me, np.uint64(k), 12, bel, R, T["DIST"])
        _best_at(b, 0, me, np.uint64(k), 12, bel, R, T["DIST"])
        assert a.tobytes() == b.tobytes()


def test_belief_search_agent_is_legal_reproducible_and_public():
    states = _turn_states(12, seed=7)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(500 + k))
    masks = np.zeros((len(states), 88), np.int8)
    for k in range(len(states)):
        legal_mask_at(states, k, R, T["FLAGS"], masks[k])
    agent = BeliefSearchAgent(seed=1, samples=6, draws=8, gap=-1, z=0.0)
    bel = agent._beliefs(states)
    seats = states["to_act"]
    assert not bel[np.arange(len(states)), seats].any()  # no belief about oneself
    opp = np.ones((len(states), 4), bool)
    opp[np.arange(len(states)), seats] = False
    assert ((bel[opp] > 0) & (bel[opp] < 1)).all()
    a = agent.act_states(states, masks)
    assert masks[np.arange(len(a)), a].all()
    assert np.array_equal(agent.act_states(other, masks), a)  # hidden facts change nothing
    assert np.array_equal(agent.act_states(states[::-1].copy(), masks[::-1].copy()), a[::-1])
    assert make_agent("search-belief").name == "search-belief"


def test_belief_search_agent_arguments():
    with pytest.raises(ValueError, match="draws"):
        BeliefSearchAgent(draws=1)
    torch.manual_seed(0)
    seq = BeliefModel(BeliefNet(BeliefConfig(seq_hidden=8)))
    with pytest.raises(ValueError, match="event tokens"):
        BeliefSearchAgent(belief=seq)
    with pytest.raises(ValueError):
        BeliefSearchAgent(belief="no-such-belief")
    assert math.isclose(BeliefSearchAgent(samples=4).z, 1.0)
