"""Search over the 定缺 declaration (``SearchAgent(setup=True)``, ``reopen_setup``): the
declarations made before the seat are hidden, so every determinization makes them again on
the redrawn hands; the seat's options never change, the answers read nothing hidden (not even
the earlier declarations), are legal void suits, and plain search leaves 定缺 to its style."""

import numpy as np
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.fused import run_styles_at
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.determinize import determinize_at
from sichuan_env.agents.search.rollout import reopen_setup
from test_search_claims import _masks

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.actions import VOID
from sichuan_env.engine.deal import deal_seed
from sichuan_env.engine.invariants import check_invariants
from sichuan_env.engine.state import PH_VOID, STATE_DTYPE
from sichuan_env.engine.step import legal_mask_at
from sichuan_env.kernels.tables import get_tables

T = get_tables()
RULES = RuleConfig()
R = RULES.as_array()
STYLES = np.zeros(4, np.int64)


@njit
def _reopen(states, i, me, obs, mask, rules, flags, waits, dist):
    return reopen_setup(states[i], me, np.zeros(4, np.int64), rules, flags, waits, obs, mask, dist)


def _void_states(n: int, seed: int = 0) -> np.ndarray:
    """``n`` states at 定缺, the seat to act having 0-3 declarations before it."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n, dtype=STATE_DTYPE)
    st = np.zeros(1, dtype=STATE_DTYPE)
    obs, mask = np.zeros((83, 27), np.uint8), np.zeros(88, np.int8)
    for k in range(n):
        deal_seed(st, 0, np.uint64(rng.integers(2**62)), R)
        assert st[0]["phase"] == PH_VOID
        stop = (int(st[0]["dealer"]) + k % 4) % 4
        if stop != int(st[0]["to_act"]):
            run_styles_at(st, 0, STYLES, stop, R, T["FLAGS"], T["WAITS"], obs, mask, T["DIST"])
        assert st[0]["phase"] == PH_VOID and int(st[0]["n_declared"]) == k % 4
        out[k] = st[0]
    return out


def test_a_reopened_declaration_keeps_the_seats_options_and_the_rules():
    states = _void_states(80)
    masks = _masks(states)
    obs, mask = np.zeros((83, 27), np.uint8), np.zeros(88, np.int8)
    redeclared = 0
    for k in range(len(states)):
        row = states[k : k + 1].copy()
        me = int(row[0]["to_act"])
        determinize_at(row, 0, me, np.uint64(k))
        assert _reopen(row, 0, me, obs, mask, R, T["FLAGS"], T["WAITS"], T["DIST"])
        check_invariants(row[0], RULES)
        assert int(row[0]["to_act"]) == me and row[0]["phase"] == PH_VOID
        assert int(row[0]["n_declared"]) == int(states[k]["n_declared"])
        assert int(row[0]["n_log"]) == int(states[k]["n_log"])  # declarations replaced, not added
        after = np.zeros(88, np.int8)
        legal_mask_at(row, 0, R, T["FLAGS"], after)
        assert np.array_equal(after, masks[k])
        declared = row[0]["void"] >= 0
        assert declared.sum() == int(states[k]["n_declared"])
        redeclared += not np.array_equal(row[0]["void"], states[k]["void"])
    assert redeclared > 5  # the earlier declarations really follow the redrawn hands


def test_setup_search_reads_nothing_hidden_and_declares_legally():
    states = _void_states(32, seed=1)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(900 + k))
        v = other[k]["void"]
        v[v >= 0] = (v[v >= 0] + 1) % 3  # the earlier declarations are hidden too
    assert other.tobytes() != states.tobytes()
    masks = _masks(states)
    agent = SearchAgent(seed=2, samples=8, draws=2, z=0.0, setup=True)
    a = agent.act_states(states, masks)
    assert np.array_equal(a, agent.act_states(other, masks))
    assert masks[np.arange(len(a)), a].all() and ((a >= VOID) & (a < VOID + 3)).all()
    plain = SearchAgent(seed=2, samples=8, draws=2, z=0.0)  # 定缺 left to the style
    style = plain.act_states(states, masks)
    assert np.array_equal(style, plain.act_states(other, masks))
    assert (a != style).any()  # the case happened: rollouts move some declarations
    assert make_agent("search-setup").setup
