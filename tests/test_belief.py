"""Belief models: the head table, baselines on built states, checkpoints, the shipped predictions."""

import argparse
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sichuan_env.train.belief.baselines as B
from sichuan_env.agents.belief import heads as H
from sichuan_env.agents.belief.model import (
    HEADS,
    BeliefConfig,
    BeliefModel,
    BeliefNet,
    read_belief_config,
    save_belief,
)
from sichuan_env.agents.checkpoint import config_path, rehash

from sichuan_env import RuleConfig
from sichuan_env.encoding import v2 as V2
from sichuan_env.encoding.observation import DISCARDS, MELDS, VISIBLE, VOIDS, WON, obs_rows

ROWS = obs_rows(2, False)
META = {"rules": RuleConfig().to_dict(), "command": "pytest", "commit": "x", "wall_clock_s": 1.0}


# --- baselines on constructed observations --------------------------------------------------


def _obs():
    """An observation where everything is visible (no unseen tile)."""
    o = np.zeros((1, ROWS, 27), dtype=np.uint8)
    o[0, VISIBLE : VISIBLE + 4] = 1
    return o


def _set_unseen(o, tile, n):
    o[0, VISIBLE : VISIBLE + 4, tile] = 0
    o[0, VISIBLE : VISIBLE + 4 - n, tile] = 1


def test_features_count_discards_melds_and_tedashi():
    o = _obs()
    r = 1  # next seat: 5 discards, the 2nd a hand discard (手切), the others 摸切
    for k in range(5):
        o[0, V2.RIVER + V2.RIVER_SLOTS * r + k, 3 + k] = 1
        o[0, V2.RIVER_TSUMO + r, k] = 0 if k == 1 else 1
    o[0, MELDS + 3 * r, 20] = 1  # one pong
    o[0, VOIDS + 2, 0:9] = 1  # opposite: void in the first suit
    f = B.features(o)
    assert f["discards"][0].tolist() == [0, 5, 0, 0]
    assert f["melds"][0].tolist() == [0, 1, 0, 0]
    assert f["since_tedashi"][0, 1] == 3  # discards 3, 4, 5 came after the 手切
    assert f["void"][0, 2, :9].all() and not f["void"][0, 2, 9:].any()
    assert f["unseen"][0].sum() == 0
    more = o.copy()
    o2 = B.tenpai_rule(B.features(more))
    for k in range(5, 10):
        more[0, V2.RIVER + V2.RIVER_SLOTS * r + k, 3] = 1
        more[0, V2.RIVER_TSUMO + r, k] = 0
    assert B.tenpai_rule(B.features(more))[0, 0] > o2[0, 0]  # more draws, more likely tenpai


def test_hypergeometric_exact_value_and_void():
    o = _obs()
    for t in range(7):
        _set_unseen(o, t, 2)  # 14 unseen tiles, 2 copies of each of tiles 0..6
    for j in range(3):
        o[0, MELDS + 3 * 1, 10 + j] = 1  # next: 3 pongs -> 4 concealed tiles
    o[0, VOIDS + 3, 0:9] = 1  # previous: void in the first suit
    p = B.hand_hypergeometric(B.features(o))
    assert p[0, 0, 0] == pytest.approx(1 - 495 / 1001)  # 1 - C(12, 4) / C(14, 4)
    assert p[0, 1, 0] == 1.0  # 13 concealed tiles out of 14: C(12, 13) = 0
    assert p[0, 2, 0] == pytest.approx(0.1)  # the same 1.0, a tenth in the void suit
    assert p[0, 1, 20] == 0.0 and p[0, 0, 10] == 0.0  # no unseen copy


def test_waits_and_deal_in_rules():
    o = _obs()
    for t in range(27):
        _set_unseen(o, t, 2)
    o[0, VOIDS + 1, 9:18] = 1  # next: void in the second suit
    o[0, V2.RIVER + V2.RIVER_SLOTS * 1, 4] = 1  # next discarded tile 4 (its river and count)
    o[0, DISCARDS + 4 * 1, 4] = 1
    o[0, V2.RIVER_TSUMO + 1, 0] = 1
    f = B.features(o)
    w = B.waits_unseen(f)
    assert (w[0, 0, 9:18] == 0).all() and (w[0, 0, :9] > 0).all()
    assert w[0, 0, 4] == pytest.approx(0.5 * w[0, 0, 5])
    assert w[0, 0].sum() == pytest.approx(B.WAITS_PER_TENPAI)
    d = B.deal_in_live(f)
    assert d.shape == (1, 27) and ((d > 0) & (d < 1)).all()
    o[0, WON : WON + 8 : 2] = 1  # every seat has won: nobody can be dealt in
    o[0, WON + 1 : WON + 8 : 2] = 0
    assert (B.deal_in_live(B.features(o)) == 0).all()
    preds = B.predict(o)
    assert list(preds) == list(H.NAMES) and set(B.BASELINES) <= set(H.NAMES)
    for h in H.HEADS:
        assert all(p.shape == (1, *h.shape) for p in preds[h.name].values())


def test_features_reject_v1():
    with pytest.raises(ValueError, match="v2"):
        B.features(np.zeros((1, 83, 27), dtype=np.uint8))


# --- checkpoints ---------------------------------------------------------------------------


def _net(seed=0):
    torch.manual_seed(seed)
    net = BeliefNet(BeliefConfig(hidden=16, layers=1, tile_channels=4))
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return net


def _random_obs(n=6, seed=0):
    return np.random.default_rng(seed).integers(0, 2, (n, ROWS, 27)).astype(np.uint8)


def test_round_trip_float32_exact_float16_close(tmp_path):
    net = _net()
    obs = _random_obs()
    ref = BeliefModel(net).predict(obs)
    for dtype, tol in (("float32", 0.0), ("float16", 2e-2)):
        path = save_belief(tmp_path / f"{dtype}.pt", net, META, dtype=dtype)
        model = BeliefModel.load(path)
        assert model.obs_version == 2 and model.meta["weights_dtype"] == dtype
        got = model.predict(obs)
        for k in ref:
            assert got[k].shape == ref[k].shape and got[k].dtype == np.float32
            np.testing.assert_allclose(got[k], ref[k], atol=tol)
    assert (tmp_path / "float16.pt").stat().st_size < 0.6 * (tmp_path / "float32.pt").stat().st_size


def test_predict_shapes_ranges_and_bad_input():
    model = BeliefModel(_net())
    out = model.predict(_random_obs(5))
    shapes = {"tenpai": (5, 3), "waits": (5, 3, 27), "hand": (5, 3, 27), "deal_in": (5, 27)}
    assert {k: v.shape for k, v in out.items()} == shapes
    assert all(((v >= 0) & (v <= 1)).all() for v in out.values())
    assert model.predict(np.zeros((0, ROWS, 27), np.uint8))["deal_in"].shape == (0, 27)
    with pytest.raises(ValueError, match="shape"):
        model.predict(np.zeros((2, 83, 27), np.uint8))
    with pytest.raises(ValueError, match="0 or 1"):
        model.predict(np.full((1, ROWS, 27), 2, np.uint8))
    with pytest.raises(ValueError, match="BeliefNet"):
        BeliefModel("net")


def _resign(path):
    rehash(path)  # the sha256 of the weights and the config, as a doctored pair would have


@pytest.mark.parametrize(
    "damage, match",
    [
        ("no_json", "missing"),
        ("bad_json", "not valid JSON"),
        ("list_json", "JSON object"),
        ("format", "format"),
        ("key_type", "wrong type"),
        ("missing_key", "misses the key"),
        ("dtype", "weights_dtype"),
        ("arch_field", "unknown"),
        ("arch_value", "hidden"),
        ("version", "obs_version"),
        ("hash", "sha256"),
        ("no_weights", "missing"),
        ("pickle", "cannot be read"),
        ("not_dict", "state_dict"),
        ("extra", "unexpected"),
        ("shape", "should be"),
        ("dtype_tensor", "should be"),
        ("nan", "non-finite"),
    ],
)
def test_hostile_checkpoints(tmp_path, damage, match):
    path = save_belief(tmp_path / "b.pt", _net(), META, dtype="float16")
    cfg = config_path(path)
    doc = json.loads(cfg.read_text())
    state = torch.load(path, weights_only=True)
    if damage == "no_json":
        cfg.unlink()
    elif damage == "bad_json":
        cfg.write_text("{nope")
    elif damage == "list_json":
        cfg.write_text("[]")
    elif damage in ("format", "key_type", "missing_key", "dtype", "arch_field", "arch_value",
                    "version"):  # fmt: skip
        if damage == "format":
            doc["format"] = "sichuan-torch-agent/1"
        elif damage == "key_type":
            doc["wall_clock_s"] = "soon"
        elif damage == "missing_key":
            del doc["commit"]
        elif damage == "dtype":
            doc["weights_dtype"] = "int8"
        elif damage == "arch_field":
            doc["arch"]["depth"] = 3
        elif damage == "arch_value":
            doc["arch"]["hidden"] = 10**6
        else:
            doc["obs_version"] = 1
        cfg.write_text(json.dumps(doc))
    elif damage == "hash":
        raw = bytearray(path.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        path.write_bytes(bytes(raw))
    elif damage == "no_weights":
        path.unlink()
    else:
        if damage == "pickle":
            torch.save({"x": argparse.Namespace(evil=1)}, path)  # a global weights_only refuses
        elif damage == "not_dict":
            torch.save([1, 2], path)
        elif damage == "extra":
            torch.save({**state, "evil": torch.zeros(1, dtype=torch.float16)}, path)
        elif damage == "shape":
            torch.save({**state, "tenpai_head.bias": torch.zeros(4, dtype=torch.float16)}, path)
        elif damage == "dtype_tensor":
            torch.save({k: v.float() for k, v in state.items()}, path)
        elif damage == "nan":
            bad = state["tenpai_head.bias"].clone()
            bad[0] = float("nan")
            torch.save({**state, "tenpai_head.bias": bad}, path)
        _resign(path)  # the hash matches, so the content checks must catch it
    with pytest.raises(ValueError, match=match):
        BeliefModel.load(path)


def test_unknown_name_and_config_reader(tmp_path):
    with pytest.raises(ValueError, match="no shipped checkpoint"):
        BeliefModel.load("nope")
    path = save_belief(tmp_path / "b.pt", _net(), META)
    assert read_belief_config(config_path(path))["format"] == "sichuan-belief/1"
    with pytest.raises(ValueError, match=r"\.pt"):
        save_belief(tmp_path / "b.pth", _net(), META)
    with pytest.raises(ValueError, match="dtype"):
        save_belief(tmp_path / "c.pt", _net(), META, dtype="bf16")
    with pytest.raises(ValueError, match="misses"):
        save_belief(tmp_path / "d.pt", _net(), {"rules": {}})
    with pytest.raises(ValueError, match="integer"):
        BeliefConfig(hidden=True)
    with pytest.raises(ValueError, match="dropout"):
        BeliefConfig(dropout=1.5)
    with pytest.raises(ValueError, match="tenpai_pool"):
        BeliefConfig(tenpai_pool=1)


def test_dropout_and_pooled_tenpai_round_trip(tmp_path):
    torch.manual_seed(1)
    net = BeliefNet(
        BeliefConfig(hidden=16, layers=2, tile_channels=4, dropout=0.5, tenpai_pool=True)
    )
    obs = _random_obs()
    path = save_belief(tmp_path / "p.pt", net, META)
    model = BeliefModel.load(path)
    assert model.meta["arch"]["tenpai_pool"] is True
    a, b = model.predict(obs), model.predict(obs)  # eval mode: dropout off, deterministic
    np.testing.assert_array_equal(a["tenpai"], b["tenpai"])
    np.testing.assert_allclose(a["tenpai"], BeliefModel(net).predict(obs)["tenpai"], atol=1e-6)


def test_shipped_checkpoint_loads_and_predicts():
    model = BeliefModel.load("belief")
    assert model.obs_version == 2 and model.meta["weights_dtype"] == "float16"
    assert not model.net.training
    out = model.predict(_random_obs(3))
    assert out["waits"].shape == (3, 3, 27)
    assert all(np.isfinite(v).all() for v in out.values())


# --- the head table --------------------------------------------------------------------------


def test_the_head_table_drives_the_network_and_predict():
    assert HEADS == H.NAMES == ("tenpai", "waits", "hand", "deal_in")
    assert [h.width for h in H.HEADS] == [3, 3, 3, 1]  # per-opponent scalars, tile channels
    net = _net()
    assert net.tenpai_head.out_features == 3 and net.tile_head[-1].out_channels == 7
    out = BeliefModel(net).predict(_random_obs(2))
    assert {k: v.shape[1:] for k, v in out.items()} == {h.name: h.shape for h in H.HEADS}
    # a network of some heads only: its outputs follow, in table order
    cfg = BeliefConfig(hidden=16, layers=1, tile_channels=4, heads=["deal_in", "tenpai"])
    assert cfg.heads == ("tenpai", "deal_in") and cfg.to_dict()["heads"] == ["tenpai", "deal_in"]
    small = BeliefModel(BeliefNet(cfg))
    assert small.heads == ("tenpai", "deal_in") and small.net.tile_head[-1].out_channels == 1
    assert set(small.predict(_random_obs(2))) == {"tenpai", "deal_in"}
    for bad, match in ((["tenpai", "nope"], "unknown"), (["hand", "hand"], "repeated"),
                       (["waits", "hand"], "per-opponent"), ("tenpai", "list")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            BeliefConfig(heads=bad)


def test_head_labels_and_cells_follow_the_table():
    b = {
        "tenpai": np.array([[True, False, False]]),
        "active": np.array([[True, True, False]]),
        "waits": np.zeros((1, 3, 27), np.uint8),
        "hand": np.ones((1, 3, 27), np.uint8),
        "deal_in": np.zeros((1, 3, 27), np.int64),
        "legal": np.zeros((1, 27), bool),
    }
    b["deal_in"][0, 2, 5] = 8
    b["legal"][0, [5, 6]] = True
    tg = H.targets(b)
    assert tg["deal_in"][0][0].nonzero()[0].tolist() == [5]
    assert tg["deal_in"][1][0].nonzero()[0].tolist() == [5, 6]  # scored: legal discards
    assert H.targets(b, scored=False)["deal_in"][1].all()  # the loss: every tile on own turn
    assert tg["hand"][1][0].all(axis=1).tolist() == [True, True, False]
    assert tg["waits"][1][0].all(axis=1).tolist() == [True, False, False]
    with pytest.raises(ValueError, match="column"):
        H.get("waits").label_of(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="unknown"):
        H.get("shanten")
    with pytest.raises(ValueError, match="shape"):
        H.Head("x", (4,), "tenpai", "nonzero", "active", "active")
    with pytest.raises(ValueError, match="top1"):
        H.Head("x", (27,), "deal_in", "any_opponent", "legal", "legal", top1=True)
    with pytest.raises(ValueError, match="per-opponent"):
        H.Head("x", (27,), "deal_in", "any_opponent", "active", "legal")
    with pytest.raises(ValueError, match="per-tile"):
        H.Head("x", (3,), "tenpai", "nonzero", "active", "legal")
    # a head that is not in the table yet: who deals in, per opponent and legal discard
    by = H.Head("deal_in_by", (3, 27), "deal_in", "nonzero", "own_turn", "legal")
    assert by.per_tile and by.width == 3
    y, cells = by.label_of(b["deal_in"]), by.mask_of(b)
    assert y.shape == cells.shape == (1, 3, 27) and y[0, 2, 5] and y.sum() == 1
    assert cells[0].all(axis=0).nonzero()[0].tolist() == [5, 6] and cells[0].any(axis=0).sum() == 2
    assert by.mask_of(b, scored=False).all()


def test_checkpoints_without_heads_load_with_the_first_four(tmp_path):
    path = save_belief(tmp_path / "old.pt", _net(), META)
    doc = json.loads(config_path(path).read_text())
    assert doc["arch"]["heads"] == list(H.NAMES)
    del doc["arch"]["heads"]
    config_path(path).write_text(json.dumps(doc))
    rehash(path)  # an old checkpoint's config is as it was written, hash included
    assert BeliefModel.load(path).heads == H.FIRST_HEADS


# --- the shipped checkpoint's predictions, pinned ----------------------------------------------


def _fixed_obs():
    """Four sparse observations from integer arithmetic only (no RNG, no engine)."""
    n, r, t = np.meshgrid(np.arange(4), np.arange(ROWS), np.arange(27), indexing="ij")
    return (((n * 7919 + r * 104729 + t * 1299709) % 97) < 2 + 2 * n).astype(np.uint8)


# Computed with the shipped belief.pt before the head table existed (commit b5aebff):
# tenpai [4, 3]; for the other heads, per row (and opponent) the sum over tiles of p and of
# (tile + 1) * p.
SHIPPED = {
    "tenpai": [[0.91597, 0.75497, 0.82206], [0.99897, 0.9992, 0.99824],
               [0.99997, 0.99999, 0.99988], [1.0, 1.0, 0.99998]],
    "waits": [[[3.4212, 47.0713], [3.753, 52.4373], [3.1263, 41.6039]],
              [[2.5461, 32.7853], [2.8037, 33.4489], [3.9904, 53.8381]],
              [[1.3078, 18.5541], [1.6115, 21.8709], [2.7105, 39.4827]],
              [[0.4354, 6.1133], [0.361, 5.8191], [1.4317, 17.6814]]],
    "hand": [[[11.58, 147.0728], [12.5766, 162.9062], [11.6911, 147.6411]],
             [[6.2083, 74.6066], [8.8195, 101.2152], [13.2975, 177.3028]],
             [[3.0046, 33.8967], [5.0979, 53.6838], [10.205, 139.3473]],
             [[1.0854, 15.7716], [0.8146, 13.8065], [5.8258, 66.2258]]],
    "deal_in": [[4.7247, 64.8142], [7.1444, 94.1866], [5.3708, 73.103], [2.8344, 36.9746]],
}  # fmt: skip
SHIPPED_TENPAI_LOGITS_ROW0 = [2.38884, 1.1253, 1.53038]


def test_shipped_predictions_are_unchanged():
    model = BeliefModel.load("belief")
    assert model.heads == H.FIRST_HEADS
    obs = _fixed_obs()
    out = model.predict(obs)
    assert list(out) == list(SHIPPED)
    w = np.arange(1, 28, dtype=np.float64)
    np.testing.assert_allclose(out["tenpai"], SHIPPED["tenpai"], atol=2e-5)
    for k in ("waits", "hand", "deal_in"):
        v = out[k].astype(np.float64)
        np.testing.assert_allclose(np.stack([v.sum(-1), v @ w], -1), SHIPPED[k], atol=2e-4)
    logits = model.logits(obs)
    np.testing.assert_allclose(logits["tenpai"][0], SHIPPED_TENPAI_LOGITS_ROW0, atol=2e-4)
