"""Expert-iteration labels (``sichuan_env.train.policy.exit_labels``): rows at the decisions a
network's play visits, claim answers searched, the network's own choices among the candidates,
deterministic, resumable shards that refuse another network."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sichuan_env.train.policy.exit_labels as el
import sichuan_env.train.policy.search_labels as sl
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.numba_policy import no_weights
from sichuan_env.agents.nn.torch_agent import TorchAgent, load_network
from sichuan_env.agents.search.rollout import MAX_CANDIDATES

from sichuan_env.engine.actions import DISCARD, HU, PASS, PONG, SELF_KONG
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.kernels.tables import get_tables

KW = {"samples": 4, "draws": 2, "gap": 1, "p_label": 0.5, "claims": True, "pool": 0.5}


@pytest.fixture(scope="module")
def net():
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    n, _ = load_network(f"{SHIPPED_DIR}/distill.pt")
    return n.eval()


@pytest.fixture(scope="module")
def shard(net):
    return el.label_shard(net, 5, 0, 8, **KW)


def test_rows_are_valid_labels_with_claims_searched(shard):
    rows, decisions = shard
    sl.check_labels(rows)
    n = len(rows["obs"])
    assert n > 30 and decisions > n
    c = rows["cands"].astype(np.int64)
    n_c = (c >= 0).sum(1)
    claim = rows["mask"][:, PASS] == 1  # a window: pass is legal (never on an own turn)
    assert claim.any() and (~claim).any()  # both kinds of decision were labelled
    for i in np.flatnonzero(claim):  # a claim row holds every legal answer, nothing else
        legal = np.flatnonzero(rows["mask"][i][PONG : PASS + 1]) + PONG
        assert sorted(c[i, : n_c[i]]) == sorted(legal)
    own = c[~claim]
    own_turn_actions = [*range(DISCARD, DISCARD + 27), *range(SELF_KONG, SELF_KONG + 27), HU]
    assert np.isin(own[own >= 0], own_turn_actions).all()
    base_act = c[np.arange(n), rows["base"]]
    assert (heuristic_choices(rows["obs"], rows["mask"]) == base_act).all()
    assert (rows["gain"][np.arange(n), rows["base"]] == 0).all()
    assert (rows["gain"][n_c >= 2] != 0).any() and (rows["se"] >= 0).all()
    assert set(np.unique(rows["hand"])) <= set(range(8))


def test_the_networks_best_actions_are_candidates(net, shard):
    rows, _ = shard
    _, extra = el.network_choices(net, rows["obs"], rows["mask"])
    c = rows["cands"].astype(np.int64)
    checked = 0
    for i in range(len(c)):
        for x in extra[i]:
            if x >= 0 and (c[i] >= 0).sum() < MAX_CANDIDATES:
                assert x in c[i]
                checked += 1
    assert checked > 20


def test_network_choices_are_the_agents_greedy_actions(net, shard):
    rows, _ = shard
    greedy, extra = el.network_choices(net, rows["obs"], rows["mask"])
    agent = TorchAgent(net, greedy=True)
    assert np.array_equal(greedy, agent.act_batch(rows["obs"], rows["mask"]))
    assert extra.shape == (len(greedy), el.EXTRA)
    legal = rows["mask"][np.arange(len(extra))[:, None], np.maximum(extra, 0)] == 1
    assert (legal | (extra < 0)).all()


def test_labels_are_deterministic(net, shard):
    again, dec = el.label_shard(net, 5, 0, 8, **KW)
    for k in sl.FIELDS:
        np.testing.assert_array_equal(shard[0][k], again[k])
    assert dec == shard[1]
    other, _ = el.label_shard(net, 6, 0, 8, **KW)
    assert len(other["obs"]) != len(again["obs"]) or not np.array_equal(other["obs"], again["obs"])


def test_setup_decisions_are_not_rows():
    t = get_tables()
    env = VectorEnv(2, seed=0)
    env.reset()
    states = env.states
    from sichuan_env.engine.state import PH_EXCHANGE, PH_VOID

    assert set(states["phase"]) <= {PH_EXCHANGE, PH_VOID}
    out = (np.full((2, MAX_CANDIDATES), -1, np.int16), np.zeros((2, MAX_CANDIDATES), np.float32),
           np.zeros((2, MAX_CANDIDATES), np.float32), np.zeros(2, np.int8), np.ones(2, bool))  # fmt: skip
    renv = (np.zeros(4, np.int64), env.rules.as_array(), t["FLAGS"], t["WAITS"], t["DIST"])
    el.label_rows(np.ascontiguousarray(states), np.zeros((2, 2), STATE_DTYPE),
                  np.full((2, 2), -1, np.int64), np.zeros(2, np.uint64), (4, 2, 1, True, False), renv,
                  (np.ones((2, 4), bool), no_weights()), *out)  # fmt: skip
    assert not out[4].any()


def test_cli_resumes_and_refuses_another_network(tmp_path, capsys):
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    out = tmp_path / "labels"
    base = [
        "--out",
        str(out),
        "--hands",
        "6",
        "--shard-hands",
        "3",
        "--samples",
        "2",
        "--threads",
        "1",
    ]
    s = el.main(["--net", f"{SHIPPED_DIR}/distill.pt", *base])
    assert s["shards"] == 2 and s["new_rows"] > 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["net_sha256"] and meta["settings"]["claims"] is True
    rows = sl.load_labels(out)
    assert len(rows["obs"]) == s["new_rows"]
    again = el.main(["--net", f"{SHIPPED_DIR}/distill.pt", *base, "--resume"])
    assert again["new_rows"] == 0  # every shard kept
    with pytest.raises(SystemExit):
        el.main(["--net", f"{SHIPPED_DIR}/distill.pt", *base])  # no --resume: refused
    with pytest.raises(SystemExit):
        el.main(["--net", f"{SHIPPED_DIR}/bc.pt", *base, "--resume"])  # another network
    assert "another network" in capsys.readouterr().err
    from sichuan_env.train.policy.search_distill import pooled_labels

    pooled, meta = pooled_labels([out, out], val_mod=10)
    n = len(rows["hand"])
    assert len(pooled["hand"]) == 2 * n and meta["settings"]["p_label"] == 0.35
    assert len(np.unique(pooled["hand"])) == 2 * len(np.unique(rows["hand"]))  # hands stay apart
    assert ((pooled["hand"][n:] % 10) == (rows["hand"] % 10)).all()  # and keep their split


def test_network_rollouts_give_other_values_on_the_same_rows(net, shard):
    """--rollout network: the same decisions are labelled (the draws do not depend on the rollouts),
    with other values (the network plays the rollouts), and the rows stay valid labels."""
    rows, _ = shard
    other, _ = el.label_shard(net, 5, 0, 8, **KW, rollout="network")
    sl.check_labels(other)
    np.testing.assert_array_equal(other["obs"], rows["obs"])
    np.testing.assert_array_equal(other["cands"], rows["cands"])
    multi = (rows["cands"] >= 0).sum(1) >= 2
    assert multi.sum() > 20 and (other["gain"][multi] != rows["gain"][multi]).any()
    assert (other["gain"][np.arange(len(other["base"])), other["base"]] == 0).all()


def test_network_rollouts_follow_the_network_in_its_seats():
    """run_mixed: with every seat the network, a hand plays as the numba network decides it, move by move."""
    from sichuan_env.agents.nn.net_cache import new_cache
    from sichuan_env.agents.nn.numba_policy import export, net_action, scratch
    from sichuan_env.agents.search.net_rollout import run_mixed

    from sichuan_env.engine.deal import deal_seed
    from sichuan_env.engine.step import apply

    agent = TorchAgent.load("distill")
    w = export(agent.net)
    obs, mask, *bufs = scratch(w)
    t = get_tables()
    rules = VectorEnv(1).rules.as_array()
    st = np.zeros(1, STATE_DTYPE)
    deal_seed(st, 0, np.uint64(11), rules)
    ref = st.copy()
    n = run_mixed(st[0], np.ones(4, np.bool_), w, np.zeros(4, np.int64), rules, t["FLAGS"],
                  t["WAITS"], obs, mask, t["DIST"], new_cache(w))  # fmt: skip
    assert n > 20 and int(st[0]["scores"].sum()) == 0
    for _ in range(n):  # the same hand, one net_action (no cache) at a time
        a = net_action(ref[0], w, rules, t["FLAGS"], obs, mask, t["DIST"], *bufs)
        assert a >= 0
        apply(ref[0], a, rules, t["FLAGS"], t["WAITS"])
    assert ref.tobytes() == st.tobytes()  # the same moves, the same end


def test_a_rollout_network_plays_the_rollouts_instead_of_the_labelled_one(net, shard):
    """--rollout-net: the labelled network's play and rows are kept; another network's values."""
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    bc, _ = load_network(f"{SHIPPED_DIR}/bc.pt")
    own, _ = el.label_shard(net, 5, 0, 8, **KW, rollout="network")
    other, _ = el.label_shard(net, 5, 0, 8, **KW, rollout="network", rollout_net=bc.eval())
    np.testing.assert_array_equal(other["cands"], own["cands"])
    multi = (own["cands"] >= 0).sum(1) >= 2
    assert multi.sum() > 20 and (other["gain"][multi] != own["gain"][multi]).any()
    same, _ = el.label_shard(net, 5, 0, 8, **KW, rollout="network", rollout_net=net)
    np.testing.assert_array_equal(same["gain"], own["gain"])


def test_the_cli_refuses_a_rollout_net_without_network_rollouts(tmp_path, capsys):
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    argv = ["--net", f"{SHIPPED_DIR}/distill.pt", "--out", str(tmp_path / "l"), "--hands", "2",
            "--rollout-net", f"{SHIPPED_DIR}/bc.pt"]  # fmt: skip
    with pytest.raises(SystemExit):
        el.main(argv)
    assert "pass --rollout network too" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        el.main([*argv[:-1], f"{SHIPPED_DIR}/belief.pt", "--rollout", "network"])
    assert "--rollout-net" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()


def _won(obs):
    """Rows where some seat has won: observation v1's per-seat 'won' rows (all ones)."""
    from sichuan_env.encoding import observation as O

    return obs[:, O.WON : O.WON + 8 : 2, 0].any(axis=1) == 1


def test_after_win_labels_exactly_the_rows_after_a_win(net, shard):
    """The same hands, played the same way: the rows are the full set's rows once a seat has won,
    with the same candidates and values (each row's rollouts are seeded by its hand and turn)."""
    rows, decisions = shard
    after, played = el.label_shard(net, 5, 0, 8, **KW, after_win=True)
    assert played == decisions
    won = _won(rows["obs"])
    assert won.any() and (~won).any()  # both phases were labelled without the filter
    assert len(after["obs"]) == won.sum() and _won(after["obs"]).all()
    for k in ("obs", "cands", "gain", "se", "hand", "seat"):
        np.testing.assert_array_equal(after[k], rows[k][won], err_msg=k)


def test_oracle_labels_score_the_same_rows_from_the_true_state(net, shard, tmp_path, capsys):
    """--oracle: the same decisions (the play does not depend on the labels), valid rows, other
    values (every hand as it is, only the wall reshuffled), reproducible; the CLI records it and
    refuses it with the value-leaf search."""
    from sichuan_env.agents.checkpoint import SHIPPED_DIR
    from sichuan_env.agents.search.rollout import ORACLE

    rows, _ = shard
    kw = dict(KW, draws=ORACLE)
    oracle, _ = el.label_shard(net, 5, 0, 8, **kw)
    sl.check_labels(oracle)
    np.testing.assert_array_equal(oracle["obs"], rows["obs"])
    np.testing.assert_array_equal(oracle["cands"], rows["cands"])
    multi = (rows["cands"] >= 0).sum(1) >= 2
    assert multi.sum() > 20 and (oracle["gain"][multi] != rows["gain"][multi]).any()
    again, _ = el.label_shard(net, 5, 0, 8, **kw)
    np.testing.assert_array_equal(again["gain"], oracle["gain"])
    base = ["--net", f"{SHIPPED_DIR}/distill.pt", "--hands", "2", "--samples", "2",
            "--threads", "1", "--oracle"]  # fmt: skip
    el.main([*base, "--out", str(tmp_path / "o")])
    assert json.loads((tmp_path / "o" / "meta.json").read_text())["settings"]["oracle"] is True
    with pytest.raises(SystemExit):
        el.main([*base, "--out", str(tmp_path / "v"), "--search", "value-leaf", "--no-claims"])
    assert "no --oracle" in capsys.readouterr().err and not (tmp_path / "v").exists()
