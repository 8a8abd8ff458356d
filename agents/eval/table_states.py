"""``V`` of engine states: the whole-table value network as a batched library call.

For search and training (issue #40): ``state_values(model, states, rules)`` scores
engine states (``STATE_DTYPE`` records, e.g. ``VectorEnv.states`` or a search's
determinized copies) that stand right after a draw from the wall: the seat to act
holds the tile it drew. With ``expected=True`` it returns instead the mean over the
draw, the exact expectation over every tile the drawer could have drawn (the
counterfactuals of the luck adjustment, in one batched pass) — the value of the
state just *before* that draw, which a value-leaf search uses at its leaves.

States that are not right after a draw (a claim window, the setup phases, a hand
that is over) are refused with a ``ValueError`` naming them; the deal's value comes
from ``TableModel.values`` on its rows.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.eval.luck_features import NF
from sichuan_env.agents.eval.luck_replay import state_rows
from sichuan_env.agents.eval.table_value import TableModel

from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import RuleConfig, kernel_rules


def state_values(
    model: TableModel,
    states: np.ndarray,
    rules: RuleConfig,
    lineups: np.ndarray | None = None,
    *,
    expected: bool = False,
) -> np.ndarray:
    """``V`` of post-draw engine states: ``float64[N, 4]``, each seat's points still to come.

    Args:
        model: a loaded whole-table model (``TableModel.load``), on its device.
        states: ``STATE_DTYPE[N]``, each right after a draw (left unchanged).
        rules: the states' ruleset (the model must cover it).
        lineups: ``int8[N, 4]`` policy ids (``table_rows.seat_ids``); None: unknown.
        expected: the mean over the drawer's possible draws instead of the drawn tile.

    Raises:
        TypeError: ``states`` is not an array of ``STATE_DTYPE``.
        ValueError: a state not right after a draw, rules the model does not cover, bad
            ``lineups``, or non-finite values.
    """
    if not isinstance(states, np.ndarray) or states.dtype != STATE_DTYPE or states.ndim != 1:
        raise TypeError("states must be a 1-d array of STATE_DTYPE records")
    if not model.covers(rules):
        raise ValueError("the value model was trained on other rules")
    n = len(states)
    ids = np.zeros((n, 4), np.int8) if lineups is None else np.asarray(lineups, np.int8)
    if ids.shape != (n, 4):
        raise ValueError(f"lineups must be [{n}, 4]")
    feats = np.zeros((n, 27, 4, NF), np.float32)
    probs = np.zeros((n, 27), np.float32)
    tiles = np.zeros((n, 4, 3, 27), np.uint8)
    wallc = np.zeros((n, 27), np.uint8)
    voids = np.zeros((n, 4), np.int8)
    drawn = np.zeros(n, np.int64)
    drawer = np.zeros(n, np.int64)
    ok = np.zeros(n, np.int8)
    t = get_tables()
    state_rows(states, kernel_rules(rules), t["FLAGS"], t["DIST"], feats, probs, tiles, wallc, voids,
          drawn, drawer, ok)  # fmt: skip
    if not ok.all():
        bad = np.flatnonzero(ok == 0)[:5].tolist()
        raise ValueError(f"states {bad} are not right after a draw from the wall")
    so_far = np.ascontiguousarray(states["scores"]).astype(np.int32)
    out = np.zeros((n, 4))
    for a in range(0, n, 1024):
        sl = slice(a, a + 1024)
        dev = model.device
        batch = {"tiles": tiles[sl], "wallc": wallc[sl], "voids": voids[sl], "so_far": so_far[sl],
                 "lineup": ids[sl], "deal": np.zeros(len(tiles[sl]), bool)}  # fmt: skip
        rows = np.arange(len(tiles[sl]))
        batch["feats"] = feats[sl][rows, drawn[sl]]
        tb = {k: torch.from_numpy(np.ascontiguousarray(v)).to(dev) for k, v in batch.items()}
        with torch.no_grad():
            vals = model._finite(model.net.counterfactual_values(
                tb, torch.from_numpy(feats[sl]).to(dev), torch.from_numpy(drawer[sl]).to(dev),
                torch.from_numpy(drawn[sl]).to(dev), torch.from_numpy(probs[sl] > 0).to(dev),
            ))  # fmt: skip
        if expected:
            p = probs[sl].astype(np.float64)
            p /= p.sum(axis=1, keepdims=True)
            out[sl] = (p[..., None] * vals).sum(axis=1)
        else:
            out[sl] = vals[rows, drawn[sl]]
    return out
