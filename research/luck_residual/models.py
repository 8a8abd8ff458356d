"""Value models fitted to rollout labels: the 38 features alone, or with the table's tiles.

Both score a seat from its own inputs and the mean of the other three seats' and
subtract the four seats' mean (values sum to zero, as points do), like the shipped
``luck`` model; ``TileNet`` adds to each seat's 38 features its concealed, melded
and discarded tiles, the drawer's concealed tiles and the wall's composition (counts
over the 27 tile types, / 4), so that it can see what the drawer may discard into
whose wait.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.eval.luck_features import NF
from torch import nn

TILE_IN = NF + 3 * 27
"""A seat's own inputs in ``TileNet``: its features and its three tile planes."""


def counterfactual_planes(tiles: np.ndarray, wallc: np.ndarray, drawer: np.ndarray,
                          actual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(seats float32[n, 27, 4, 81], shared float32[n, 27, 54])`` for every tile ``t``.

    ``tiles uint8[n, 4, 3, 27]`` / ``wallc uint8[n, 27]``: the state that happened (the
    drawer drew ``actual``). Had it drawn ``t``, its concealed tiles hold ``t`` for
    ``actual`` and the wall ``actual`` for ``t``. ``shared``: the drawer's concealed
    tiles and the wall's composition.
    """
    n = len(actual)
    rows = np.arange(n)
    seats = np.repeat(tiles.reshape(n, 1, 4, 81).astype(np.float32), 27, axis=1)
    wall = np.repeat(wallc[:, None, :].astype(np.float32), 27, axis=1)  # [n, 27(t), 27]
    eye = np.eye(27, dtype=np.float32)
    swap = eye[None, :, :] - eye[actual][:, None, :]  # +t -actual, [n, 27(t), 27]
    seats[rows, :, drawer, :27] += swap
    wall -= swap
    conc = seats[rows, :, drawer, :27]  # [n, 27, 27]
    return seats / 4.0, np.concatenate([conc, wall], axis=-1) / 4.0


class FeatNet(nn.Module):
    """The shipped ``luck`` architecture: ``float[..., 4, NF]`` -> zero-sum ``float[..., 4]``."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2 * NF, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                  nn.ReLU(), nn.Linear(hidden, 1))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``float[..., 4, NF]`` -> zero-sum ``float[..., 4]``."""
        others = (x.sum(-2, keepdim=True) - x) / 3.0
        g = self.body(torch.cat([x, others], dim=-1)).squeeze(-1)
        return g - g.mean(-1, keepdim=True)


class TileNet(nn.Module):
    """``FeatNet`` plus a residual of the seats' features and tile planes.

    The drawer's hand and the wall are shared by all seats; the residual's last layer
    starts at zero, so the net starts as its ``FeatNet``.
    """

    def __init__(self, hidden: int = 256, base: FeatNet | None = None) -> None:
        super().__init__()
        self.base = base or FeatNet()
        self.body = nn.Sequential(nn.Linear(2 * TILE_IN + 54, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))  # fmt: skip
        nn.init.zeros_(self.body[-1].weight)
        nn.init.zeros_(self.body[-1].bias)

    def forward(
        self, feats: torch.Tensor, seats: torch.Tensor, shared: torch.Tensor
    ) -> torch.Tensor:
        """``feats [..., 4, NF]``, ``seats [..., 4, 81]``, ``shared [..., 54]`` -> ``[..., 4]``."""
        own = torch.cat([feats, seats], dim=-1)
        others = (own.sum(-2, keepdim=True) - own) / 3.0
        sh = shared.unsqueeze(-2).expand(*own.shape[:-1], shared.shape[-1])
        g = self.body(torch.cat([own, others, sh], dim=-1)).squeeze(-1)
        return self.base(feats) + g - g.mean(-1, keepdim=True)
