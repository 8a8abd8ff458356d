"""Belief models: AUC/ECE helpers, baselines on built states, checkpoints, a tiny training run."""

import argparse
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sichuan_env.train.belief.baselines as B
from sichuan_env.agents.belief.model import (
    BeliefConfig,
    BeliefModel,
    BeliefNet,
    read_belief_config,
    save_belief,
)
from sichuan_env.agents.nn.torch_agent import _sha256, config_path
from sichuan_env.train.belief.report import auc, ece, reliability

from sichuan_env import RuleConfig
from sichuan_env.encoding import v2 as V2
from sichuan_env.encoding.observation import DISCARDS, MELDS, VISIBLE, VOIDS, WON, obs_rows

ROWS = obs_rows(2, False)
META = {"rules": RuleConfig().to_dict(), "command": "pytest", "commit": "x", "wall_clock_s": 1.0}


# --- AUC and ECE on hand-built examples -------------------------------------------------------


def test_auc_exact_values():
    assert auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert auc([0, 1], [0.5, 0.5]) == 0.5  # a tie counts one half
    assert auc([0, 0, 1, 1], [1, 2, 2, 3]) == 0.875  # (1 + 0.5 + 1 + 1) / 4
    assert auc([1, 1, 0], [3, 2, 1]) == 1.0
    assert auc([1, 1, 0], [1, 2, 3]) == 0.0


def test_auc_matches_pair_counting_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(bool)
    s = rng.integers(0, 8, 300).astype(float)  # many ties
    pos, neg = s[y], s[~y]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(y, s) == pytest.approx(wins / (len(pos) * len(neg)), abs=1e-12)


def test_auc_rejects_one_class_and_mismatch():
    with pytest.raises(ValueError, match="both"):
        auc([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="differ"):
        auc([0, 1], [0.2])


def test_ece_exact_values():
    # bin 1: p 0.1, rate 0.5 (gap 0.4, half the rows); bin 9: p 0.9, rate 1 (gap 0.1, half).
    assert ece([0, 1, 1, 1], [0.1, 0.1, 0.9, 0.9], bins=10) == pytest.approx(0.25)
    assert ece([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.0)
    assert ece([1], [1.0], bins=10) == 0.0  # p == 1 is in the last bin
    rel = reliability([0, 1, 1, 1], [0.1, 0.1, 0.9, 0.9], bins=10)
    assert rel == {"mean_p": [0.1, 0.9], "rate": [0.5, 1.0], "count": [2, 2]}
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ece([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="non-empty"):
        ece([], [])


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
    assert set(preds) == {"tenpai", "waits", "hand", "deal_in"}


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
    doc = json.loads(config_path(path).read_text())
    doc["sha256"] = _sha256(path)
    config_path(path).write_text(json.dumps(doc))


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
