"""Baseline agents: legal choices, the heuristic's rules of thumb on real states, a duplicate match."""

import numpy as np
import pytest
from sichuan_env.agents import Agent, HeuristicAgent, RandomAgent
from sichuan_env.agents.eval.cli import main as evaluate_main

import sichuan_env
from sichuan_env import parse
from sichuan_env.engine.actions import DISCARD, EXCHANGE, HU, VOID
from sichuan_env.envs.vector import VectorEnv


def test_agents_follow_the_protocol():
    for agent in (HeuristicAgent(), RandomAgent(0)):
        assert isinstance(agent, Agent)
        assert agent.obs_version == 1 and agent.name in ("heuristic", "random")


def test_agents_always_choose_legal_actions():
    venv = VectorEnv(64, seed=1)
    obs, mask, _ = venv.reset()
    h, r = HeuristicAgent(), RandomAgent(0)
    for _ in range(200):
        for agent in (h, r):
            acts = agent.act_batch(obs, mask)
            assert acts.dtype == np.int64 and acts.shape == (64,)
            assert mask[np.arange(64), acts].all()
        single = [h.act(obs[i], mask[i]) for i in range(4)] + [r.act(obs[4], mask[4])]
        assert all(mask[i, a] for i, a in enumerate(single))
        assert all(type(a) is int for a in single)
        obs, mask, _, _, _, _ = venv.step(h.act_batch(obs, mask))


def _play_heuristic_hands(seeds, rules=None):
    """Every decision of heuristic-only hands: (seed, game, seat, action, mask) before acting."""
    env = sichuan_env.raw_env(rules)
    h = HeuristicAgent()
    for seed in seeds:
        env.reset(seed=seed)
        game = env.unwrapped.game
        while not game.is_over():
            seat = game.to_act()
            obs = env.observe(env.agent_selection)
            a = h.act(obs["observation"], obs["action_mask"])
            yield seed, game, seat, a, obs["action_mask"]
            env.step(a)


def test_heuristic_declares_its_shortest_suit():
    declared = 0
    for _, game, seat, a, mask in _play_heuristic_hands(range(6)):
        if mask[VOID : VOID + 3].any():
            hand = parse(game.hand(seat))
            sizes = [int(hand[9 * s : 9 * s + 9].sum()) for s in range(3)]
            assert a == VOID + int(np.argmin(sizes)), (sizes, a)
            declared += 1
    assert declared == 24  # four declarations per hand


def test_heuristic_discards_void_tiles_first_and_always_wins():
    void_turns = wins_offered = 0
    for _, game, seat, a, mask in _play_heuristic_hands(range(12)):
        if mask[HU]:
            wins_offered += 1
            assert a == HU
            continue
        void = game.voids()[seat]
        if void is None or not mask[DISCARD : DISCARD + 27].any():
            continue
        s = "mps".index(void)
        hand = parse(game.hand(seat))
        if hand[9 * s : 9 * s + 9].any():
            void_turns += 1
            # while it holds a void tile, the heuristic discards one (never another tile)
            assert DISCARD + 9 * s <= a < DISCARD + 9 * s + 9, (game.hand(seat), void, a)
    assert void_turns > 20 and wins_offered > 10  # the cases really happened


def test_heuristic_passes_three_tiles_of_one_suit():
    rules = sichuan_env.RuleConfig(exchange_three=True)
    picks: dict[tuple[int, int], list[int]] = {}
    for seed, _, seat, a, _ in _play_heuristic_hands(range(3), rules):
        if EXCHANGE <= a < EXCHANGE + 27:
            picks.setdefault((seed, seat), []).append(a - EXCHANGE)
    assert len(picks) == 12
    for tiles in picks.values():
        assert len(tiles) == 3 and len({t // 9 for t in tiles}) == 1


def test_heuristic_beats_random_in_a_duplicate_match(tmp_path):
    doc = evaluate_main(
        ["--walls", "40", "--seed", "1", "--quiet", "--json", str(tmp_path / "eval.json")]
    )
    h, r = doc["agents"]["heuristic"], doc["agents"]["random"]
    assert h["points_per_hand"] - h["ci95"] > r["points_per_hand"] + r["ci95"]
    assert h["win_rate"] > 0.5 > r["win_rate"]
    assert (tmp_path / "eval.json").exists()


def test_play_duplicate_rejects_bad_arguments():
    from sichuan_env.agents.eval.evaluate import play_duplicate

    lineup = ["heuristic", "random", "random", "random"]
    rules = sichuan_env.RuleConfig()
    bad_calls = [
        (["heuristic", "random", "random"], 1, rules, 0, None, "4 agents"),
        ([*lineup[:3], 5], 1, rules, 0, None, "str"),
        (lineup, 0, rules, 0, None, "walls"),
        (lineup, True, rules, 0, None, "walls"),
        (lineup, 2.0, rules, 0, None, "walls"),
        (lineup, 1, rules, -1, None, "seed"),
        (lineup, 1, "xuezhan", 0, None, "rules"),
        (lineup, 1, rules, 0, {"heuristic": HeuristicAgent()}, "lineup entries"),
        (["heuristic", "nobody", "random", "random"], 1, rules, 0, None, "unknown agent"),
    ]
    for lu, walls, r, seed, agents, words in bad_calls:
        with pytest.raises(ValueError, match=words):
            play_duplicate(lu, walls, r, seed, progress=False, agents=agents)
    records = play_duplicate(lineup, 1, rules, 0, progress=False)
    assert sorted((w, rot) for w, rot, _ in records) == [(0, 0), (0, 1), (0, 2), (0, 3)]


def test_heuristic_ukeire_matches_the_shanten_reference():
    """The key-arithmetic ukeire equals one shanten call per tile on thousands of random hands."""
    from sichuan_env.agents.rule_based.heuristic import _ukeire_plain, ukeire

    from sichuan_env.kernels.tables import get_tables

    dist = get_tables()["DIST"]
    rng = np.random.default_rng(0)
    checked = tenpai = 0
    for _ in range(4000):
        size = int(rng.choice([1, 4, 7, 10, 13]))
        hand = np.zeros(27, np.uint8)
        suits = rng.choice(3, size=int(rng.integers(1, 4)), replace=False)
        while hand.sum() < size:
            t = int(rng.choice(suits)) * 9 + int(rng.integers(9))
            if hand[t] < 4:
                hand[t] += 1
        unseen = rng.integers(0, 5, 27)
        void = int(rng.integers(-1, 3))
        fast = ukeire(hand, void, unseen, dist)
        assert fast == _ukeire_plain(hand.copy(), void, unseen, dist), (hand, void)
        checked += 1
        tenpai += fast[0] == 0
    assert checked == 4000 and tenpai > 50
