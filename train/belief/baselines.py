"""Simple count and rule predictors of the belief labels, the baselines of ``sichuan_env.train.belief.report``.

Each reads only the public observation (version 2 planes, ``uint8[N, rows, 27]``)
and returns probabilities with the shapes of ``BeliefModel.predict``; ``BASELINES``
lists them by head (``sichuan_env.agents.belief.heads``):

- ``tenpai``: a logistic rule on counts the seat can see for each opponent:
  its discards so far (a draw each), its melds, the turns since its last
  手切 (a hand discard; 摸切 streaks suggest a finished hand), the tiles left
  in the wall. ``tenpai_draws`` uses the discards and melds only. The
  coefficients (``TENPAI_COEF``) were fitted once by logistic regression on
  heuristic self-play (``python -m sichuan_env.train.belief.baselines --fit DIR`` refits
  and prints them).
- ``hand``: hypergeometric: the opponent's concealed tiles are a uniform draw
  from the tiles the seat cannot see; P(holds >= 1 of t) =
  ``1 - C(U - u_t, h) / C(U, h)`` with ``u_t`` unseen copies of t, ``U`` all
  unseen tiles, ``h`` its concealed count (13 - 3 x melds); tiles of its
  declared void suit count a tenth (players shed them first).
- ``waits``: unseen copies: a tile's score is ``u_t + 1``, zero in the
  opponent's void suit, halved if the opponent discarded it, scaled so an
  opponent waits on ``WAITS_PER_TENPAI`` tiles on average.
- ``deal_in``: live opponents and unseen copies: ``1 - prod_r (1 - T_r W_rt)``
  over opponents still playing, with ``T`` the tenpai rule and ``W`` the wait
  rule above.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from math import lgamma
from pathlib import Path

import numpy as np
from sichuan_env.agents.belief.heads import HEADS

from sichuan_env._cli import PlainHelp, run
from sichuan_env.encoding import v2 as V2
from sichuan_env.encoding.observation import DISCARDS, MELDS, VISIBLE, VOIDS, WALL, WON

TENPAI_FEATURES = ("bias", "discards", "melds", "since_tedashi", "wall_left")
TENPAI_COEF = np.array([-4.4421, 0.3874, 0.5736, -0.0842, 0.0112])
"""Logistic coefficients of ``TENPAI_FEATURES`` (``wall_left`` in tens of tiles), fitted with
``python -m sichuan_env.train.belief.baselines --fit $DATA/heur-train --rows 200000`` (heuristic self-play,
seed 1; see README, "Opponent modelling")."""
DRAWS_COEF = np.array([-4.3472, 0.3676, 0.5816])
"""Logistic coefficients of (bias, discards, melds) for ``tenpai_draws``."""
WAITS_PER_TENPAI = 2.0
"""Average number of wait tiles of a tenpai opponent (the wait rule's scale)."""


def features(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Public counts per relative seat (0 me, 1 next, 2 opposite, 3 previous) of v2 observations.

    Returns:
        ``discards`` int[N, 4], ``melds`` int[N, 4], ``since_tedashi`` int[N, 4]
        (discards since the last 手切, all of them if none), ``won`` bool[N, 4],
        ``void`` bool[N, 4, 27] (public void suits), ``discarded`` bool[N, 4, 27],
        ``unseen`` int[N, 27] (4 - copies I can see), ``wall_left`` int[N] (about,
        in tiles).
    """
    if obs.ndim != 3 or obs.shape[1] < V2.TURN + 1 or obs.shape[2] != 27:
        raise ValueError(f"obs must be v2 observations (N, >= {V2.TURN + 1}, 27), got {obs.shape}")
    n = obs.shape[0]
    river = obs[:, V2.RIVER : V2.RIVER + 4 * V2.RIVER_SLOTS].reshape(n, 4, V2.RIVER_SLOTS, 27)
    filled = river.any(axis=3)  # [N, 4, 24]
    discards = filled.sum(axis=2)
    tsumo = obs[:, V2.RIVER_TSUMO : V2.RIVER_TSUMO + 4, : V2.RIVER_SLOTS].astype(bool)
    tedashi = filled & ~tsumo
    k = np.arange(V2.RIVER_SLOTS)
    last = np.where(tedashi, k, -1).max(axis=2)
    return {
        "discards": discards,
        "melds": obs[:, MELDS : MELDS + 12].reshape(n, 4, 3, 27).sum(axis=(2, 3)),
        "since_tedashi": discards - 1 - last,
        "won": obs[:, WON : WON + 8 : 2, 0] == 1,
        "void": obs[:, VOIDS : VOIDS + 4] == 1,
        "discarded": obs[:, DISCARDS : DISCARDS + 16 : 4] == 1,
        "unseen": 4 - obs[:, VISIBLE : VISIBLE + 4].sum(axis=1).astype(np.int64),
        "wall_left": 2 * obs[:, WALL].sum(axis=1).astype(np.int64),
    }


def _tenpai_design(f: dict[str, np.ndarray], names: tuple[str, ...]) -> np.ndarray:
    n = f["discards"].shape[0]
    cols = {
        "bias": np.ones((n, 3)),
        "discards": f["discards"][:, 1:],
        "melds": f["melds"][:, 1:],
        "since_tedashi": f["since_tedashi"][:, 1:],
        "wall_left": np.repeat(f["wall_left"][:, None] / 10.0, 3, axis=1),
    }
    return np.stack([cols[k].astype(np.float64) for k in names], axis=-1)  # [N, 3, F]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def tenpai_rule(f: dict[str, np.ndarray], coef: np.ndarray = TENPAI_COEF) -> np.ndarray:
    """P(tenpai) ``float[N, 3]`` from the logistic count rule (0 for opponents who have won)."""
    p = _sigmoid(_tenpai_design(f, TENPAI_FEATURES) @ coef)
    return np.where(f["won"][:, 1:], 0.0, p)


def tenpai_draws(f: dict[str, np.ndarray], coef: np.ndarray = DRAWS_COEF) -> np.ndarray:
    """P(tenpai) ``float[N, 3]`` from the opponent's draws (discards) and melds only."""
    p = _sigmoid(_tenpai_design(f, TENPAI_FEATURES[:3]) @ coef)
    return np.where(f["won"][:, 1:], 0.0, p)


def _log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    lg = np.vectorize(lgamma, otypes=[np.float64])
    return lg(n + 1) - lg(k + 1) - lg(n - k + 1)


def hand_hypergeometric(f: dict[str, np.ndarray]) -> np.ndarray:
    """P(holds >= 1) ``float[N, 3, 27]``: uniform draw of the opponent's tiles from the unseen ones."""
    u = np.clip(f["unseen"], 0, 4)[:, None, :]  # [N, 1, 27]
    total = u.sum(axis=2, keepdims=True)  # [N, 1, 1]
    h = np.clip(13 - 3 * f["melds"][:, 1:, None], 0, 13)  # [N, 3, 1]
    h = np.minimum(h, total)
    rest = np.maximum(total - u, 0)
    # P(no copy) = C(U - u, h) / C(U, h), zero when h > U - u.
    none = np.where(
        h <= rest, np.exp(_log_comb(rest, np.minimum(h, rest)) - _log_comb(total, h)), 0.0
    )
    p = 1.0 - none
    return np.where(f["void"][:, 1:], 0.1 * p, p)


def waits_unseen(f: dict[str, np.ndarray]) -> np.ndarray:
    """P(t is a wait | tenpai) ``float[N, 3, 27]`` from unseen copies, the void and own discards."""
    score = np.repeat((np.clip(f["unseen"], 0, 4) + 1.0)[:, None, :], 3, axis=1)
    score = np.where(f["void"][:, 1:], 0.0, score)
    score = np.where(f["discarded"][:, 1:], 0.5 * score, score)
    total = score.sum(axis=2, keepdims=True)
    return np.clip(WAITS_PER_TENPAI * score / np.maximum(total, 1e-9), 0.0, 1.0)


def deal_in_live(f: dict[str, np.ndarray]) -> np.ndarray:
    """P(my discard of t deals in) ``float[N, 27]``: live opponents' tenpai x wait rules."""
    t = tenpai_rule(f)[:, :, None]
    w = waits_unseen(f)
    return 1.0 - np.prod(1.0 - t * w, axis=1)


BASELINES: dict[str, dict[str, Callable[[dict[str, np.ndarray]], np.ndarray]]] = {
    "tenpai": {"count rule": tenpai_rule, "draws + melds": tenpai_draws},
    "waits": {"unseen copies": waits_unseen},
    "hand": {"hypergeometric": hand_hypergeometric},
    "deal_in": {"live x unseen": deal_in_live},
}
"""The baselines of each head (``sichuan_env.agents.belief.heads``) by name: ``features -> p``.
A head without any is scored on the model (and other predictors) alone."""


def predict(obs: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """Every baseline's predictions: ``{head: {baseline name: probabilities}}``, every head.

    Raises:
        ValueError: not v2 observations.
    """
    f = features(obs)
    return {h.name: {k: fn(f) for k, fn in BASELINES.get(h.name, {}).items()} for h in HEADS}


def fit_logistic(x: np.ndarray, y: np.ndarray, steps: int = 25, l2: float = 1e-4) -> np.ndarray:
    """Logistic regression by Newton's method: coefficients of ``x`` (``[M, F]``) for ``y`` (``[M]``)."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = _sigmoid(x @ w)
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def fit_tenpai(folder: str | Path, max_rows: int = 400_000) -> dict[str, list[float]]:
    """Fit ``TENPAI_COEF`` and ``DRAWS_COEF`` on a dataset folder (active opponents' rows)."""
    from sichuan_env.train.data.dataset import iter_batches

    xs, xd, ys, seen = [], [], [], 0
    for b in iter_batches(folder, 8192):
        f = features(b["obs"])
        act = b["active"].astype(bool)
        xs.append(_tenpai_design(f, TENPAI_FEATURES)[act])
        xd.append(_tenpai_design(f, TENPAI_FEATURES[:3])[act])
        ys.append(b["tenpai"][act].astype(np.float64))
        seen += len(b["obs"])
        if seen >= max_rows:
            break
    y = np.concatenate(ys)
    return {
        "TENPAI_COEF": fit_logistic(np.concatenate(xs), y).round(4).tolist(),
        "DRAWS_COEF": fit_logistic(np.concatenate(xd), y).round(4).tolist(),
    }


def main(argv: list[str] | None = None) -> int:
    """``--fit DIR``: print the tenpai rules' coefficients fitted on a dataset folder."""
    p = argparse.ArgumentParser(prog="python -m sichuan_env.train.belief.baselines", description=__doc__,
                                formatter_class=PlainHelp)  # fmt: skip
    p.add_argument("--fit", type=Path, required=True, metavar="DIR", help="a dataset folder")
    p.add_argument("--rows", type=int, default=400_000, help="decision rows to read at most")
    args = p.parse_args(argv)
    try:
        coef = fit_tenpai(args.fit, args.rows)
    except ValueError as exc:
        p.error(str(exc))
    for name, values in coef.items():
        print(f"{name} = np.array({values})")
    return 0


if __name__ == "__main__":
    sys.exit(run(main, "sichuan_env.train.belief.baselines"))
