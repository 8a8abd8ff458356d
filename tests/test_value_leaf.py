"""The value-leaf search: look-ahead to the next draw, then ``V`` (issue #40).

A search with a value model of random weights is still a legal, deterministic
player; it reads nothing hidden; its leaves are the states right after the next
draw (or the end of the hand); its choice is the best mean value; and the
registered hybrids play a duplicate match.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.table_net import TableValueConfig, TableValueNet
from sichuan_env.agents.eval.table_value import TableModel
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.search.determinize import determinize_at
from sichuan_env.agents.search.hybrid import HybridAgent
from sichuan_env.agents.search.value_leaf import MAX_LEAF_CANDIDATES, ValueLeafSearch
from test_search import _turn_states
from test_search_claims import _masks, _window_states

from sichuan_env import RuleConfig
from sichuan_env.engine.state import PH_OVER, PH_TURN


def _random_model(seed: int = 0, scale: float = 1.0) -> TableModel:
    torch.manual_seed(seed)
    net = TableValueNet(TableValueConfig(seat=16, head=16, embed=4))
    with torch.no_grad():
        net.out.weight.mul_(scale)
    shipped = TableModel.load("table_value")
    doc = dict(shipped.doc)
    return TableModel(net, doc)


def _hidden_twin(states: np.ndarray) -> np.ndarray:
    """``states`` with everything the acting seat cannot see drawn again (and changed)."""
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(900 + k))
    assert other.tobytes() != states.tobytes()
    return other


def test_a_random_value_model_still_plays_legally_and_deterministically():
    rules = RuleConfig()
    lineup = ["vl", "heuristic", "heuristic", "heuristic"]
    runs = []
    for _ in range(2):
        agent = ValueLeafSearch(seed=3, value_model=_random_model(), samples=3, draws=2)
        agents = {"vl": agent, "heuristic": make_agent("heuristic", 0)}
        recs = play_duplicate(lineup, 2, rules, seed=11, agents=agents, progress=False)
        runs.append([r["actions"] for _, _, r in recs])
        assert all(r["result"]["scores"] is not None for _, _, r in recs)
    assert runs[0] == runs[1]  # replays checked every action's legality on the way


def test_leaves_stand_right_after_a_draw_or_at_the_end():
    states = _turn_states(12, seed=5)
    agent = ValueLeafSearch(seed=1, value_model=_random_model(), samples=2, draws=1)
    seen = {"leaves": 0}
    real = agent.leaf_values

    def spy(leaves: np.ndarray, me: np.ndarray) -> np.ndarray:
        over = leaves["phase"] == PH_OVER
        after_draw = (
            (leaves["phase"] == PH_TURN) & (leaves["drawn"] == 1) & (leaves["drawn_tile"] >= 0)
        )
        assert (over | after_draw).all()
        seen["leaves"] += len(leaves)
        return real(leaves, me)

    agent.leaf_values = spy  # type: ignore[method-assign]
    agent.act_states(states, _masks(states))
    assert seen["leaves"] >= 2 * 2 * 12 // 2  # most rows had several candidates, all scored


def test_depth_plays_more_draws_before_the_leaf():
    """depth d: the leaves stand right after a draw, d draws further down the wall than d = 0's."""
    states = _turn_states(12, seed=5)
    drawn: dict[int, list[np.ndarray]] = {0: [], 2: []}
    for depth, out in drawn.items():
        agent = ValueLeafSearch(seed=1, value_model=_random_model(), samples=2, draws=1,
                                depth=depth)  # fmt: skip
        real = agent.leaf_values

        def spy(leaves, me, real=real, out=out):
            after_draw = (leaves["phase"] == PH_TURN) & (leaves["drawn"] == 1)
            assert (after_draw | (leaves["phase"] == PH_OVER)).all()
            taken = leaves["head"].astype(int) + (107 - leaves["tail"].astype(int))
            out.append(np.where(leaves["phase"] == PH_OVER, -1, taken))
            return real(leaves, me)

        agent.leaf_values = spy  # type: ignore[method-assign]
        agent.act_states(states, _masks(states))
    d0, d2 = (np.concatenate(drawn[d]) for d in (0, 2))
    assert len(d0) == len(d2) > 20  # the same leaves (determinizations, candidates), deeper
    live = (d0 >= 0) & (d2 >= 0)
    assert live.sum() > 20 and (d2[live] >= d0[live] + 2).all()


def test_the_choice_is_the_best_mean_and_a_high_bar_keeps_the_prior():
    states = _turn_states(16, seed=8)
    masks = _masks(states)
    model = _random_model(seed=2, scale=50.0)  # values that differ a lot between leaves
    eager = ValueLeafSearch(seed=4, value_model=model, samples=4, draws=1, z=0.0)
    shy = ValueLeafSearch(seed=4, value_model=model, samples=4, draws=1, z=1e9)
    prior = shy.act_states(states, masks)  # z huge: the style's own actions
    got = eager.act_states(states, masks)
    assert masks[np.arange(16), got].all()
    assert (got != prior).any()  # the values did move the choice somewhere
    given = np.array([int(np.flatnonzero(m)[-1]) for m in masks])
    assert np.array_equal(shy.act_states(states, masks, prior=given), given)


def test_the_search_reads_nothing_hidden_and_does_not_depend_on_batching():
    states = _turn_states(10, seed=6)
    other = _hidden_twin(states)
    masks = _masks(states)
    agent = ValueLeafSearch(seed=5, value_model=_random_model(seed=3, scale=20.0), samples=3)
    a = agent.act_states(states, masks)
    assert np.array_equal(agent.act_states(other, masks), a)
    assert np.array_equal(agent.act_states(states[::-1].copy(), masks[::-1].copy()), a[::-1])


def test_belief_determinizations_read_only_the_public_observation():
    states = _turn_states(10, seed=6)
    other = _hidden_twin(states)
    masks = _masks(states)
    model = _random_model(seed=3, scale=20.0)
    agent = ValueLeafSearch(seed=5, value_model=model, samples=3, draws=4, belief="belief")
    bel = agent._beliefs(states)
    me = states["to_act"].astype(np.int64)
    assert bel.shape == (10, 4, 28)
    assert not bel[np.arange(10), me].any() and bel.sum(axis=(1, 2)).min() > 0
    assert np.array_equal(agent._beliefs(other), bel)
    a = agent.act_states(states, masks)
    assert masks[np.arange(10), a].all()
    assert np.array_equal(agent.act_states(other, masks), a)
    uniform = ValueLeafSearch(seed=5, value_model=model, samples=3, draws=4)
    assert uniform._beliefs(states).shape == (10, 0, 28)
    assert not np.array_equal(uniform.act_states(states, masks), a)  # the beliefs were used


def test_claim_windows_are_answered_by_the_prior_or_the_style():
    windows = _window_states(6, seed=2)
    masks = _masks(windows)
    agent = ValueLeafSearch(seed=0, value_model=_random_model(), samples=2)
    got = agent.act_states(windows, masks)
    assert masks[np.arange(len(got)), got].all()
    legal_last = np.array([int(np.flatnonzero(m)[-1]) for m in masks])
    own = windows["phase"] == PH_TURN
    assert (~own).any()
    assert np.array_equal(
        agent.act_states(windows, masks, prior=legal_last)[~own], legal_last[~own]
    )


def test_arguments_are_checked():
    model = _random_model()
    for bad, match in (({"samples": 0}, "samples"), ({"draws": 300}, "draws"),
                       ({"gap": -2}, "gap"), ({"z": -1.0}, "z"), ({"style": "nope"}, "style"),
                       ({"depth": 9}, "depth"), ({"depth": -1}, "depth")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            ValueLeafSearch(value_model=model, **bad)
    with pytest.raises(TypeError, match="value_model"):
        ValueLeafSearch(value_model=3)
    with pytest.raises(ValueError, match="draws must be >= 2"):
        ValueLeafSearch(value_model=model, belief="belief", draws=1)
    with pytest.raises(TypeError, match="belief"):
        ValueLeafSearch(value_model=model, belief=3)
    with pytest.raises(ValueError, match="other rules"):
        ValueLeafSearch(value_model=model, rules=RuleConfig(end_on_first_win=True))
    states = _turn_states(2, seed=1)
    with pytest.raises(RuntimeError, match="act_states"):
        ValueLeafSearch(value_model=model).act(np.zeros((83, 27), np.uint8), _masks(states)[0])
    assert MAX_LEAF_CANDIDATES >= 14


def test_the_registered_value_leaf_hybrids_play_a_duplicate_match():
    always = make_agent("distill-valueleaf8", 0)
    won = make_agent("distill-valueleaf8-after-win", 0)
    assert isinstance(always, HybridAgent) and always.late == 55 and not always.after_win
    assert isinstance(won, HybridAgent) and won.after_win and won.late == -1
    assert isinstance(always.search, ValueLeafSearch) and always.search.samples == 8
    lineup = ["distill-valueleaf8", "heuristic", "heuristic", "heuristic"]
    recs = play_duplicate(lineup, 1, RuleConfig(), seed=3, progress=False)
    assert len(recs) == 4
    assert always.stats()["decisions"] == 0  # the match made its own agent
    agent = make_agent("distill-valueleaf8", 0)
    recs = play_duplicate(lineup, 1, RuleConfig(), seed=3, progress=False,
                          agents={lineup[0]: agent, "heuristic": make_agent("heuristic", 0)})  # fmt: skip
    assert agent.stats()["searched"] > 0
