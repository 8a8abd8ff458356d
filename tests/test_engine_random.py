"""Random hands under every preset: invariants after every step, replay, determinism."""

import json

import numpy as np
import pytest

from sichuan_env import PRESETS, Game, RuleConfig, check_invariants
from sichuan_env.engine import batch, selfplay
from sichuan_env.engine.actions import ACTION_SPACE
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

T = get_tables()
EXTRA_CONFIGS = {
    "no_void": RuleConfig(declare_void=False),
    "no_void_exchange": RuleConfig(declare_void=False, exchange_three=True),
    "no_pass_rule_no_last_four": RuleConfig(pass_win_rule=False, must_win_last_four=False),
    "odd_payments": RuleConfig(
        base_points=3,
        direct_kong_pays=1,
        added_kong_pays=2,
        concealed_kong_pays=3,
        flower_pig_pays=8,
        fan_cap=3,
    ),
}
ALL_CONFIGS = {**PRESETS, **EXTRA_CONFIGS}


@pytest.mark.parametrize("name", sorted(ALL_CONFIGS))
@pytest.mark.parametrize("policy", [selfplay.RANDOM, selfplay.HU_FIRST, selfplay.GREEDY])
def test_soak_runs_clean(name, policy):
    seeds = np.arange(2000, dtype=np.uint64) * np.uint64(1_000_003) + np.uint64(policy)
    rules = kernel_rules(ALL_CONFIGS[name])
    out = batch.soak(seeds, policy, rules, T)
    assert not out.any(), (seeds[out != 0][:3], out[out != 0][:3])


def _play(game: Game, rng: np.random.Generator, hu_first: bool) -> None:
    while not game.is_over():
        legal = game.legal()
        action = "hu" if hu_first and "hu" in legal else legal[rng.integers(len(legal))]
        game.step(action)
        check_invariants(game)


@pytest.mark.parametrize("name", sorted(ALL_CONFIGS))
def test_facade_invariants_and_replay(name):
    rng = np.random.default_rng(len(name))
    for seed in range(25):
        game = Game(ALL_CONFIGS[name], seed=seed)
        _play(game, rng, hu_first=seed % 2 == 1)
        record = json.loads(json.dumps(game.record()))
        replay = Game.from_record(record)
        assert replay.result() == game.result()
        assert replay.state.tobytes() == game.state.tobytes()
        assert sum(record["result"]["scores"]) == 0


def test_random_play_reaches_every_ending():
    seeds = np.arange(3000, dtype=np.uint64)
    states = np.zeros(len(seeds), dtype=STATE_DTYPE)
    rules = kernel_rules(RuleConfig())
    args = (rules, T["FLAGS"], T["WAITS"], T["DIST"])
    decisions = selfplay.play_batch(states, seeds, selfplay.GREEDY, *args)
    assert decisions.min() > 10
    assert (states["phase"] == 5).all() and (states["scores"].sum(axis=1) == 0).all()
    ends = np.bincount(states["end_reason"], minlength=4)
    assert ends[1] > 0 and ends[2] > 0  # three winners, and exhaustive draws
    greedy_wins = states["n_won"].mean()
    assert greedy_wins > 1.0
    assert (states["settle_pig"].any(axis=1)).any() and (states["settle_tenpai"].any(axis=1)).any()
    assert (states["n_melds"] > 0).any()
    extras = np.bitwise_or.reduce(states["win_extras"].ravel())
    assert extras & 0b11 == 0b11  # gang_shang_hua and gang_shang_pao both seen
    # random players rarely win
    selfplay.play_batch(states, seeds, selfplay.RANDOM, *args)
    assert states["n_won"].mean() < greedy_wins / 4


def test_same_seed_same_hand_in_every_path():
    rules = RuleConfig(exchange_three=True)
    game = Game(rules, seed=1234)
    states = np.zeros(1, dtype=STATE_DTYPE)
    masks = np.zeros((1, ACTION_SPACE), dtype=np.int8)
    batch.reset_batch(
        states,
        np.array([1234], np.uint64),
        np.zeros(1, np.int64),
        masks,
        kernel_rules(rules),
        T["FLAGS"],
    )
    assert states[0].tobytes() == game.state.tobytes()
    assert Game(rules, seed=1234).record() == game.record()
    assert Game(rules, seed=1235).record()["wall"] != game.record()["wall"]


def test_step_batch_matches_the_facade_and_auto_resets():
    rules = RuleConfig()
    r = kernel_rules(rules)
    n = 8
    states = np.zeros(n, dtype=STATE_DTYPE)
    masks = np.zeros((n, ACTION_SPACE), dtype=np.int8)
    seed_base = np.arange(100, 100 + n, dtype=np.uint64)
    hand_no = np.zeros(n, dtype=np.int64)
    batch.reset_batch(states, seed_base, hand_no, masks, r, T["FLAGS"])
    games = [Game(rules, seed=100 + i) for i in range(n)]
    rewards = np.zeros((n, 4), np.int64)
    done = np.zeros(n, np.bool_)
    final = np.zeros((n, 4), np.int64)
    status = np.zeros(n, np.int8)
    rng = np.random.default_rng(0)
    finished = 0
    totals = np.zeros((n, 4), np.int64)
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for i, g in enumerate(games):
            assert np.array_equal(np.flatnonzero(masks[i]), g.legal_ids())
        batch.step_batch(
            states,
            actions,
            seed_base,
            hand_no,
            masks,
            rewards,
            done,
            final,
            status,
            r,
            T["FLAGS"],
            T["WAITS"],
        )
        assert not status.any()
        totals += rewards
        for i, g in enumerate(games):
            g.step_id(int(actions[i]))
            if done[i]:
                assert g.is_over() and list(final[i]) == g.scores() == list(totals[i])
                totals[i] = 0
                finished += 1
                seed = (int(seed_base[i]) + int(hand_no[i]) * int(batch.SEED_STRIDE)) % 2**64
                games[i] = Game(rules, seed=seed)
            assert states[i].tobytes() == games[i].state.tobytes()
    assert finished > 0
    # an illegal action leaves that hand alone
    bad = np.array([ACTION_SPACE - 1 if not masks[0, ACTION_SPACE - 1] else 0] + [-1] * (n - 1))
    before = states.copy()
    batch.step_batch(
        states,
        bad,
        seed_base,
        hand_no,
        masks,
        rewards,
        done,
        final,
        status,
        r,
        T["FLAGS"],
        T["WAITS"],
    )
    assert status.all() and states.tobytes() == before.tobytes()


@pytest.mark.slow
def test_soak_one_million_hands():
    for k, (name, rules) in enumerate(sorted(ALL_CONFIGS.items())):
        n = 1_000_000 // len(ALL_CONFIGS) + 1
        seeds = np.arange(n, dtype=np.uint64) + np.uint64(10_000_000 * (k + 1))
        for policy in (selfplay.RANDOM, selfplay.GREEDY):
            out = batch.soak(seeds[policy % 2 :: 2], policy, kernel_rules(rules), T)
            assert not out.any(), (name, policy, out[out != 0][:3])
