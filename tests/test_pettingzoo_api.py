"""The PettingZoo AEC env: conformance, rewards, winners, infos, rendering."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import sichuan_env
from sichuan_env import Game, IllegalActionError, RuleConfig
from sichuan_env.encoding.observation import OBS_SHAPE, obs_rows
from sichuan_env.engine.actions import ACTION_SPACE


def test_api_test():
    api_test(sichuan_env.env(), num_cycles=1500, verbose_progress=False)


def test_api_test_oracle_and_exchange():
    api_test(sichuan_env.env(rules=RuleConfig(exchange_three=True), oracle=True), num_cycles=500)


def test_seed_test():
    seed_test(lambda: sichuan_env.env(), num_cycles=300)


def _play(env, rng):
    totals = {a: 0 for a in env.possible_agents}
    zero_masks_for_winners = True
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        game = env.unwrapped.game
        for other in env.agents:
            seat = int(other[-1])
            if game.state["won"][seat]:
                zero_masks_for_winners &= not env.observe(other)["action_mask"].any()
                assert other != env.agent_selection
        assert info["legal_actions"] == game.legal()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals, zero_masks_for_winners


def test_rewards_sum_to_the_record_scores():
    rng = np.random.default_rng(0)
    env = sichuan_env.env()
    for seed in range(15):
        env.reset(seed=seed)
        game = env.unwrapped.game
        totals, ok = _play(env, rng)
        assert ok
        assert [totals[f"player_{i}"] for i in range(4)] == game.result()["scores"]
        assert Game.from_record(game.record()).result()["scores"] == game.result()["scores"]


def test_spaces_and_metadata():
    env = sichuan_env.env()
    env.reset(seed=1)
    assert env.action_space("player_0").n == ACTION_SPACE
    assert env.observation_space("player_0")["observation"].shape == OBS_SHAPE[1]
    assert sichuan_env.raw_env(oracle=True).observation_space("player_2")["observation"].shape == (
        obs_rows(1, oracle=True),
        27,
    )
    assert env.metadata["name"] == "sichuan_xuezhan_v1"
    raw = env.unwrapped
    assert raw.action_to_str(86) == "hu" and raw.action_from_str("discard 5p") == [13]


def test_winners_stay_and_keep_receiving_rewards():
    env = sichuan_env.raw_env()
    rng = np.random.default_rng(3)
    for seed in range(30):
        env.reset(seed=seed)
        while not env.unwrapped.game.is_over():
            obs = env.observe(env.agent_selection)
            legal = np.flatnonzero(obs["action_mask"])
            env.step(86 if 86 in legal else int(rng.choice(legal)))
            assert len(env.agents) == 4
            assert sum(env.rewards.values()) == 0


def test_illegal_action_raises():
    env = sichuan_env.raw_env()
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_render_ansi_and_bad_arguments():
    env = sichuan_env.env(render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert "legal:" in text and "(hidden)" in text
    with pytest.raises(ValueError):
        sichuan_env.raw_env(obs_version=9)
    with pytest.raises(ValueError):
        sichuan_env.raw_env(render_mode="human")
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        sichuan_env.raw_env(rules={"fan_cap": 3})


def test_observation_hides_other_hands_and_oracle_shows_them():
    env = sichuan_env.raw_env(oracle=True)
    env.reset(seed=5)
    game = env.unwrapped.game
    obs = env.observe("player_1")["observation"]
    hand = obs[0:4].sum(axis=0)
    assert np.array_equal(hand, game.state["hands"][1])
    nxt = obs[83:87].sum(axis=0)  # oracle: the next seat's hand
    assert np.array_equal(nxt, game.state["hands"][2])
    # The plain view hides them: another deal with the same hand for seat 1 but the other
    # seats' tiles shuffled among them gives seat 1 the same observation, the oracle another.
    wall = list(game.state["wall"])
    dealer = int(game.state["dealer"])
    own = slice(13 * ((1 - dealer) % 4), 13 * ((1 - dealer) % 4) + 13)
    others = [k for k in range(52) if not own.start <= k < own.stop]
    others += [52] if dealer != 1 else []  # the dealer's 14th tile
    rng = np.random.default_rng(0)
    shuffled = list(wall)
    for k, src in zip(others, rng.permutation(others), strict=True):
        shuffled[k] = wall[src]
    views = {}
    for name, w in (("a", wall), ("b", shuffled)):
        for oracle in (False, True):
            e = sichuan_env.raw_env(oracle=oracle)
            e.reset(seed=5)
            e.game = Game(e.rules, wall=w, dealer=dealer)  # same public deal, other hidden hands
            views[name, oracle] = e.observe("player_1")["observation"]
    assert views["a", False].shape == (83, 27)
    assert not np.array_equal(shuffled, wall)
    assert np.array_equal(views["a", False], views["b", False])
    assert not np.array_equal(views["a", True], views["b", True])


def test_docstring_observation_table_matches_the_layout():
    import re

    from sichuan_env.encoding.observation import block_offsets
    from sichuan_env.envs import pettingzoo as pz

    rows = re.findall(r"^\| (\d+)(?:–(\d+))? \| ([\w@]+) \|", pz.__doc__, flags=re.MULTILINE)
    offsets = block_offsets(1)
    assert {name for _, _, name in rows} == set(offsets)
    for first, last, name in rows:
        start, n = offsets[name]
        assert int(first) == start and int(last or first) == start + n - 1, name
