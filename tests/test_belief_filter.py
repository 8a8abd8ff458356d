"""The policy-aware belief filter: the true wall is consistent, samples are, hidden facts do not leak."""

import numpy as np
import pytest

from agents.belief_filter import (
    BeliefFilter,
    energy,
    public_inputs,
    public_view,
    replay_wall,
    sample_wall,
)
from agents.heuristic import decide
from sichuan_env import RuleConfig
from sichuan_env.encoding.v1 import encode_at
from sichuan_env.engine.game import Game
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

HEADS = ("tenpai", "waits", "hand", "deal_in")


def heuristic_game(seed: int) -> Game:
    """Four heuristics play ``Game(seed=seed)`` to the end."""
    g = Game(seed=seed)
    dist = get_tables()["DIST"]
    rules = kernel_rules(g.rules)
    obs = np.zeros((83, 27), dtype=np.uint8)
    while not g.is_over():
        encode_at(g._st, 0, g.to_act(), False, rules, obs)
        g.step_id(int(decide(obs, g.legal_mask(), dist)))
    return g


def replayed(rules: RuleConfig, wall: np.ndarray, dealer: int, log: np.ndarray) -> Game:
    """A real ``Game`` on ``wall`` after the decisions of ``log`` (seat * 128 + action)."""
    g = Game(rules, wall=wall, dealer=dealer)
    for code in log:
        g.step_id(int(code) % 128)
    return g


@pytest.mark.parametrize("seed", [3, 11])
def test_the_true_wall_is_consistent_at_every_decision(seed):
    g = heuristic_game(seed)
    wall = g.state["wall"]
    for seat in range(4):
        for d, *_ in public_inputs(g, seat):
            assert energy(g, seat, d, wall) == 0, (seat, d)


def test_other_walls_are_rejected():
    g = heuristic_game(3)
    d = public_inputs(g, 1)[-1][0]
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert energy(g, 1, d, rng.permutation(g.state["wall"])) > 0


def test_public_view_pins_only_true_tiles():
    g = heuristic_game(5)
    d, tokens, _, _ = public_inputs(g, 2)[-1]
    v = public_view(tokens, 2)
    wall = g.state["wall"]
    known = v.pin >= 0
    dealt = np.arange(108) < 53  # the seat's own deal: the tiles, in any order within its block
    assert sorted(wall[known & dealt]) == sorted(v.pin[known & dealt])
    assert np.array_equal(wall[known & ~dealt], v.pin[known & ~dealt])  # draws, 摸切, 自摸
    assert (v.owner[known] >= 0).all()  # only positions already taken are known
    assert v.dealer == int(g.state["dealer"])
    st = g.state
    now = replayed(g.rules, st["wall"], v.dealer, st["log"][:d])
    assert v.undrawn.size == now.wall_left()


def test_sampled_walls_explain_the_public_history():
    g = heuristic_game(7)
    rows = public_inputs(g, 0)
    found = 0
    for d, *_ in rows[2:8:2]:
        wall, e = sample_wall(g, 0, d, burn=20000, seed=d)
        if e != 0:
            continue
        found += 1
        e2, st = replay_wall(g, 0, d, wall)
        assert e2 == 0
        world = replayed(g.rules, wall, int(g.state["dealer"]), st["log"][: int(st["n_log"])])
        real = replayed(g.rules, g.state["wall"], int(g.state["dealer"]), g.state["log"][:d])
        assert world.to_act() == 0 == real.to_act()
        for seat in range(4):  # everything public is the same
            assert world.discards(seat) == real.discards(seat)
            assert world.melds(seat) == real.melds(seat)
        assert world.hand(0) == real.hand(0)
    assert found


def test_beliefs_are_probabilities():
    g = heuristic_game(7)
    p = BeliefFilter(particles=2, steps=16, burn=1000, seed=1).predict_game(g, 0)
    n = len(public_inputs(g, 0))
    assert p["tenpai"].shape == (n, 3) and p["waits"].shape == (n, 3, 27)
    assert p["hand"].shape == (n, 3, 27) and p["deal_in"].shape == (n, 27)
    for key in HEADS:
        assert np.isfinite(p[key]).all() and (p[key] >= 0).all() and (p[key] <= 1).all()
    assert p["exact"].any()


def test_hidden_facts_do_not_change_the_output():
    """A world whose opponents hold other tiles but that looks the same to the seat: same beliefs."""
    g = heuristic_game(7)
    dealer = int(g.state["dealer"])
    rows = public_inputs(g, 0)
    for d, *_ in rows[3:9]:
        wall, e = sample_wall(g, 0, d, burn=20000, seed=d)
        _, st = replay_wall(g, 0, d, wall)
        if e != 0:
            continue
        world = replayed(g.rules, wall, dealer, st["log"][: int(st["n_log"])])
        real = replayed(g.rules, g.state["wall"], dealer, g.state["log"][:d])
        if np.array_equal(world.state["hands"][1:], real.state["hands"][1:]):
            continue
        f = BeliefFilter(particles=2, steps=8, burn=500, seed=3)
        a = f.predict_game(real, 0, [d])
        b = f.predict_game(world, 0, [int(world.state["n_log"])])
        assert len(a["tenpai"]) == len(b["tenpai"]) == 1
        for key in HEADS:
            assert np.array_equal(a[key], b[key]), key
        return
    pytest.fail("no sampled world with other hidden hands")


def test_bad_arguments():
    g = Game(seed=1)
    with pytest.raises(TypeError):
        BeliefFilter(steps=1.5)
    with pytest.raises(ValueError):
        BeliefFilter(burn=-1)
    with pytest.raises(ValueError):
        BeliefFilter(temp=0)
    with pytest.raises(TypeError):
        BeliefFilter().predict_game("game", 0)
    with pytest.raises(ValueError):
        BeliefFilter().predict_game(g, 4)
    with pytest.raises(ValueError):
        BeliefFilter().predict_game(Game(RuleConfig(exchange_three=True), seed=1), 0)
    with pytest.raises(ValueError):
        public_view(np.array([5, 6, 7]), 0)
    other = (int(g.state["dealer"]) + 1) % 4
    with pytest.raises(ValueError):
        energy(g, other, 0, g.state["wall"])  # decision 0 is the dealer's


def test_particles_must_be_positive():
    with pytest.raises(ValueError):
        BeliefFilter(particles=0)


def test_prediction_file_roundtrip(tmp_path):
    from train.belief_filter_eval import load_preds, save_preds

    row = {
        "tenpai": np.full(3, 0.25, np.float32),
        "waits": np.full((3, 27), 0.5, np.float32),
        "hand": np.zeros((3, 27), np.float32),
        "deal_in": np.ones(27, np.float32),
        "exact": np.bool_(True),
        "proposals": np.int64(7),
    }
    save_preds(tmp_path / "f.npz", {(4, 9): row})
    back = load_preds(tmp_path / "f.npz")
    assert list(back) == [(4, 9)]
    for key, value in row.items():
        assert np.array_equal(back[(4, 9)][key], value)
    (tmp_path / "bad.npz").write_bytes(b"not a file of predictions")
    with pytest.raises(ValueError):
        load_preds(tmp_path / "bad.npz")
    row["hand"] = row["hand"] + 2  # out of range
    save_preds(tmp_path / "g.npz", {(0, 0): row})
    with pytest.raises(ValueError):
        load_preds(tmp_path / "g.npz")


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--filter"], "--filter needs --games"), (["--games", "0"], "--games must be >= 1")],
)
def test_report_cli_asks_for_games_before_filtering(tmp_path, capsys, extra, message):
    from train import belief_report

    with pytest.raises(SystemExit) as exc:
        belief_report.main(["none", "--data", str(tmp_path), *extra])
    assert exc.value.code == 2 and message in capsys.readouterr().err
