"""Value-leaf labels (``exit_labels --search value-leaf``) and ``ValueLeafSearch.action_values``:
own-turn rows whose candidates hold the network's best actions, gains read from ``V``
(another ``V``, other gains), deterministic, and the refusals of claim windows."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sichuan_env.train.policy.exit_labels as el
import sichuan_env.train.policy.search_labels as sl
import torch
from sichuan_env.agents.checkpoint import SHIPPED_DIR, file_sha256
from sichuan_env.agents.eval.table_value import TableModel
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.torch_agent import load_network
from sichuan_env.agents.search.value_leaf import ValueLeafSearch

from sichuan_env.engine.actions import DISCARD, HU, PASS, SELF_KONG
from sichuan_env.envs.vector import VectorEnv

KW = {"samples": 4, "draws": 2, "gap": 1, "p_label": 0.5, "claims": False, "pool": 0.5}


@pytest.fixture(scope="module")
def net():
    n, _ = load_network(f"{SHIPPED_DIR}/distill.pt")
    return n.eval()


@pytest.fixture(scope="module")
def leaf():
    return ValueLeafSearch(3, samples=4, draws=2)


@pytest.fixture(scope="module")
def shard(net, leaf):
    return el.label_shard(net, 5, 0, 8, **KW, leaf=leaf)


def test_rows_are_own_turn_labels_scored_by_v(net, shard):
    rows, decisions = shard
    sl.check_labels(rows)
    n = len(rows["obs"])
    assert n > 30 and decisions > n
    assert (rows["mask"][:, PASS] == 0).all()  # no claim window was labelled
    c = rows["cands"].astype(np.int64)
    n_c = (c >= 0).sum(1)
    own_turn_actions = [*range(DISCARD, DISCARD + 27), *range(SELF_KONG, SELF_KONG + 27), HU]
    assert np.isin(c[c >= 0], own_turn_actions).all()
    base_act = c[np.arange(n), rows["base"]]
    assert (heuristic_choices(rows["obs"], rows["mask"]) == base_act).all()
    assert (rows["gain"][np.arange(n), rows["base"]] == 0).all()
    scored = n_c >= 2
    assert scored.sum() > 20 and (rows["gain"][scored] != 0).any()
    assert np.isfinite(rows["gain"]).all() and (rows["se"] >= 0).all()
    win = rows["mask"][:, HU] == 1  # a legal win is taken: one candidate, nothing added
    assert (n_c[win] == 1).all() and (c[win, 0] == HU).all()
    # the network's two best legal actions are among the candidates (ample room: gap 1)
    _, extra = el.network_choices(net, rows["obs"], rows["mask"])
    hits = 0
    for i in np.flatnonzero(~win & (n_c < 16)):
        for x in extra[i]:
            if x >= 0 and rows["mask"][i, x]:
                assert x in c[i, : n_c[i]]
                hits += 1
    assert hits > 20


def test_labels_are_deterministic_and_read_v(net, leaf, shard):
    rows, _ = shard
    again, _ = el.label_shard(net, 5, 0, 8, **KW, leaf=ValueLeafSearch(3, samples=4, draws=2))
    for k in rows:
        assert np.array_equal(rows[k], again[k]), k
    other = TableModel.load("table_value")
    torch.manual_seed(0)
    with torch.no_grad():
        for p in other.net.parameters():
            p.add_(torch.randn_like(p))
    moved, _ = el.label_shard(
        net, 5, 0, 8, **KW, leaf=ValueLeafSearch(3, other, samples=4, draws=2)
    )
    assert np.array_equal(rows["cands"], moved["cands"])  # the same decisions and candidates
    assert not np.allclose(rows["gain"], moved["gain"])  # valued by another V


def test_action_values_match_the_search_choice(leaf):
    venv = VectorEnv(16)
    obs, mask, _ = venv.reset(seeds=np.arange(16, dtype=np.uint64))
    seen = 0
    for _ in range(60):
        st = venv.states_of(np.arange(16))
        v = leaf.action_values(st, mask)
        assert v.gain.shape == v.se.shape and (v.se >= 0).all()
        assert (v.gain[np.arange(16), np.maximum(v.base, 0)] == 0).all()
        a = leaf.act_states(st, mask)
        for i in np.flatnonzero(v.n >= 2):
            seen += 1
            assert a[i] in v.cands[i, : v.n[i]]
            chosen = int(np.flatnonzero(v.cands[i, : v.n[i]] == a[i])[0])
            # the search leaves its default only for a gain clear of z standard errors
            assert chosen == v.base[i] or v.gain[i, chosen] > leaf.z * v.se[i, chosen]
        obs, mask, *_ = venv.step(heuristic_choices(obs, mask))
    assert seen > 10


def test_extra_must_be_an_integer_matrix(leaf):
    venv = VectorEnv(2)
    _, mask, _ = venv.reset(seeds=np.arange(2, dtype=np.uint64))
    st = venv.states_of(np.arange(2))
    with pytest.raises(ValueError, match="extra"):
        leaf.action_values(st, mask, extra=np.zeros((3, 2), np.int64))
    with pytest.raises(ValueError, match="extra"):
        leaf.action_values(st, mask, extra=np.zeros((2, 2), np.float32))


def test_claims_are_refused_with_a_value_leaf(net, leaf, tmp_path, capsys):
    with pytest.raises(ValueError, match="own turns"):
        el.label_shard(net, 5, 0, 2, **{**KW, "claims": True}, leaf=leaf)
    net_path = f"{SHIPPED_DIR}/distill.pt"
    with pytest.raises(SystemExit):
        el.main(["--net", net_path, "--out", str(tmp_path / "a"), "--search", "value-leaf"])
    assert "--no-claims" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        el.main(["--net", net_path, "--out", str(tmp_path / "b"), "--search", "value-leaf",
                 "--no-claims", "--value-model", str(tmp_path / "none.pt")])  # fmt: skip
    assert "--value-model" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_cli_records_the_search_and_the_value_model(tmp_path):
    out = tmp_path / "labels"
    argv = ["--net", f"{SHIPPED_DIR}/distill.pt", "--out", str(out), "--hands", "4",
            "--shard-hands", "4", "--samples", "2", "--draws", "2", "--search", "value-leaf",
            "--no-claims", "--threads", "1"]  # fmt: skip
    summary = el.main(argv)
    assert summary["rows"] > 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["search"] == "value-leaf"
    assert meta["settings"]["value_sha256"] == file_sha256(f"{SHIPPED_DIR}/table_value.pt")
