"""Search over claim answers (``SearchAgent(claims=True)``, ``reopen_window``): a determinized
claim window is rebuilt from the redrawn hands, the seat's own options never change, the answers
read nothing hidden, are legal, and do leave the heuristic's answer where rollouts say so."""

import numpy as np
from sichuan_env.agents.rule_based.fused import run_styles_at
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.determinize import determinize_at
from sichuan_env.agents.search.rollout import reopen_window

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.encoding.registry import get as get_obs_version
from sichuan_env.engine.actions import HU, PASS, PONG
from sichuan_env.engine.deal import deal_seed
from sichuan_env.engine.invariants import check_invariants
from sichuan_env.engine.state import PH_CLAIM, PH_OVER, PH_ROB, STATE_DTYPE
from sichuan_env.engine.step import legal_mask_at
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

T = get_tables()
RULES = RuleConfig()
R = RULES.as_array()
STYLES = np.zeros(4, np.int64)


def _window_states(n: int, seed: int = 0, with_hu: bool = False) -> np.ndarray:
    """``n`` heuristic self-play states in a claim or robbing window (``with_hu``: hu legal)."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n, dtype=STATE_DTYPE)
    st = np.zeros(1, dtype=STATE_DTYPE)
    obs, mask = np.zeros((83, 27), np.uint8), np.zeros(88, np.int8)
    k = 0
    while k < n:
        deal_seed(st, 0, np.uint64(rng.integers(2**62)), R)
        while st[0]["phase"] != PH_OVER and k < n:
            if st[0]["phase"] in (PH_CLAIM, PH_ROB):
                legal_mask_at(st, 0, R, T["FLAGS"], mask)
                if (not with_hu or mask[HU]) and rng.random() < 0.5:
                    out[k] = st[0]
                    k += 1
                    break
            me = int(st[0]["to_act"])
            run_styles_at(st, 0, STYLES, (me + 1) % 4, R, T["FLAGS"], T["WAITS"], obs, mask,
                          T["DIST"])  # fmt: skip
    return out


@njit
def _reopen_at(states, i, me, rules, flags, waits, obs, mask, dist):
    return reopen_window(states[i], me, np.zeros(4, np.int64), rules, flags, waits, obs, mask, dist)


def _reopen(states, i, me, obs, mask):
    return _reopen_at(states, i, me, R, T["FLAGS"], T["WAITS"], obs, mask, T["DIST"])


def _masks(states: np.ndarray) -> np.ndarray:
    masks = np.zeros((len(states), 88), np.int8)
    for k in range(len(states)):
        legal_mask_at(states, k, R, T["FLAGS"], masks[k])
    return masks


def test_a_reopened_window_keeps_the_seats_options_and_the_rules():
    states = _window_states(120)
    masks = _masks(states)
    obs, mask = np.zeros((83, 27), np.uint8), np.zeros(88, np.int8)
    others_changed = 0
    for k in range(len(states)):
        row = states[k : k + 1].copy()
        me = int(row[0]["to_act"])
        determinize_at(row, 0, me, np.uint64(k))
        assert _reopen(row, 0, me, obs, mask)
        check_invariants(row[0], RULES)
        assert int(row[0]["to_act"]) == me and row[0]["phase"] == states[k]["phase"]
        after = np.zeros(88, np.int8)
        legal_mask_at(row, 0, R, T["FLAGS"], after)
        assert np.array_equal(after, masks[k])  # the seat's own options are its own
        others_changed += int(row[0]["n_claim"]) != int(states[k]["n_claim"])
    assert others_changed > 0  # who else is asked really depends on the redrawn hands


def test_claim_search_reads_nothing_hidden_and_answers_legally():
    states = _window_states(40, seed=1)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(500 + k))
    assert other.tobytes() != states.tobytes()
    masks = _masks(states)
    agent = SearchAgent(seed=3, samples=6, draws=2, z=0.0, claims=True)
    a = agent.act_states(states, masks)
    assert np.array_equal(a, agent.act_states(other, masks))
    assert masks[np.arange(len(a)), a].all()
    assert ((a >= PONG) & (a <= PASS)).all()


def test_claim_search_leaves_the_heuristic_where_rollouts_say_so():
    """Plain search answers claims like the heuristic (its style); claim search does not always."""
    states = _window_states(48, seed=2)
    masks = _masks(states)
    obs = np.zeros((len(states), 83, 27), np.uint8)
    seats = np.zeros(len(states), np.int8)
    get_obs_version(1).encode_batch(states, seats, False, kernel_rules(RULES), obs)
    h = HeuristicAgent().act_batch(obs, masks)
    plain = SearchAgent(seed=0, samples=8, draws=2, z=0.0).act_states(states, masks)
    assert np.array_equal(plain, h)
    claims = SearchAgent(seed=0, samples=8, draws=2, z=0.0, claims=True).act_states(states, masks)
    assert (claims != plain).sum() >= 1
    assert masks[np.arange(len(claims)), claims].all()


def test_claim_search_passes_a_win_only_by_choice():
    """With hu legal, the claim search may pass; every answer is legal and some are hu."""
    states = _window_states(24, seed=3, with_hu=True)
    masks = _masks(states)
    assert masks[:, HU].all()
    a = SearchAgent(seed=1, samples=8, draws=2, z=1.0, claims=True).act_states(states, masks)
    assert masks[np.arange(len(a)), a].all()
    assert (a == HU).sum() >= len(a) // 2
