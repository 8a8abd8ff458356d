"""Rollout search (sichuan_env.agents.search.rollout, sichuan_env.agents.search.agent): determinizations keep what the seat sees,
the search reads nothing hidden, answers are legal and reproducible, and it plugs into sichuan_env.agents.eval.evaluate."""

import numpy as np
import pytest
from numba import njit
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.match_stats import summarize
from sichuan_env.agents.rule_based.fused import run_styles_at
from sichuan_env.agents.search.agent import SearchAgent
from sichuan_env.agents.search.determinize import determinize_at, shuffle_undrawn

from sichuan_env import RuleConfig
from sichuan_env.engine.deal import deal_seed
from sichuan_env.engine.invariants import check_invariants
from sichuan_env.engine.state import PH_OVER, PH_TURN, STATE_DTYPE
from sichuan_env.engine.step import legal_mask_at
from sichuan_env.kernels.tables import get_tables

T = get_tables()
RULES = RuleConfig()
R = RULES.as_array()


def _turn_states(n: int, seed: int = 0) -> np.ndarray:
    """``n`` heuristic self-play states at an own turn (PH_TURN), from 1..60 decisions in."""
    rng = np.random.default_rng(seed)
    out = np.zeros(n, dtype=STATE_DTYPE)
    st = np.zeros(1, dtype=STATE_DTYPE)
    obs, mask = np.zeros((83, 27), np.uint8), np.zeros(88, np.int8)
    styles = np.zeros(4, np.int64)
    k = 0
    while k < n:
        deal_seed(st, 0, np.uint64(rng.integers(2**62)), R)
        for _ in range(int(rng.integers(1, 60))):
            if st[0]["phase"] == PH_OVER:
                break
            # one decision: stop at a seat that is not the one to act
            run_styles_at(
                st,
                0,
                styles,
                (int(st[0]["to_act"]) + 1) % 4,
                R,
                T["FLAGS"],
                T["WAITS"],
                obs,
                mask,
                T["DIST"],
            )
        if st[0]["phase"] == PH_TURN:
            out[k] = st[0]
            k += 1
    return out


def _public(st: np.ndarray, me: int) -> tuple:
    others = [s for s in range(4) if s != me]
    return (
        st["hands"][me].tobytes(),
        st["hands"][others].sum(axis=1).tobytes(),
        (st["wall"][st["head"] : st["tail"] + 1].size),
        st["river"].tobytes(),
        st["melds"].tobytes(),
        st["scores"].tobytes(),
        st["void"].tobytes(),
        int(st["n_log"]),
    )


def _unseen(st: np.ndarray, me: int) -> np.ndarray:
    counts = np.bincount(st["wall"][st["head"] : st["tail"] + 1], minlength=27)
    for s in range(4):
        if s != me and not st["won"][s]:
            counts = counts + st["hands"][s]
    return counts


def test_determinize_keeps_the_public_state_and_the_rules():
    states = _turn_states(200)
    changed = 0
    for k in range(len(states)):
        row = states[k : k + 1].copy()
        me = int(row[0]["to_act"])
        determinize_at(row, 0, me, np.uint64(k))
        check_invariants(row[0], RULES)  # tiles conserved, scores zero-sum
        assert _public(row[0], me) == _public(states[k], me)
        assert np.array_equal(_unseen(row[0], me), _unseen(states[k], me))
        for s in range(4):  # an opponent whose last discard left its void holds none of it
            v, n = int(row[0]["void"][s]), int(row[0]["n_river"][s])
            if (
                s != me
                and not row[0]["won"][s]
                and v >= 0
                and n
                and row[0]["river"][s, n - 1] // 9 != v
            ):
                assert row[0]["hands"][s, 9 * v : 9 * v + 9].sum() == 0
        changed += row.tobytes() != states[k : k + 1].tobytes()
    assert changed > 150  # hidden facts really were redrawn


@njit
def _shuffle_at(states, i, rng):
    return shuffle_undrawn(states[i], rng)


def test_shuffle_undrawn_redraws_the_wall_order_and_nothing_else():
    """The oracle labels' sample: every hand as it is, the undrawn wall in a new order."""
    states = _turn_states(60, seed=2)
    changed = 0
    for k in range(len(states)):
        row = states[k : k + 1].copy()
        again = states[k : k + 1].copy()
        _shuffle_at(row, 0, np.uint64(7 + k))
        _shuffle_at(again, 0, np.uint64(7 + k))
        assert row.tobytes() == again.tobytes()  # deterministic in the rng
        check_invariants(row[0], RULES)
        h, t = int(row[0]["head"]), int(row[0]["tail"])
        for name in states.dtype.names:
            if name != "wall":
                assert np.array_equal(row[0][name], states[k][name]), name
        w0, w1 = states[k]["wall"], row[0]["wall"]
        assert np.array_equal(np.sort(w1[h : t + 1]), np.sort(w0[h : t + 1]))
        assert np.array_equal(w1[:h], w0[:h]) and np.array_equal(w1[t + 1 :], w0[t + 1 :])
        changed += not np.array_equal(w1, w0)
    assert changed > 50  # the order really was redrawn


def test_the_search_reads_nothing_hidden():
    """Two states that differ only in hidden facts get the same answers (same seed)."""
    states = _turn_states(24, seed=1)
    other = states.copy()
    for k in range(len(other)):
        determinize_at(other, k, int(other[k]["to_act"]), np.uint64(1000 + k))
    assert other.tobytes() != states.tobytes()
    masks = np.zeros((len(states), 88), np.int8)
    for k in range(len(states)):
        legal_mask_at(states, k, R, T["FLAGS"], masks[k])
    agent = SearchAgent(seed=3, samples=6, draws=2, gap=-1, z=0.0)
    a = agent.act_states(states, masks)
    b = agent.act_states(other, masks)
    assert np.array_equal(a, b)
    assert masks[np.arange(len(a)), a].all()
    assert np.array_equal(
        agent.act_states(states[::-1].copy(), masks[::-1].copy()), a[::-1]
    )  # batching
    c = SearchAgent(seed=4, samples=6, draws=2, gap=-1, z=0.0).act_states(states, masks)
    assert masks[np.arange(len(c)), c].all()


def test_search_agent_arguments_and_obs_only_use():
    with pytest.raises(ValueError, match="samples"):
        SearchAgent(samples=0)
    with pytest.raises(TypeError, match="draws"):
        SearchAgent(draws=1.5)
    with pytest.raises(ValueError, match="z"):
        SearchAgent(z=-1)
    with pytest.raises(ValueError, match="style"):
        SearchAgent(style="random")
    agent = SearchAgent()
    with pytest.raises(TypeError, match="STATE_DTYPE"):
        agent.act_states(np.zeros((2, 88)), np.ones((2, 88), np.int8))
    states = _turn_states(2)
    with pytest.raises(ValueError, match="rows"):
        agent.act_states(states, np.ones((3, 88), np.int8))
    masks = np.zeros((2, 88), np.int8)
    for k in range(2):
        legal_mask_at(states, k, R, T["FLAGS"], masks[k])
    with pytest.raises(ValueError, match="other rules"):
        agent.act_states(states, masks, RuleConfig(exchange_three=True))
    with pytest.raises(RuntimeError, match="act_states"):
        agent.act(np.zeros((83, 27), np.uint8), np.ones(88, np.int8))


def test_search_agent_in_a_duplicate_match():
    lineup = ["search", "heuristic", "heuristic", "heuristic"]
    agents = {"search": SearchAgent(seed=0, samples=2, draws=1), "heuristic": None}
    from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

    agents["heuristic"] = HeuristicAgent()
    records = play_duplicate(lineup, 2, RULES, seed=0, progress=False, agents=agents)
    summary = summarize(lineup, records, 2)
    assert summary["search"]["seat_hands"] == 8
    again = play_duplicate(lineup, 2, RULES, seed=0, progress=False, agents=agents)
    assert [r for *_, r in again] == [r for *_, r in records]  # reproducible


def test_vector_env_states_of_copies_rows_and_checks_them():
    from sichuan_env.envs.vector import VectorEnv

    venv = VectorEnv(4)
    venv.reset(seed=0)
    rows = venv.states_of(np.array([2, 0]))
    assert rows.dtype == STATE_DTYPE and len(rows) == 2
    assert rows[0].tobytes() == venv.states[2].tobytes()
    rows["scores"][:] = 99  # a copy: the env is unchanged
    assert not (venv.states["scores"] == 99).any()
    for bad in (np.array([4]), np.array([-1]), np.array([True]), np.array([[0]]), np.array([0.5])):
        with pytest.raises(ValueError, match="rows"):
            venv.states_of(bad)


def test_search_play_diagnostics():
    """play_batch: a searcher that never leaves the style scores like it (zero over the rotations)."""
    from sichuan_env.agents.search.play import play_batch

    walls = 3
    n = 4 * walls
    seeds = np.repeat(np.arange(walls, dtype=np.uint64) + 10, 4)
    seats = np.tile(np.arange(4), walls)
    env = (np.zeros(4, np.int64), R, T["FLAGS"], T["WAITS"], T["DIST"])
    out = [np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n)]
    games, scratch = np.zeros(n, STATE_DTYPE), np.zeros((n, 2), STATE_DTYPE)
    play_batch(games, scratch, seeds, seats, (4, 2, 1, 1e9, False, False), env, *out)
    points, searched, deviations, gain = out
    assert searched.min() > 0 and deviations.sum() == 0 and not gain.any()
    assert (
        points.reshape(walls, 4).sum(axis=1) == 0
    ).all()  # exactly the heuristic's zero-sum hands
    play_batch(
        games, scratch, seeds, seats, (4, 2, -1, 0.0, True, True), env, *out
    )  # z = 0: the best mean; claims and 定缺 searched
    assert out[2].sum() > 0 and np.isfinite(out[3]).all()


def test_search_agent_plays_in_the_terminal_game(capsys):
    """sichuan_env.play hands state-reading agents the hand record (not only observations)."""
    from sichuan_env.play import play

    bots = [SearchAgent(seed=k, samples=2, draws=1) for k in range(3)]
    assert play(0, RuleConfig(), 3, lambda prompt: "0", opponents=bots) == 0
    out = capsys.readouterr().out
    assert "The hand is over." in out and "seat 1:" in out


def test_search_agents_as_gymnasium_opponents():
    import gymnasium

    from sichuan_env.engine.game import Game

    env = gymnasium.make("SichuanMahjong-v0", opponents=("search", "heuristic", "search"))
    calls = {}
    for k, agent in enumerate(env.unwrapped.opponents):
        if agent.name == "search":
            agent.samples, agent.draws = 2, 1
            real = agent.act_states

            def counted(states, masks, rules, real=real, k=k):
                calls[k] = calls.get(k, 0) + 1
                return real(states, masks, rules)

            agent.act_states = counted
    _, info = env.reset(seed=0)
    done, steps = False, 0
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        steps += 1
    # both searching seats were asked through act_states (the host handed them the records)
    assert sorted(calls) == [0, 2] and min(calls.values()) >= 2
    record = env.unwrapped.game.record()
    replayed = Game.from_record(record)  # the hand the search played is a legal, replayable hand
    assert replayed.result() == record["result"] and steps > 3
