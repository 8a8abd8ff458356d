"""Expert iteration's ``value`` stage: the whole-table value ``V`` refitted on the new network's play.

With ``--search value-leaf`` (``sichuan_env.train.policy.exit``) the labels of round
``k + 1`` are the value-leaf search's (``sichuan_env.agents.search.value_leaf``), whose
leaves read ``V``; a ``V`` fitted on other players' hands grows stale as the network
improves. After round ``k``'s evaluation this stage plays ``--value-hands`` hands of
round ``k``'s network, in self-play and against heuristics (``table_value.data``,
mix ``NET=1,heuristic=1``, with the game records), and refits the previous ``V`` to
them (``table_value.variance --objective hand``, ``--value-epochs`` epochs; every
eighth block held out, the best epoch kept, the start included: the held-out
residual never rises). Both steps resume: the data keeps its finished blocks, the
refit its finished epochs.

The network is new to ``V``'s vocabulary: its seats are ``unknown`` in the data
and in the search, as every seat but the searcher's always is.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

BLOCKS = 16
"""Blocks of the value data (every eighth, blocks 0 and 8, held out)."""
SUBDIRS = ("value-data", "value")
"""What the stage writes in a round's folder."""


def value_of(run_dir: Path, settings: dict[str, Any], k: int) -> str:
    """The value model round ``k + 1``'s labels read: round ``k``'s refit (round 0: ``--value-model``)."""
    if k == 0:
        return str(settings["value_model"])
    return str(run_dir / f"round-{k:02d}" / "value" / "table_value.pt")


def refit_value(
    rdir: Path,
    net: Path,
    prev_value: str,
    hands: int,
    epochs: int,
    seed: int,
    threads: int,
    device: str = "cpu",
) -> dict[str, Any]:
    """Play ``hands`` hands of ``net`` and refit ``prev_value`` to them; the stage's result.

    Returns ``{"model", "hands", "best_epoch", "held_out"}``: the refitted checkpoint's
    path, the hands played, the epoch kept (0: the start) and its held-out figures.

    Raises:
        ValueError: ``net``'s path cannot name a mix entry (it holds ``,`` or ``=``).
    """
    from sichuan_env.agents.eval.table_value import TableModel
    from sichuan_env.train.table_value import data, variance

    if "," in str(net) or "=" in str(net):
        raise ValueError(f"the network's path {net} holds ',' or '=': it cannot name a mix entry")
    walls = max(1, -(-hands // (4 * BLOCKS)))
    out = rdir / "value-data"
    argv = ["--out", str(out), "--hands", str(hands), "--block-walls", str(walls),
            "--mix", f"{net}=1,heuristic=1", "--seed", str(seed), "--records",
            "--workers", str(threads), "--no-progress"]  # fmt: skip
    data.main(argv + (["--resume"] if (out / "data.json").exists() else []))
    fit = rdir / "value"
    argv = ["--data", str(out), "--out", str(fit), "--init", prev_value, "--objective", "hand",
            "--epochs", str(epochs), "--lr", "2e-4", "--seed", str(seed),
            "--threads", str(threads), "--device", device, "--no-progress"]  # fmt: skip
    variance.main(argv + (["--resume"] if (fit / "refit.json").exists() else []))
    model = TableModel.load(fit / "table_value.pt")
    refit = model.doc["refit"]
    held = {k: float(v) for k, v in refit["held_out"].items()
            if isinstance(v, (int, float)) and math.isfinite(v)}  # fmt: skip
    return {"model": str(fit / "table_value.pt"), "hands": hands,
            "best_epoch": int(refit["best_epoch"]), "held_out": held}  # fmt: skip


__all__ = ["BLOCKS", "SUBDIRS", "refit_value", "value_of"]
