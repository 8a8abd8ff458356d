"""The hybrid player: the network everywhere, the search where a public-facts trigger fires."""

from __future__ import annotations

import numpy as np
import pytest
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.nn.torch_agent import load_distill
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.determinize import determinize_at
from sichuan_env.agents.search.hybrid import HybridAgent, trigger_rows
from test_search import _turn_states
from test_search_claims import _masks, _window_states

from sichuan_env import RuleConfig
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.state import PH_CLAIM, PH_TURN

KNOBS = {"samples": 6, "draws": 2}


def _left(states: np.ndarray) -> np.ndarray:
    return states["tail"].astype(np.int64) - states["head"] + 1


def _net_answers(states: np.ndarray, masks: np.ndarray) -> np.ndarray:
    net = load_distill(0)
    spec = get_obs_version(net.obs_version)
    obs = np.zeros((len(states), *spec.shape()), np.uint8)
    spec.encode_batch(states, np.zeros(len(states), np.int64), False, RuleConfig().as_array(), obs)
    return net.act_batch(obs, masks)


def test_the_trigger_reads_the_wall_the_wins_and_the_melds_at_own_turns():
    states = _turn_states(120, seed=5)
    left = _left(states)
    late = int(np.median(left))
    fire = trigger_rows(states, late=late)
    assert fire.any() and not fire.all()  # both sides of the test happened
    assert np.array_equal(fire, left <= late)
    assert not trigger_rows(states).any()  # every test off
    assert trigger_rows(states, late=55).all()
    won = states.copy()
    won["won"][:3, 2] = 1
    after = trigger_rows(won, after_win=True)
    assert after[:3].all() and not after.all()
    assert np.array_equal(after, won["won"].any(axis=1))
    melds = trigger_rows(states, melds=1)
    me = states["to_act"].astype(np.int64)
    other = states["n_melds"].copy()
    other[np.arange(len(states)), me] = 0
    assert melds.any() and np.array_equal(melds, other.max(axis=1) >= 1)
    windows = _window_states(8, seed=2)
    assert (windows["phase"] == PH_CLAIM).any()
    assert not trigger_rows(windows, late=55).any()  # claim answers: the network's
    assert trigger_rows(windows, late=55, claims=True)[windows["phase"] != PH_TURN].all()


def test_never_triggered_it_is_the_network_and_always_triggered_the_search_from_its_choice():
    states = _turn_states(24, seed=3)
    masks = _masks(states)
    net = _net_answers(states, masks)
    never = HybridAgent(seed=1, late=-1, after_win=False, **KNOBS)
    assert np.array_equal(never.act_states(states, masks), net)
    assert never.stats()["searched"] == 0 and never.stats()["decisions"] == 24
    always = HybridAgent(seed=1, late=55, z=0.0, **KNOBS)
    got = always.act_states(states, masks)
    want = SearchAgent(seed=1, z=0.0, **KNOBS).act_states(states, masks, prior=net)
    assert np.array_equal(got, want)
    assert always.stats()["search_rate"] == 1.0
    assert masks[np.arange(len(got)), got].all()
    assert (got != net).any()  # the search did overrule the network somewhere


def test_a_high_bar_keeps_the_networks_choice():
    states = _turn_states(16, seed=4)
    masks = _masks(states)
    shy = HybridAgent(seed=2, late=55, z=1e6, **KNOBS)
    net = _net_answers(states, masks)
    assert np.array_equal(shy.act_states(states, masks), net)
    style = SearchAgent(seed=2, z=1e6, **KNOBS).act_states(states, masks)  # the style's own
    assert (style != net).any()  # so the prior, not the style, was what the search kept


def test_the_hybrid_reads_nothing_hidden_and_does_not_depend_on_batching():
    states = _turn_states(20, seed=6)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(500 + k))
    assert other.tobytes() != states.tobytes()
    masks = _masks(states)
    agent = HybridAgent(seed=3, late=30, after_win=False, **KNOBS)
    a = agent.act_states(states, masks)
    assert 0 < agent.stats()["searched"] < 20
    assert np.array_equal(agent.act_states(other, masks), a)
    assert np.array_equal(agent.act_states(states[::-1].copy(), masks[::-1].copy()), a[::-1])


def test_prior_and_arguments_are_checked():
    states = _turn_states(4, seed=7)
    masks = _masks(states)
    search = SearchAgent(seed=0, **KNOBS)
    illegal = np.array([int(np.flatnonzero(m == 0)[0]) for m in masks])
    with pytest.raises(ValueError, match="prior row 0 is not a legal action"):
        search.act_states(states, masks, prior=illegal)
    with pytest.raises(ValueError, match="prior has 3 actions for 4 rows"):
        search.act_states(states, masks, prior=np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="integer array"):
        search.act_states(states, masks, prior=np.zeros(4))
    for bad, match in (({"late": 56}, "late"), ({"melds": -1}, "melds"),
                       ({"after_win": 1}, "after_win"), ({"net": "search"}, "observations")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            HybridAgent(**bad)
    with pytest.raises(RuntimeError, match="act_states"):
        HybridAgent(late=-1).act(np.zeros(get_obs_version(1).shape(), np.uint8), masks[0])
    with pytest.raises(ValueError, match="other rules"):
        HybridAgent(late=-1).act_states(states, masks, RuleConfig(end_on_first_win=True))


def test_the_registered_hybrid_plays_a_duplicate_match():
    agent = make_agent("distill-search-after-win", 0)
    assert isinstance(agent, HybridAgent) and agent.after_win and agent.late == -1
    more = make_agent("distill-search64-after-win", 0)  # the strongest alias' target
    assert isinstance(more, HybridAgent) and more.search.samples == 2 * agent.search.samples == 64
    strict = make_agent("distill-search128-z1_5-after-win", 0)
    assert isinstance(strict, HybridAgent) and strict.after_win and strict.late == -1
    assert strict.search.samples == 128 and strict.search.z == 1.5 and strict.rollouts == "style"
    assert agent.search.z == 1.0 and strict.net.name == "distill"
    lineup = ["distill-search-after-win", "heuristic", "heuristic", "heuristic"]
    records = play_duplicate(lineup, 2, RuleConfig(), progress=False, agents={
        "distill-search-after-win": agent, "heuristic": make_agent("heuristic")})  # fmt: skip
    assert len(records) == 8  # 2 walls x 4 rotations
    assert all(sum(r["result"]["scores"]) == 0 for _, _, r in records)
    stats = agent.stats()
    assert stats["decisions"] > stats["searched"] > 0
