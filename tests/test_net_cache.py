"""Network rollouts at a few heuristic decisions' cost (``net_cache``, ``decide_aux``) and search rollouts
played by a network (``SearchAgent(rollout_net=...)``, ``HybridAgent(rollouts=...)``).

The fast path must give the slow path's answers: the fused heuristic-plus-aux pass is exactly the
two kernels it replaces, the incremental first layer is the full sum (up to rounding) whatever the
observations, and the cached network plays PyTorch's moves.
"""

from __future__ import annotations

import numpy as np
import pytest
from sichuan_env.agents.nn.features import AUX_SIZE, _aux_one, decide_aux
from sichuan_env.agents.nn.net_cache import (
    OBS_ENTRIES,
    PAD_ROWS,
    _first_sum,
    cached_action,
    forget,
    new_cache,
)
from sichuan_env.agents.nn.numba_policy import export, net_action, scratch
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.agents.rule_based.heuristic import decide
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.hybrid import HybridAgent
from test_search import _turn_states
from test_search_claims import _masks

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_CLAIM, PH_OVER, PH_TURN
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables

T = get_tables()
KNOBS = {"samples": 4, "draws": 2}


def _played_states(steps: int = 60, envs: int = 48, seed: int = 0, explore: float = 0.2):
    """Every state of ``envs`` hands played ``steps`` steps (heuristic, a share of random legal moves)."""
    from sichuan_env.agents.nn.features import heuristic_choices

    rng = np.random.default_rng(seed)
    venv = VectorEnv(envs, seed=seed)
    obs, mask, _ = venv.reset()
    out = []
    for _ in range(steps):
        out.append(venv.states.copy())
        act = heuristic_choices(obs[:, :83], mask)
        wild = rng.random(envs) < explore
        for i in np.flatnonzero(wild):
            act[i] = rng.choice(np.flatnonzero(mask[i]))
        obs, mask, *_ = venv.step(act)
    return np.stack(out, 1).reshape(-1), venv.rules.as_array()  # hand by hand, in play order


@njit
def _fused_vs_apart(states, rules, flags, dist, out):
    obs = np.zeros((83, 27), np.uint8)
    mask = np.zeros(88, np.int8)
    a1 = np.zeros(AUX_SIZE, np.float32)
    a2 = np.zeros(AUX_SIZE, np.float32)
    for i in range(states.shape[0]):
        st = states[i]
        if st.phase == PH_OVER:
            out[i] = -1
            continue
        legal_mask(st, rules, flags, mask)
        encode_v1(st, st.to_act, False, rules, obs)
        a1[:] = 0.0
        a2[:] = 0.0
        d1 = decide(obs, mask, dist)
        _aux_one(obs, dist, a1)
        d2 = decide_aux(obs, mask, dist, a2)
        out[i] = 1 if d1 == d2 and np.all(a1 == a2) else 0


def test_the_fused_pass_is_the_heuristic_and_the_aux_features_exactly():
    states, rules = _played_states()
    out = np.zeros(len(states), np.int64)
    _fused_vs_apart(states, rules, T["FLAGS"], T["DIST"], out)
    live = out >= 0
    assert live.sum() > 2000
    assert (states["phase"][live] == PH_TURN).sum() > 1000  # own turns: the shared table
    assert (states["phase"][live] == PH_CLAIM).sum() > 50  # claim windows: apart
    assert out[live].all()


@njit
def _both(states, w, rules, flags, dist, cache, bufs, got, want, gap):
    obs, mask, aux, h0, h1, lg = bufs
    forget(cache)
    for i in range(states.shape[0]):
        st = states[i]
        if st.phase == PH_OVER:
            got[i] = want[i] = -1
            continue
        got[i] = cached_action(st, w, rules, flags, dist, cache)
        cached = cache[8].copy()
        want[i] = net_action(st, w, rules, flags, obs, mask, dist, aux, h0, h1, lg)
        d = 0.0
        for a in range(88):
            if mask[a]:
                d = max(d, abs(cached[a] - lg[a]))
        gap[i] = d


@pytest.mark.parametrize("name", ["distill", "rollout-small"])
def test_the_cached_network_plays_the_uncached_ones_moves(name):
    agent = TorchAgent.load(name)
    w = export(agent.net)
    states, rules = _played_states(steps=50, envs=32, seed=1)
    got, want = np.zeros(len(states), np.int64), np.zeros(len(states), np.int64)
    gap = np.zeros(len(states))
    _both(states, w, rules, T["FLAGS"], T["DIST"], new_cache(w), scratch(w), got, want, gap)
    live = want >= 0
    assert live.sum() > 1000
    assert gap.max() < 1e-3  # the same logits up to float32 rounding
    assert (got[live] == want[live]).mean() > 0.999


def test_the_cached_network_plays_pytorchs_moves():
    agent = TorchAgent.load("distill")
    w = export(agent.net)
    states, rules = _played_states(steps=40, envs=24, seed=2)
    live = np.flatnonzero(states["phase"] != PH_OVER)
    got, want = np.zeros(len(states), np.int64), np.zeros(len(states), np.int64)
    _both(states, w, rules, T["FLAGS"], T["DIST"], new_cache(w), scratch(w), got, want,
          np.zeros(len(states)))  # fmt: skip
    obs, masks = _observe(states[live])
    torch_moves = agent.act_batch(obs, masks)
    assert (got[live] == torch_moves).mean() > 0.995  # float32 sums in another order


@njit
def _sum_full(c, first):
    acc = np.zeros(first.shape[1], np.float32)
    flat = c.reshape(PAD_ROWS * 27)
    for j in range(OBS_ENTRIES):
        if flat[j]:
            acc += first[j]
    return acc


def test_the_incremental_first_layer_is_the_full_sum_whatever_the_entries():
    rng = np.random.default_rng(3)
    first = rng.normal(size=(OBS_ENTRIES + AUX_SIZE, 16)).astype(np.float32)
    seen = np.zeros((PAD_ROWS, 27), np.uint8)
    acc = np.zeros(16, np.float32)
    cur = np.zeros((PAD_ROWS, 27), np.uint8)
    cur[:83] = rng.random((83, 27)) < 0.07
    full = _first_sum(cur, seen, acc, first, False)
    assert full == int(cur.astype(bool).sum()) and np.allclose(
        acc, _sum_full(cur, first), atol=1e-4
    )
    assert np.array_equal(seen, cur)  # the cache now holds the observation it summed
    small = 0
    for step in range(200):
        nxt = cur.copy()
        flip = rng.integers(0, OBS_ENTRIES, size=rng.integers(0, 12))
        flat = nxt.reshape(-1)
        flat[flip] = np.where(flat[flip] != 0, 0, rng.integers(1, 4, size=len(flip)))  # not only 1s
        if step % 50 == 49:
            flat[:OBS_ENTRIES] = rng.integers(0, 3, size=OBS_ENTRIES) * (
                rng.random(OBS_ENTRIES) < 0.05
            )
        touched = _first_sum(nxt, seen, acc, first, True)
        changed = int(((nxt != 0) != (cur != 0)).sum())
        assert touched == changed  # only the entries that turned on or off
        small += touched < full
        assert np.allclose(acc, _sum_full(nxt, first), atol=1e-3)
        cur = nxt
    assert small > 150  # the update was cheaper than a full sum most of the time


def _states_masks(n: int, seed: int):
    states = _turn_states(n, seed=seed)
    return states, _masks(states)


def test_search_rollouts_played_by_a_network_are_legal_reproducible_and_differ_from_the_styles():
    states, masks = _states_masks(16, 7)
    style = SearchAgent(seed=3, z=0.0, **KNOBS).act_states(states, masks)
    net = SearchAgent(seed=3, z=0.0, rollout_net="distill", rollout_seats="all", **KNOBS)
    a = net.act_states(states, masks)
    assert masks[np.arange(len(a)), a].all()
    assert np.array_equal(a, net.act_states(states, masks))  # reproducible
    halves = np.concatenate(
        [net.act_states(states[:7], masks[:7]), net.act_states(states[7:], masks[7:])]
    )
    assert np.array_equal(a, halves)  # independent of the batching
    mine = SearchAgent(seed=3, z=0.0, rollout_net="distill", rollout_seats="self", **KNOBS)
    b = mine.act_states(states, masks)
    assert (a != style).any() or (b != style).any()  # another rollout policy, other values
    assert net.rollout_seats == "all" and mine.rollout_seats == "self"
    assert SearchAgent(seed=3, **KNOBS).rollout_seats == "none"


def test_network_rollouts_refuse_what_numba_cannot_play():
    with pytest.raises(ValueError, match="rollout_seats"):
        SearchAgent(rollout_net="distill", rollout_seats="none")
    with pytest.raises(ValueError, match="rollout_net must be a policy network"):
        SearchAgent(rollout_net="heuristic")
    conv = PolicyNet(PolicyConfig(arch="conv", hidden=16))
    with pytest.raises(ValueError, match="only MLP networks"):
        SearchAgent(rollout_net=conv)
    with pytest.raises(ValueError, match="rollouts must be"):
        HybridAgent(rollouts="network")
    with pytest.raises(ValueError, match="rollout_net needs network rollouts"):
        HybridAgent(rollout_net="rollout-aux")
    with pytest.raises(ValueError, match="needs a rollout_net"):
        SearchAgent(rollout_seats="all")
    with pytest.raises(TypeError, match="rollout_net must be a policy network"):
        SearchAgent(rollout_net=3)


def test_the_search_with_network_rollouts_loads_without_torch():
    import subprocess
    import sys

    code = ("import sys, sichuan_env.agents.search.agent, sichuan_env.agents.search.hybrid; "
            "assert 'torch' not in sys.modules, 'torch imported'")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_the_hybrid_searches_with_its_own_network_in_the_rollouts():
    states, masks = _states_masks(12, 8)
    hybrid = HybridAgent(seed=1, late=55, z=0.0, rollouts="self", **KNOBS)
    got = hybrid.act_states(states, masks)
    prior = hybrid.net.act_batch(*_observe(states))
    want = SearchAgent(seed=1, z=0.0, rollout_net=hybrid.net, rollout_seats="self",
                       **KNOBS).act_states(states, masks, prior=prior)  # fmt: skip
    assert np.array_equal(got, want) and hybrid.stats()["search_rate"] == 1.0
    assert hybrid.rollouts == "self" and hybrid.search.rollout_seats == "self"
    assert hybrid.search._net[1][0].shape[1] == 256  # distill's width: its own network
    small = HybridAgent(seed=1, rollouts="self", rollout_net="rollout-aux", **KNOBS)
    assert small.search._net[1][0].shape[1] == 128  # another network plays the rollouts
    assert small.net.net.config.hidden == 256  # and the hybrid still plays distill


def _observe(states: np.ndarray):
    """v1 observations (public rows) and legal masks of the seat to act in each state."""
    from sichuan_env import RuleConfig
    from sichuan_env.encoding.registry import get as get_obs_version

    states = np.ascontiguousarray(states)
    spec = get_obs_version(1)
    obs = np.zeros((len(states), *spec.shape()), np.uint8)
    spec.encode_batch(states, np.zeros(len(states), np.int64), False, RuleConfig().as_array(), obs)
    return obs[:, :83], _masks(states)


def test_the_registered_hybrid_with_network_rollouts_is_what_its_name_says():
    from sichuan_env.agents.registry import make_agent

    agent = make_agent("distill-search128-selfaux-after-win", 0)
    assert isinstance(agent, HybridAgent) and agent.after_win and agent.late == -1
    assert agent.search.samples == 128 and agent.rollouts == "self"
    assert agent.search._net[0] == 1 and agent.search._net[1][0].shape[1] == 128  # rollout-aux
    assert agent.net.name == "distill"
