"""Hostile input to the engine, the AEC env and VectorEnv: clear errors, nothing moves."""

import numpy as np
import pytest
from hostile import rejects

import sichuan_env
from sichuan_env import Game, IllegalActionError, RuleConfig, check_invariants
from sichuan_env.engine import batch
from sichuan_env.engine.actions import ACTION_SPACE, action_to_str
from sichuan_env.engine.deal import BLANK, deal_seed
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import MAX_BASE_POINTS, MAX_PAYS, kernel_rules, payment_bound

WALL = list(Game(seed=1).state["wall"])

# ------------------------------------------------------------------------------ Game


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"seed": True}, TypeError, "seed"),
        ({"seed": 1.0}, TypeError, "seed"),
        ({"seed": "1"}, TypeError, "seed"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 2**64}, ValueError, "seed"),
        ({"seed": 1, "dealer": 3}, ValueError, "dealer"),
        ({"seed": 1, "exchange_offset": 2}, ValueError, "exchange_offset"),
        ({"wall": WALL, "dealer": 1.0}, ValueError, "dealer"),
        ({"wall": WALL, "dealer": True}, ValueError, "dealer"),
        ({"wall": WALL, "dealer": 4}, ValueError, "dealer"),
        ({"wall": WALL, "exchange_offset": 1}, ValueError, "exchange_offset"),
        ({"wall": WALL, "seed": 3}, ValueError, "seed or a wall"),
        ({"wall": None, "rules": {"fan_cap": 3}}, TypeError, "RuleConfig"),
        ({"wall": [0] * 108}, ValueError, "4 times"),
        ({"wall": WALL[:-1]}, ValueError, "108"),
        ({"wall": [float(t) for t in WALL]}, ValueError, "108 tile indices"),
        ({"wall": [*WALL[:-1], 99]}, ValueError, "0..26"),
        ({"wall": [*WALL[:-1], 2**70]}, ValueError, "108 tile indices|0..26"),
        ({"wall": "1m2m"}, ValueError, "108"),
    ],
)
def test_game_arguments(kwargs, exc, match):
    rules = kwargs.pop("rules", None)
    with pytest.raises(exc, match=match):
        Game(rules, **kwargs)


def test_exchange_offset_must_be_a_real_integer():
    rules = RuleConfig(exchange_three=True)
    for bad in (True, 1.0, None, 4, "1"):
        with pytest.raises(ValueError, match="exchange_offset"):
            Game(rules, wall=WALL, exchange_offset=bad)


def test_seeds_near_the_top_of_the_range():
    a, b = Game(seed=2**64 - 1), Game(seed=0)
    assert a.state["wall"].tolist() != b.state["wall"].tolist()


@pytest.mark.parametrize(
    "bad", [None, 5, 5.0, "discard", "discard 0m", "discard 5x", "hu hu", b"hu", ["hu"], "²"]
)
def test_step_rejects_and_leaves_the_game_unchanged(bad):
    game = Game(seed=11)
    err = rejects(game, lambda: game.step(bad), IllegalActionError)
    assert "legal:" in str(err)


@pytest.mark.parametrize(
    "bad", [None, 5.0, True, np.bool_(True), "1", -1, 88, 2**64, np.uint64(2**63)]
)
def test_step_id_rejects_and_leaves_the_game_unchanged(bad):
    game = Game(seed=11)
    rejects(game, lambda: game.step_id(bad), IllegalActionError)


def test_the_legal_mask_is_a_copy_and_cannot_make_an_illegal_move_legal():
    game = Game(seed=11)
    mask = game.legal_mask()
    illegal = int(np.flatnonzero(mask == 0)[0])
    mask.flags.writeable = True
    mask[:] = 1
    assert game.legal_mask()[illegal] == 0
    rejects(game, lambda: game.step_id(illegal), IllegalActionError)
    with pytest.raises(ValueError):
        game.state["scores"][0] = 2**62  # the record handed out is a read-only copy
    check_invariants(game)


def test_check_invariants_takes_a_game_or_a_record_only():
    game = Game(seed=2)
    check_invariants(game)
    check_invariants(game.state)
    for bad in (None, "state", np.zeros(3), np.zeros(1, dtype=[("x", "i1")])[0]):
        with pytest.raises(TypeError, match="STATE_DTYPE record or a Game"):
            check_invariants(bad)


@pytest.mark.parametrize("bad", [1.9, True, -1, 88, "5", None])
def test_action_to_str_rejects_non_ids(bad):
    with pytest.raises((TypeError, ValueError), match="action id"):
        action_to_str(bad)


def test_every_field_of_a_dealt_hand_comes_from_the_blank_template():
    """Auto-reset reuses slots: a slot dealt after a whole hand equals a fresh deal."""
    rules = RuleConfig(exchange_three=True)
    r = kernel_rules(rules)
    t = get_tables()
    used = np.zeros(1, dtype=STATE_DTYPE)
    from sichuan_env.engine.selfplay import GREEDY, play_batch

    play_batch(used, np.array([7], np.uint64), GREEDY, r, t["FLAGS"], t["WAITS"], t["DIST"])
    assert used[0]["n_log"] > 50 and used[0]["n_won"] > 0  # the slot held a played hand
    fresh = np.zeros(1, dtype=STATE_DTYPE)
    fresh[0] = BLANK[0]
    fresh[0]["river"] = 55  # garbage everywhere a field could leak from
    deal_seed(used, 0, np.uint64(9), r)
    deal_seed(fresh, 0, np.uint64(9), r)
    for name in STATE_DTYPE.names:
        assert np.array_equal(used[0][name], fresh[0][name]), name
    assert not BLANK.flags.writeable


def test_largest_allowed_payments_stay_zero_sum_and_in_bounds():
    rules = RuleConfig(
        base_points=MAX_BASE_POINTS,
        direct_kong_pays=MAX_PAYS,
        added_kong_pays=MAX_PAYS,
        concealed_kong_pays=MAX_PAYS,
        flower_pig_pays=MAX_PAYS,
        self_draw_bonus="fan",
        haidi=True,
        jingou=True,
    )
    t = get_tables()
    from sichuan_env.engine.selfplay import GREEDY, play_batch

    n = 2000
    states = np.zeros(n, dtype=STATE_DTYPE)
    play_batch(
        states,
        np.arange(n, dtype=np.uint64),
        GREEDY,
        kernel_rules(rules),
        t["FLAGS"],
        t["WAITS"],
        t["DIST"],
    )
    scores = states["scores"]
    assert (scores.sum(axis=1) == 0).all()
    assert np.abs(scores).max() <= payment_bound()
    assert np.abs(scores).max() >= MAX_BASE_POINTS * 8  # big payments did happen
    assert (states["win_points"][states["won"] > 0] > 0).all()


# ------------------------------------------------------------------------------ VectorEnv


@pytest.fixture
def venv():
    v = VectorEnv(6, seed=4)
    v.reset()
    return v


def _legal_actions(mask):
    return mask.argmax(axis=1)


@pytest.mark.parametrize(
    ("make", "exc", "match"),
    [
        (lambda a: a.astype(np.float64), TypeError, "integer"),
        (lambda a: a.astype(np.bool_), TypeError, "integer"),
        (lambda a: a.astype(str), TypeError, "integer"),
        (lambda a: a.astype(object), TypeError, "integer"),
        (lambda a: a[:-1], ValueError, "shape"),
        (lambda a: a.reshape(2, 3), ValueError, "shape"),
        (
            lambda a: np.where(np.arange(6) == 2, np.uint64(2**64 - 1), a.astype(np.uint64)),
            IllegalActionError,
            r"slots \[2\].*18446744073709551615",
        ),
        (lambda a: np.where(np.arange(6) == 4, -1, a), IllegalActionError, r"slots \[4\]"),
        (lambda a: np.where(np.arange(6) == 5, 88, a), IllegalActionError, r"slots \[5\]"),
    ],
)
def test_bad_action_batches_are_rejected_whole(venv, make, exc, match):
    for _ in range(30):  # reach a state where some slots end their hands on the next step
        venv.step(_legal_actions(venv._masks))
    actions = _legal_actions(venv._masks)
    rejects(venv, lambda: venv.step(make(actions)), exc, match)
    venv.step(actions)  # the untouched batch still steps


def test_one_illegal_slot_moves_no_slot_and_loses_no_reward(venv):
    mask = venv._masks.copy()
    actions = _legal_actions(mask)
    actions[3] = int(np.flatnonzero(mask[3] == 0)[0])
    rejects(venv, lambda: venv.step(actions), IllegalActionError, r"slots \[3\].*no slot moved")


def test_masks_handed_out_are_copies(venv):
    _, mask, _ = venv.reset()
    illegal = int(np.flatnonzero(mask[0] == 0)[0])
    mask[:] = 1  # writing into what we were given changes nothing
    actions = _legal_actions(venv._masks)
    actions[0] = illegal
    rejects(venv, lambda: venv.step(actions), IllegalActionError)
    with pytest.raises(ValueError):
        venv.states["scores"][0, 0] = 5


def test_vector_env_arguments_and_order():
    fresh = VectorEnv(2, seed=0)
    rejects(fresh, lambda: fresh.step(np.zeros(2, np.int64)), RuntimeError, "reset")
    rejects(fresh, lambda: fresh.observe(), RuntimeError, "reset")
    for bad, exc in (
        (True, TypeError),
        (2.0, TypeError),
        (0, ValueError),
        (-3, ValueError),
        ("4", TypeError),
    ):
        with pytest.raises(exc, match="num_envs"):
            VectorEnv(bad)
    for bad, exc in ((True, TypeError), (-1, ValueError), (2**64, ValueError), (1.5, TypeError)):
        with pytest.raises(exc, match="seed"):
            VectorEnv(2, seed=bad)
    with pytest.raises(TypeError, match="oracle"):
        VectorEnv(2, oracle="yes")
    with pytest.raises(TypeError, match="RuleConfig"):
        VectorEnv(2, rules="xuezhan")
    with pytest.raises(ValueError, match="observation version"):
        VectorEnv(2, obs_version=12345)
    v = VectorEnv(3, seed=0)
    v.reset()
    for bad, exc in (
        ([-1, 2, 3], ValueError),
        ([1.5, 2, 3], TypeError),
        ([True, False, True], TypeError),
        ([2**64, 1, 1], ValueError),
        ([1, 2], ValueError),
        (["1", "2", "3"], TypeError),
    ):
        rejects(v, lambda bad=bad: v.reset(seeds=bad), exc, "seeds")
    v.reset(seeds=[2**64 - 1, 0, 2**63])
    for bad, exc in ((1.5, TypeError), (True, TypeError), (-1, ValueError), (3, ValueError)):
        rejects(v, lambda bad=bad: v.record(bad), exc, "slot")
        rejects(v, lambda bad=bad: v.game(bad), exc, "slot")


def test_run_seeds_never_collide_in_a_slot():
    walls = {}
    for seed in (0, 1, 2**62, 2**63, 2**64 - 1, 2**62 + 1):
        v = VectorEnv(4, seed=seed)
        v.reset()
        for i, w in enumerate(v.states["wall"]):
            key = w.tobytes()
            assert key not in walls, (seed, i, walls.get(key))
            walls[key] = (seed, i)
    # the same seed always deals the same hands, whatever else changes
    a, b = VectorEnv(4, seed=2**62), VectorEnv(4, seed=2**62)
    a.reset()
    b.reset()
    assert np.array_equal(a.states["wall"], b.states["wall"])


def test_slot_seeds_are_a_bijection_per_slot():
    seeds = np.arange(10_000, dtype=np.uint64)
    firsts = np.array([batch.slot_seeds(int(s), 3)[1] for s in seeds[:2000]])
    assert len(set(firsts.tolist())) == 2000


# ------------------------------------------------------------------------------ AEC env


@pytest.mark.parametrize("bad", [None, "abc", 11.7, "11", True, np.float32(3), 2**70, -1, 88, [1]])
def test_aec_step_rejects_before_touching_rewards(bad):
    env = sichuan_env.env()
    env.reset(seed=5)
    raw = env.unwrapped
    # give the selected agent some accumulated reward to lose
    for _ in range(60):
        agent = raw.agent_selection
        if raw._cumulative_rewards[agent] != 0:
            break
        obs = raw.observe(agent)
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert raw._cumulative_rewards[raw.agent_selection] != 0
    rejects(env, lambda: env.step(bad), IllegalActionError, "action")


def test_aec_order_and_arguments():
    raw = sichuan_env.raw_env()
    for call in (
        lambda: raw.observe("player_0"),
        lambda: raw.step(0),
        lambda: raw.last(),
        lambda: raw.render(),
    ):
        with pytest.raises(RuntimeError, match="reset"):
            call()
    raw.reset(seed=1)
    with pytest.raises(ValueError, match="unknown agent"):
        raw.observe("player_9")
    for bad, exc in ((True, TypeError), (-1, ValueError), (1.5, TypeError)):
        with pytest.raises(exc, match="seed"):
            raw.reset(seed=bad)
    with pytest.raises(TypeError, match="oracle"):
        sichuan_env.raw_env(oracle=1)
    env = sichuan_env.env()
    env.reset(seed=3)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not env.agents
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.last()
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(0)


def test_action_space_constant():
    assert ACTION_SPACE == 88


def test_check_invariants_catches_a_forged_win():
    """What the mutable-mask attack once produced: a non-winning hand "winning" 2^62 points."""
    from sichuan_env.engine.invariants import InvariantError

    game = Game(seed=11)
    while not game.is_over() and not game.wins():
        game.step(
            next(a for a in game.legal() if a != "hu") if len(game.legal()) > 1 else game.legal()[0]
        )
    check_invariants(game)
    forged = game.state.copy()
    loser = next(s for s in range(4) if not forged["won"][s])
    forged["won"][loser] = 1
    forged["n_won"] += 1
    forged["win_fan"][loser] = 63
    forged["win_points"][loser] = 2**62
    forged["win_base"][loser] = 0
    forged["win_from"][loser] = (loser + 1) % 4  # "won" on a discard: the hand keeps 13 tiles
    forged["win_tile"][loser] = int(np.flatnonzero(forged["hands"][loser] < 3)[0])
    forged["scores"][loser] += 2**62
    forged["scores"][(loser + 1) % 4] -= 2**62
    check_invariants(forged)  # without the rules only the bookkeeping is checked...
    with pytest.raises(InvariantError, match=r"fan 63|pays"):
        check_invariants(forged, game.rules)  # ...with them, the win itself
    forged["win_fan"][loser] = 2
    forged["win_points"][loser] = 2
    with pytest.raises(InvariantError, match=r"not a legal win|malformed"):
        check_invariants(forged, game.rules)
    with pytest.raises(TypeError, match="RuleConfig"):
        check_invariants(forged, {"base_points": 1})
