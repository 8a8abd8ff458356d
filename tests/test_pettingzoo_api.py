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
        assert info == {"illegal_action": False}
        assert env.unwrapped.legal_action_names(agent) == game.legal()
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
    with pytest.raises(ValueError, match="render_mode"):
        sichuan_env.raw_env(render_mode="rgb")
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


# ------------------------------------------------------------------ actions


def _snapshot(env):
    raw = env.unwrapped
    return (
        raw.game.state.tobytes(),
        raw.agent_selection,
        dict(raw._cumulative_rewards),
        dict(raw.rewards),
        {a: dict(i) for a, i in raw.infos.items()},
    )


@pytest.mark.parametrize(
    "make", [int, np.int64, np.uint8, np.int16, np.array, lambda a: np.array(a, np.uint32)]
)
def test_integer_scalar_actions_are_accepted(make):
    env = sichuan_env.env()
    env.reset(seed=6)
    ref = sichuan_env.env()
    ref.reset(seed=6)
    for _ in range(40):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(make(legal[-1]))
        ref.step(int(legal[-1]))
    assert _snapshot(env) == _snapshot(ref)


def test_illegal_zero_d_action_message_prints_a_plain_int():
    env = sichuan_env.env()
    env.reset(seed=2)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError) as err:
        env.step(np.array(illegal))
    msg = str(err.value)
    assert "array" not in msg and f"action {illegal} " in msg and "legal: [54, 55, 56]" in msg


@pytest.mark.parametrize(
    "bad",
    [
        True,
        np.bool_(True),
        np.array(True),
        54.0,
        np.float32(54),
        np.array(54.0),
        "54",
        None,
        [54],
        np.array([54]),
        88,
        -1,
        2**70,
        np.array(88),
    ],
)
def test_malformed_actions_raise_and_change_nothing(bad):
    for mode in ("raise", "penalize", "terminate"):
        env = sichuan_env.env(illegal_action=mode)
        env.reset(seed=2)
        before = _snapshot(env)
        with pytest.raises(IllegalActionError, match="player_"):
            env.step(bad)
        assert _snapshot(env) == before


def test_game_step_id_and_action_to_str_take_zero_d_arrays():
    from sichuan_env.engine.actions import action_to_str

    game = Game(seed=2)
    other = Game(seed=2)
    game.step_id(np.array(54))
    other.step_id(54)
    assert game.state.tobytes() == other.state.tobytes()
    assert action_to_str(np.array(86)) == "hu"
    with pytest.raises(IllegalActionError, match=r"action id 0 is not legal") as err:
        game.step_id(np.array(0, np.int8))
    assert "array" not in str(err.value)
    for bad in (np.array(True), np.array([54]), 54.0, None):
        with pytest.raises(IllegalActionError):
            game.step_id(bad)
    with pytest.raises(TypeError):
        action_to_str(np.array(1.0))


# -------------------------------------------------------------------- infos


def test_infos_hold_numbers_and_names_are_opt_in():
    env = sichuan_env.env()
    env.reset(seed=8)
    agent = env.agent_selection
    assert all(info == {"illegal_action": False} for info in env.infos.values())
    raw = env.unwrapped
    assert raw.legal_action_names(agent) == raw.game.legal() == ["void m", "void p", "void s"]
    other = next(a for a in env.agents if a != agent)
    assert raw.legal_action_names(other) == []
    with pytest.raises(ValueError, match="unknown agent"):
        raw.legal_action_names("player_7")
    with pytest.raises(RuntimeError, match="reset"):
        sichuan_env.raw_env().legal_action_names("player_0")

    named = sichuan_env.env(info_legal_names=True)
    named.reset(seed=8)
    rng = np.random.default_rng(1)
    for a in named.agent_iter():
        obs, _, term, trunc, info = named.last()
        if term or trunc:
            assert info["legal_actions"] == []
            named.step(None)
            continue
        assert info["legal_actions"] == named.unwrapped.game.legal()
        assert all(named.infos[o]["legal_actions"] == [] for o in named.agents if o != a)
        named.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    with pytest.raises(TypeError, match="info_legal_names"):
        sichuan_env.raw_env(info_legal_names="yes")


# ------------------------------------------------------------ illegal modes


def _illegal(env):
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])


def _advance(env, n, rng):
    for _ in range(n):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))


def test_illegal_action_raise_is_the_default():
    env = sichuan_env.env()
    env.reset(seed=9)
    assert env.unwrapped.illegal_action == "raise"
    before = _snapshot(env)
    with pytest.raises(IllegalActionError, match="not legal now"):
        env.step(_illegal(env))
    assert _snapshot(env) == before


def test_illegal_action_penalize_leaves_the_hand_unchanged():
    env = sichuan_env.env(illegal_action="penalize", illegal_penalty=2.5)
    env.reset(seed=9)
    _advance(env, 30, np.random.default_rng(0))
    raw = env.unwrapped
    agent = env.agent_selection
    state, mask = raw.game.state.tobytes(), env.observe(agent)["action_mask"].copy()
    obs_before = env.observe(agent)["observation"].copy()
    for _ in range(2):
        env.step(np.array(_illegal(env)))
        assert raw.game.state.tobytes() == state and env.agent_selection == agent
        assert np.array_equal(env.observe(agent)["action_mask"], mask)
        assert np.array_equal(env.observe(agent)["observation"], obs_before)
        _, reward, term, trunc, info = env.last()
        assert reward == -2.5 and not term and not trunc and info == {"illegal_action": True}
        assert all(env.rewards[a] == 0 for a in env.agents if a != agent)
        assert all(not env.infos[a]["illegal_action"] for a in env.agents if a != agent)
    env.step(int(np.flatnonzero(mask)[0]))  # a legal action clears the flag and moves on
    assert not any(i["illegal_action"] for i in env.infos.values())
    assert raw.game.state.tobytes() != state


def test_illegal_action_terminate_ends_the_hand_for_all():
    env = sichuan_env.env(illegal_action="terminate")
    env.reset(seed=9)
    _advance(env, 20, np.random.default_rng(0))
    raw = env.unwrapped
    offender = env.agent_selection
    state = raw.game.state.tobytes()
    env.step(_illegal(env))
    assert raw.game.state.tobytes() == state
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards == {a: (-1.0 if a == offender else 0) for a in env.agents}
    assert env.infos[offender]["illegal_action"]
    assert not any(env.observe(a)["action_mask"].any() for a in env.agents)
    assert raw.legal_action_names(offender) == []
    for _ in env.agent_iter():
        _, _, term, _, _ = env.last()
        assert term
        env.step(None)
    assert not env.agents
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    assert len(env.agents) == 4 and not any(env.terminations.values())


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"illegal_action": "ignore"}, ValueError, "illegal_action must be one of"),
        ({"illegal_action": None}, ValueError, "illegal_action"),
        ({"illegal_action": 1}, ValueError, "illegal_action"),
        ({"illegal_penalty": -1}, ValueError, "illegal_penalty"),
        ({"illegal_penalty": float("inf")}, ValueError, "illegal_penalty"),
        ({"illegal_penalty": float("nan")}, ValueError, "illegal_penalty"),
        ({"illegal_penalty": True}, TypeError, "illegal_penalty"),
        ({"illegal_penalty": "1"}, TypeError, "illegal_penalty"),
        ({"illegal_penalty": None}, TypeError, "illegal_penalty"),
    ],
)
def test_illegal_action_options_are_validated(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sichuan_env.raw_env(**kwargs)


# ---------------------------------------------------------------- rendering


def test_render_modes(capsys):
    from pettingzoo.test import render_test

    from sichuan_env.envs.render import RGB_SHAPE

    env = sichuan_env.env()
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert env.metadata["render_fps"] > 0
    render_test(sichuan_env.env)
    capsys.readouterr()

    human = sichuan_env.env(render_mode="human")
    human.reset(seed=4)
    assert "legal:" in capsys.readouterr().out  # printed on reset, as Gymnasium does
    assert human.render() is None
    assert "(hidden)" in capsys.readouterr().out

    rgb = sichuan_env.env(render_mode="rgb_array")
    rgb.reset(seed=4)
    first = rgb.render()
    assert first.shape == RGB_SHAPE and first.dtype == np.uint8
    _advance(rgb, 25, np.random.default_rng(0))
    later = rgb.render()
    assert later.shape == RGB_SHAPE and not np.array_equal(first, later)
    assert len(np.unique(later.reshape(-1, 3), axis=0)) > 5
    quiet = sichuan_env.env()
    quiet.reset(seed=0)
    assert quiet.render() is None


# --------------------------------------------------------------- call order


def test_out_of_order_calls_raise_runtime_error():
    env = sichuan_env.env()
    for call in (
        lambda: env.step(0),
        lambda: env.observe("player_0"),
        lambda: env.last(),
        lambda: env.render(),
        lambda: env.state(),
        lambda: env.agent_iter(),
    ):
        with pytest.raises(RuntimeError, match=r"reset\(\)"):
            call()
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.rewards  # PettingZoo's attribute guard: hasattr() keeps working
    env.reset(seed=3)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not env.agents
    for call in (lambda: env.step(0), lambda: env.last()):
        with pytest.raises(RuntimeError, match="reset"):
            call()
