"""The policy-aware belief filter: the true wall is consistent, samples are, hidden facts do not leak."""

import numpy as np
import pytest
from sichuan_env.agents.rule_based.heuristic import decide

import research.hand_reading.filter_kernels as K
from research.hand_reading.filter import (
    BeliefFilter,
    _row,
    _scratch,
    energy,
    public_inputs,
    public_view,
    replay_wall,
    sample_wall,
)
from research.hand_reading.filter_moves import _from_ck, chain, redraw, replay_rec
from sichuan_env import RuleConfig
from sichuan_env.encoding.v1 import encode_at
from sichuan_env.engine.game import Game
from sichuan_env.engine.state import STATE_DTYPE
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


def same_looking_world(g: Game, decisions) -> tuple[Game, Game, int] | None:
    """``(real, world, d)``: ``g`` stopped at the first of ``decisions`` where a sampled wall
    replays into the same public history for seat 0 with other hidden hands, and that world.
    """
    dealer = int(g.state["dealer"])
    for d in decisions:
        wall, e = sample_wall(g, 0, d, burn=20000, seed=d)
        _, st = replay_wall(g, 0, d, wall)
        if e != 0:
            continue
        world = replayed(g.rules, wall, dealer, st["log"][: int(st["n_log"])])
        real = replayed(g.rules, g.state["wall"], dealer, g.state["log"][:d])
        if not np.array_equal(world.state["hands"][1:], real.state["hands"][1:]):
            return real, world, d
    return None


def test_hidden_facts_do_not_change_the_output():
    """A world whose opponents hold other tiles but that looks the same to the seat: same beliefs."""
    g = heuristic_game(7)
    found = same_looking_world(g, [d for d, *_ in public_inputs(g, 0)[3:9]])
    if found is None:
        pytest.fail("no sampled world with other hidden hands")
    real, world, d = found
    f = BeliefFilter(particles=2, steps=8, burn=500, seed=3)
    a = f.predict_game(real, 0, [d])
    b = f.predict_game(world, 0, [int(world.state["n_log"])])
    assert len(a["tenpai"]) == len(b["tenpai"]) == 1
    for key in HEADS:
        assert np.array_equal(a[key], b[key]), key


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
    from research.hand_reading.filter_eval import load_preds, save_preds

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
    import research.hand_reading.report as belief_report

    with pytest.raises(SystemExit) as exc:
        belief_report.main(["none", "--data", str(tmp_path), *extra])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def _kernel_args(g: Game, seat: int, d: int):
    """The replay arguments of ``seat``'s decision ``d`` (after ``states, wall``), and its view."""
    v, own, target = _row(g, seat, d)
    t = get_tables()
    sc = _scratch()
    args = (v.dealer, kernel_rules(g.rules), t["FLAGS"], t["WAITS"], t["DIST"], seat, v.events,
            len(v.events), v.voids, own, len(own), target, *sc[:4])  # fmt: skip
    return v, args, sc[5], sc[6]


def test_a_replay_resumed_from_a_checkpoint_matches_a_full_one():
    """The state before a draw, replayed with other tiles there and in the undrawn wall."""
    g = heuristic_game(3)
    seat = 1
    d = public_inputs(g, seat)[-1][0]
    v, args, ck, ckv = _kernel_args(g, seat, d)
    states = np.zeros(1, dtype=STATE_DTYPE)
    wall = g.state["wall"].copy()
    draws = np.flatnonzero((v.when >= 0) & (v.owner != seat) & (v.pin < 0))
    assert draws.size
    rng = np.random.default_rng(0)
    energies = set()
    for p in draws[:6]:
        assert replay_rec(p, states, ck, ckv, wall, *args) == 0
        for _ in range(8):
            w2 = wall.copy()
            u = rng.choice(v.undrawn)
            w2[p], w2[u] = w2[u], w2[p]
            w2[v.undrawn] = rng.permutation(w2[v.undrawn])
            full = K.replay(states, w2, *args)
            assert _from_ck(p, K.BIG, states, ck, ckv, w2, *args) == full
            energies.add(full)
    assert len(energies) > 1  # both consistent and inconsistent walls were compared


@pytest.mark.parametrize("seat", [0, 2])
def test_redraw_keeps_the_tiles_and_the_public_history(seat):
    """A redraw trades one opponent tile with the undrawn wall; at energy 0 it stays at 0."""
    g = heuristic_game(11)
    d = public_inputs(g, seat)[-2][0]
    v, args, ck, ckv = _kernel_args(g, seat, d)
    states = np.zeros(1, dtype=STATE_DTYPE)
    wall = g.state["wall"].copy()
    movable = np.flatnonzero((v.owner >= 0) & (v.owner != seat) & (v.pin < 0))
    rng = np.full(1, np.uint64(7), dtype=np.uint64)
    fixed = np.ones(108, dtype=bool)
    fixed[movable] = False
    fixed[v.undrawn] = False
    moved = 0
    for p in movable:
        before = wall.copy()
        e, n = redraw(p, v.undrawn, 0, 0, 0.7, rng, states, ck, ckv, wall, *args)
        assert e == 0 and n >= 2
        assert np.array_equal(np.sort(wall), np.sort(before))  # the same 108 tiles
        changed = np.flatnonzero(wall != before)
        assert changed.size in (0, 2)
        moved += changed.size == 2
        assert set(changed) <= {p, *v.undrawn}
        assert np.array_equal(wall[fixed], before[fixed])
        assert energy(g, seat, d, wall) == 0
    assert moved > 0  # some redraw did trade a tile (a sampler that never moves fails here)
    g2 = heuristic_game(11)
    assert energy(g2, seat, d, g2.state["wall"]) == 0  # the true wall is consistent


def test_redraw_repairs_a_changed_draw():
    """Burning in (energy > 0), a redraw of the tile that broke the history can restore it."""
    g = heuristic_game(3)
    seat = 2
    d = public_inputs(g, seat)[-1][0]
    v, args, ck, ckv = _kernel_args(g, seat, d)
    states = np.zeros(1, dtype=STATE_DTYPE)
    draws = np.flatnonzero((v.when >= 0) & (v.owner != seat) & (v.pin < 0))
    rng = np.full(1, np.uint64(1), dtype=np.uint64)
    repaired = 0
    for p in draws:
        wall = g.state["wall"].copy()
        u = next((u for u in v.undrawn if wall[u] != wall[p]), None)
        wall[p], wall[u] = wall[u], wall[p]
        e = K.replay(states, wall, *args)
        if e == 0:
            continue
        e2, _ = redraw(p, v.undrawn, e, 2 * K.BIG, 0.05, rng, states, ck, ckv, wall, *args)
        assert e2 == K.replay(states, wall, *args)
        repaired += e2 == 0
    assert repaired


@pytest.mark.parametrize("slack", [0, 1])
def test_the_chain_keeps_the_tiles_and_ends_on_a_consistent_wall(slack):
    """Swaps and redraws from the true wall: walls above 0 may be visited, never kept or counted."""
    g = heuristic_game(7)
    seat = 3
    d = public_inputs(g, seat)[-3][0]
    v, args, ck, ckv = _kernel_args(g, seat, d)
    sc = _scratch()
    states = np.zeros(1, dtype=STATE_DTYPE)
    wall = g.state["wall"].copy()
    movable = np.flatnonzero((v.owner >= 0) & (v.owner != seat) & (v.pin < 0))
    pool = np.concatenate([movable, v.undrawn])
    sums = np.zeros((7, 28))
    e, n_prop, n_acc, n_s = chain(
        states, wall, movable, pool, v.undrawn, movable[-2:], v.owner, v.when, 0, 400, 0.7,
        0.3, slack, 5, *args, sc[4], sums, ck, ckv,
    )  # fmt: skip
    assert e == 0 and energy(g, seat, d, wall) == 0
    assert np.array_equal(np.sort(wall), np.sort(g.state["wall"]))
    known = v.pin >= 0
    assert np.array_equal(
        wall[known & (np.arange(108) >= 53)], v.pin[known & (np.arange(108) >= 53)]
    )
    assert 0 < n_s <= 400 and n_acc > 0 and n_prop > 400
    held = sums[3:6, :27] / n_s
    assert ((held >= 0) & (held <= 1)).all()
    if slack == 0:
        assert n_s == 400  # at slack 0 every move is at energy 0


def test_sampler_arguments():
    with pytest.raises(ValueError):
        BeliefFilter(redraws=1.5)
    with pytest.raises(ValueError):
        BeliefFilter(slack=-1)
    with pytest.raises(TypeError):
        BeliefFilter(slack=0.5)
