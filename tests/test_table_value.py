"""The whole-table value network (agents/eval/table_*): its rows are the engine's states, its
counterfactuals are real states of other walls, its batched counterfactual pass equals one
forward pass per state, it is zero-sum and seat-symmetric, and its corrections have zero
mean and are refused when not finite."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck_events import extract, record_log
from sichuan_env.agents.eval.luck_replay import table_planes
from sichuan_env.agents.eval.table_net import TableValueConfig, TableValueNet
from sichuan_env.agents.eval.table_rows import (
    VOCAB,
    counterfactual,
    rows_of,
    seat_ids,
    vocab_id,
)
from sichuan_env.agents.eval.table_value import NonFiniteValueError, TableModel

from sichuan_env import RuleConfig
from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal
from sichuan_env.engine.state import PH_TURN, STATE_DTYPE
from sichuan_env.engine.step import apply
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

RULES = RuleConfig.preset("xuezhan")
LINEUP = ["heuristic", "random", "distill", "defensive"]


def _model(seed: int = 0, scale: float = 1.0) -> TableModel:
    torch.manual_seed(seed)
    net = TableValueNet(TableValueConfig(seat=16, head=16, embed=4))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
    doc = {"rules": RULES.to_dict(), "deal_baseline": [0.0] * 4, "vocab": list(VOCAB)}
    return TableModel(net, doc)


@pytest.fixture(scope="module")
def records():
    return play_duplicate(LINEUP, 6, RULES, seed=3, progress=False)


@pytest.fixture(scope="module")
def events(records):
    recs = [r for _, _, r in records]
    ids = np.stack([seat_ids(LINEUP, rot) for _, rot, _ in records])
    return extract(recs, RULES), ids


def test_vocab_ids_resolve_aliases_and_unknowns():
    assert vocab_id("distill-search64-after-win") == VOCAB.index("distill-search64-after-win")
    assert vocab_id("strongest") == 0  # re-pointed to an agent after the vocabulary
    assert vocab_id("strongest", aliases={"strongest": "distill-search64-after-win"}) == (
        VOCAB.index("distill-search64-after-win")
    )
    assert vocab_id("strongest-net") == 0  # its target came after the vocabulary
    assert vocab_id("strongest-net", aliases={"strongest-net": "distill-guard"}) == VOCAB.index(
        "distill-guard"
    )
    assert vocab_id("runs/ppo/best.pt") == 0 and vocab_id("distil") == 0
    ids = seat_ids(["a", "heuristic", "b", "random"], 1)
    assert list(ids) == [vocab_id("heuristic"), 0, vocab_id("random"), 0]


@njit
def _state_at(states, wall, dealer, offset, log, n_log, rules, flags, waits, target):
    """Replay into ``states[0]`` up to draw event ``target``; returns 1 when it got there."""
    deal(states, 0, wall, dealer, offset, rules)
    st = states[0]
    e = 1
    for j in range(n_log):
        before = st.draws.sum()
        apply(st, log[j] % 128, rules, flags, waits)
        if st.draws.sum() > before and st.phase == PH_TURN and st.drawn:
            if e == target:
                return 1
            e += 1
    return 0


@njit
def _planes_after_swap(states, wall, dealer, offset, log, n_log, rules, flags, waits, target, t,
                       tiles, wallc, voids):  # fmt: skip
    """At draw event ``target``, swap a later copy of ``t`` into the drawer's hand, and take
    the planes of that (real) state; returns the drawn tile, or -1 when not possible."""
    if not _state_at(states, wall, dealer, offset, log, n_log, rules, flags, waits, target):
        return -1
    st = states[0]
    drawn = st.drawn_tile
    if drawn == t:
        return -1
    for q in range(st.head, st.tail + 1):
        if st.wall[q] == t:
            st.wall[q] = drawn
            st.hands[st.to_act, drawn] -= 1
            st.hands[st.to_act, t] += 1
            table_planes(st, tiles, wallc, voids)
            return drawn
    return -1


def test_rows_are_the_states_and_counterfactuals_are_real_states(records, events):
    ev, ids = events
    rows = rows_of(ev, ids)
    assert len(rows["y"]) == int(ev.n_events.sum())
    assert (rows["y"][rows["deal"]] == ev.final).all()  # at the deal every point is still to come
    assert rows["tiles"].max() <= 4 and rows["wallc"].max() <= 4
    dealt = rows["tiles"][rows["deal"]][:, :, 0].sum(axis=2)  # concealed tiles per seat
    assert (np.sort(dealt, axis=1) == [13, 13, 13, 14]).all()
    assert (rows["wallc"][rows["deal"]].sum(axis=1) == 55).all()
    tables, rules = get_tables(), kernel_rules(RULES)
    rng = np.random.default_rng(0)
    checked = 0
    for i, (_, _, rec) in enumerate(records[:12]):
        wall, dealer, offset, log = record_log(rec)
        for e in rng.choice(np.arange(1, ev.n_events[i]), size=4, replace=False):
            for t in np.flatnonzero(ev.probs[i, e] > 0):
                states = np.zeros(1, dtype=STATE_DTYPE)
                tiles = np.zeros((4, 3, 27), np.uint8)
                wallc = np.zeros(27, np.uint8)
                voids = np.zeros(4, np.int8)
                drawn = _planes_after_swap(states, wall, dealer, offset, log, log.size, rules,
                                           tables["FLAGS"], tables["WAITS"], int(e), int(t),
                                           tiles, wallc, voids)  # fmt: skip
                if drawn < 0:
                    continue
                assert drawn == ev.actual[i, e]
                want_t, want_w = counterfactual(
                    ev.tiles[i, e], ev.wallc[i, e], int(ev.drawer[i, e]), int(drawn), int(t)
                )
                assert (tiles == want_t).all() and (wallc == want_w).all()
                checked += 1
    assert checked > 100


def test_batched_counterfactuals_equal_one_pass_per_state(events):
    ev, ids = events
    model = _model(1)
    i, e = 2, 9
    drawer, drawn = int(ev.drawer[i, e]), int(ev.actual[i, e])
    base = {"tiles": ev.tiles[i, e][None], "wallc": ev.wallc[i, e][None],
            "voids": ev.voids[i, e][None], "so_far": ev.scores_at[i, e][None].astype(np.int32),
            "lineup": ids[i][None], "deal": np.zeros(1, bool)}  # fmt: skip
    tb = {k: torch.from_numpy(v) for k, v in base.items()}
    tb["feats"] = torch.from_numpy(ev.feats[i, e, drawn][None])
    with torch.no_grad():
        cf = model.net.counterfactual_values(
            tb, torch.from_numpy(ev.feats[i, e][None]), torch.tensor([drawer]),
            torch.tensor([drawn]),
        )[0].numpy()  # fmt: skip
    compared = 0
    for t in np.flatnonzero(ev.probs[i, e] > 0):
        tiles, wallc = counterfactual(ev.tiles[i, e], ev.wallc[i, e], drawer, drawn, int(t))
        one = dict(base, tiles=tiles[None], wallc=wallc[None], feats=ev.feats[i, e, t][None])
        np.testing.assert_allclose(model.values(one)[0], cf[t], rtol=1e-4, atol=1e-4)
        compared += 1
    assert compared >= 10


def test_values_are_zero_sum_and_rotate_with_the_seats(events):
    ev, ids = events
    model = _model(2)
    rows = rows_of(ev, ids)
    v = model.values(rows)
    np.testing.assert_allclose(v.sum(axis=1), 0, atol=1e-4)
    rot = {k: (np.roll(a, 1, axis=1) if k in ("tiles", "voids", "feats", "so_far", "lineup")
               else a) for k, a in rows.items()}  # fmt: skip
    np.testing.assert_allclose(model.values(rot), np.roll(v, 1, axis=1), atol=1e-4)


def test_corrections_have_zero_mean_at_every_draw(records, events):
    ev, ids = events
    model = _model(3)
    c = model.corrections_of(ev, ids)
    assert np.isfinite(c.total).all() and np.abs(c.draw).sum() > 0
    np.testing.assert_allclose(c.total.sum(axis=1), 0, atol=1e-3)  # zero-sum like the points
    # the deal's correction does not see the lineup: a wall's four rotations cancel exactly
    per_agent = np.zeros((max(w for w, _, _ in records) + 1, 4))
    for (w, r, _), d in zip(records, c.deal, strict=True):
        per_agent[w] += np.roll(d, r)  # agent a sits in seat (a - r) % 4
    assert np.abs(c.deal).max() > 1e-3
    np.testing.assert_allclose(per_agent, 0, atol=1e-4)


def test_an_overflowing_model_is_refused_in_one_line(records):
    model = _model(4, scale=1e30)
    with pytest.raises(NonFiniteValueError, match="non-finite values"):
        model.corrections([r for _, _, r in records[:4]])


def test_cross_fitted_corrections_fit_on_the_other_half_only(records, events, monkeypatch):
    from sichuan_env.agents.eval import table_finetune as tf

    _, ids = events
    model = _model(5)
    seen: list[set[int]] = []
    real = tf._rows

    def spy(m, recs, lineups):
        seen.append({id(r) for r in recs})
        return real(m, recs, lineups)

    monkeypatch.setattr(tf, "_rows", spy)
    c = tf.cross_fitted_corrections(model, records, ids, epochs=1)
    assert len(seen) == 2
    by_wall = {id(r): w for w, _, r in records}
    halves = [{by_wall[i] % 2 for i in s} for s in seen]
    assert halves == [{1}, {0}]  # each half's model was fitted on the other half's walls
    plain = model.corrections([r for _, _, r in records], ids)
    assert not np.allclose(c.draw, plain.draw)  # the fine-tuned copies differ from V
    np.testing.assert_allclose(c.total.sum(axis=1), 0, atol=1e-3)
    per_agent = np.zeros((max(w for w, _, _ in records) + 1, 4))
    for (w, r, _), d in zip(records, c.deal, strict=True):
        per_agent[w] += np.roll(d, r)
    np.testing.assert_allclose(per_agent, 0, atol=1e-4)
    few = [i for i, (w, _, _) in enumerate(records) if w < 3]
    with pytest.raises(ValueError, match="at least 4 walls"):
        tf.cross_fitted_corrections(model, [records[i] for i in few], ids[few])


def test_state_values_are_the_values_of_the_replayed_rows(records, events):
    from sichuan_env.agents.eval.table_states import state_values

    ev, ids = events
    model = _model(6)
    rows = rows_of(ev, ids)
    start = np.concatenate([[0], np.cumsum(ev.n_events)[:-1]])
    tables, rules = get_tables(), kernel_rules(RULES)
    states = np.zeros(8, dtype=STATE_DTYPE)
    picks = []
    for i in range(8):
        wall, dealer, offset, log = record_log(records[i][2])
        e = int(ev.n_events[i]) // 2
        one = np.zeros(1, dtype=STATE_DTYPE)
        assert _state_at(one, wall, dealer, offset, log, log.size, rules, tables["FLAGS"],
                         tables["WAITS"], e) == 1  # fmt: skip
        states[i] = one[0]
        picks.append(start[i] + e)
    before = states.copy()
    got = state_values(model, states, RULES, ids[:8])
    want = model.values({k: v[picks] for k, v in rows.items()})
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert (states == before).all()  # read only
    exp = state_values(model, states, RULES, ids[:8], expected=True)
    p = ev.probs[np.arange(8), ev.n_events[:8] // 2].astype(np.float64)
    assert exp.shape == (8, 4) and not np.allclose(exp, got) and (p > 0).sum() > 8
    bad = states.copy()
    bad["phase"][3] = 3  # a claim window
    with pytest.raises(ValueError, match=r"states \[3\] are not right after a draw"):
        state_values(model, bad, RULES)
    with pytest.raises(TypeError):
        state_values(model, np.zeros(2), RULES)


def test_the_head_by_linearity_is_the_head_of_the_rotated_inputs():
    from sichuan_env.agents.eval.table_net import ROTATIONS

    torch.manual_seed(0)
    net = TableValueNet(TableValueConfig(seat=16, head=8))
    pre, g = torch.randn(5, 4, 16), torch.randn(5, 29)
    e = torch.relu(net.seat2(torch.relu(pre)))
    rot = e[..., ROTATIONS, :]  # seat k sees the seats k, k+1, k+2, k+3
    z = torch.cat([rot.flatten(-2), g.unsqueeze(-2).expand(5, 4, 29)], -1)
    v = net.out(torch.relu(net.head2(torch.relu(net.head1(z))))).squeeze(-1)
    torch.testing.assert_close(net.head_values(pre, g), v - v.mean(-1, keepdim=True))


def test_a_net_without_planes_reads_no_tiles_and_old_archs_load(events):
    ev, ids = events
    rows = rows_of(ev, ids)
    torch.manual_seed(0)
    net = TableValueNet(TableValueConfig(seat=16, head=16, embed=4, planes=0))
    doc = {"rules": RULES.to_dict(), "deal_baseline": [0.0] * 4, "vocab": list(VOCAB)}
    model = TableModel(net, doc)
    other = dict(rows, tiles=np.zeros_like(rows["tiles"]))
    np.testing.assert_allclose(model.values(rows), model.values(other), atol=1e-6)
    old = {"seat": 16, "head": 16, "embed": 4, "vocab": len(VOCAB), "obs_version": 1}
    assert TableValueConfig.from_dict(old).planes == 1
    with pytest.raises(ValueError, match="planes"):
        TableValueConfig.from_dict({**old, "planes": 2})


def test_sichuan_eval_fine_tune_runs_cross_fitted_and_refuses_what_it_cannot_do(tmp_path, capsys):
    from sichuan_env.agents.eval import cli

    out = tmp_path / "r.json"
    doc = cli.main(["--lineup", "heuristic", "random", "random", "random", "--walls", "8",
                    "--value-model", "table_value", "--fine-tune", "1", "--quiet",
                    "--json", str(out)])  # fmt: skip
    assert doc["adjusted"] and doc["agents"]["heuristic"]["points_per_hand_adjusted"] is not None
    base = ["--lineup", "heuristic", "random", "random", "random", "--walls", "8", "--quiet"]
    for extra, why in ((["--fine-tune", "1"], "add --value-model table_value"),
                       (["--fine-tune", "1", "--value-model", "table_value", "--target-ci", "0.1"],
                        "does not take --target-ci"),
                       (["--fine-tune", "1", "--no-adjust"], "drop --no-adjust")):  # fmt: skip
        with pytest.raises(SystemExit) as exc:
            cli.main(base + extra)
        assert exc.value.code == 2
        assert why in capsys.readouterr().err
