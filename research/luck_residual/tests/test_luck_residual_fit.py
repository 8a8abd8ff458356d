"""Rollout labels, the models fitted to them and the per-wall check of their corrections."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from sichuan_env.agents import checkpoint
from sichuan_env.agents.eval import luck_features as F
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.eval.luck import KIND, LuckModel
from sichuan_env.agents.nn.mlp_kernels import no_weights
from sichuan_env.agents.rule_based.fused import STYLES

from research.luck_residual import fit, labels, wall_eval
from research.luck_residual.measure import RULES, lineup_policies
from research.luck_residual.models import FeatNet, TileNet, counterfactual_planes

LINEUP = ["heuristic", "defensive", "heuristic", "heuristic"]


@pytest.fixture(scope="module")
def played() -> list[tuple[int, int, dict]]:
    return play_duplicate(LINEUP, 2, RULES, 4, progress=False)


@pytest.fixture(scope="module")
def records(played) -> list[dict]:
    return [r for _, _, r in played]


def _luck_featnet() -> FeatNet:
    shipped, _ = checkpoint.load("luck", KIND)
    net = FeatNet()
    net.load_state_dict(shipped.state_dict())
    return net.eval()


def test_counterfactual_planes_move_one_tile_between_drawer_and_wall() -> None:
    rng = np.random.default_rng(0)
    n = 6
    tiles = rng.integers(0, 4, size=(n, 4, 3, 27)).astype(np.uint8)
    wallc = rng.integers(1, 4, size=(n, 27)).astype(np.uint8)
    drawer = rng.integers(0, 4, size=n)
    actual = rng.integers(0, 27, size=n)
    tiles[np.arange(n), drawer, 0, actual] = np.maximum(tiles[np.arange(n), drawer, 0, actual], 1)
    seats, shared = counterfactual_planes(tiles, wallc, drawer, actual)
    for i in range(n):
        for t in range(27):
            want = tiles[i].reshape(4, 81).astype(np.float32).copy()
            want[drawer[i], t] += 1
            want[drawer[i], actual[i]] -= 1
            wall = wallc[i].astype(np.float32).copy()
            wall[actual[i]] += 1
            wall[t] -= 1
            np.testing.assert_allclose(seats[i, t] * 4, want)
            np.testing.assert_allclose(shared[i, t, 27:] * 4, wall)
            np.testing.assert_allclose(shared[i, t, :27] * 4, want[drawer[i], :27])


def test_a_tile_net_starts_as_its_base() -> None:
    base = _luck_featnet()
    net = TileNet(base=base).eval()
    g = torch.Generator().manual_seed(1)
    x = torch.rand(5, 27, 4, F.NF, generator=g)
    with torch.no_grad():
        torch.testing.assert_close(net(x, torch.rand(5, 27, 4, 81, generator=g),
                                       torch.rand(5, 27, 54, generator=g)), base(x))  # fmt: skip


def test_the_luck_weights_give_the_estimators_draw_corrections(records) -> None:
    got = wall_eval.draw_corrections(_luck_featnet(), records)
    want = LuckModel.load("luck").corrections(records).draw
    assert np.abs(want).max() > 0.5
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_labels_are_centred_and_a_fit_runs_on_them(played, records, tmp_path) -> None:
    styles, _ = lineup_policies(LINEUP, played, net=False)
    assert (styles == STYLES["defensive"]).sum() == len(played)  # one defensive seat a hand
    rows = labels.shard(records, styles, no_weights(), np.random.default_rng(3), 2, 0.3)
    assert len(rows["a"]) > 20
    p = rows["p"] / rows["p"].sum(axis=1, keepdims=True)
    np.testing.assert_allclose((p[..., None] * rows["d"]).sum(axis=1), 0, atol=1e-4)
    assert (rows["noise"] >= 0).all() and rows["noise"].max() > 0
    folder = tmp_path / "labels"
    (folder / "shards").mkdir(parents=True)
    for b in range(2):
        np.savez(folder / f"shards/shard-{b:04d}.npz", **rows)
    start = {}
    for kind in ("feat", "tiles"):
        out = tmp_path / kind
        assert fit.main(["--labels", str(folder), "--kind", kind, "--epochs", "1", "--val-every", "2",
                         "--out", str(out)]) == 0  # fmt: skip
        got = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        assert [r["epoch"] for r in got] == [0, 1]
        start[kind] = got[0]["error"]
        net = wall_eval.load_model(out / "model.pt")
        assert isinstance(net, TileNet if kind == "tiles" else FeatNet)
    assert start["tiles"] == pytest.approx(start["feat"])  # both start as the shipped model
