"""Tiny training inputs shared by the hostile-input tests of the training and dataset CLIs:
observation-v1/v2 datasets, a label set with a prior network, and the belief trainer's argv."""

from __future__ import annotations

from pathlib import Path

from sichuan_env import RuleConfig

META = {
    "rules": RuleConfig().to_dict(),
    "method": "test",
    "command": "pytest",
    "commit": "x",
    "wall_clock_s": 0.0,
}
"""Checkpoint metadata for networks the tests save."""


def tiny_datasets(root: Path) -> Path:
    """A tiny observation-v2 dataset (two shards) in ``root/v2`` and a v1 one in ``root/v1``."""
    from sichuan_env.train.data import make_dataset

    kw = {"seed": 3, "num_envs": 4, "shard_rows": 1000, "progress": False}
    make_dataset.generate(["heuristic"] * 4, 6, root / "v2", obs_version=2, **kw)
    make_dataset.generate(["heuristic"] * 4, 2, root / "v1", obs_version=1, **kw)
    return root


def tiny_labels(root: Path) -> Path:
    """A small search-label set in ``root/lab`` and a prior network in ``root/init.pt``."""
    import torch
    from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
    from sichuan_env.agents.nn.torch_agent import save_checkpoint
    from sichuan_env.train.policy import search_labels

    argv = ["--out", str(root / "lab"), "--hands", "8", "--shard-hands", "4"]
    search_labels.main([*argv, "--samples", "2", "--draws", "1", "--threads", "1"])
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=8, layers=1, aux=True, prior=True))
    save_checkpoint(root / "init.pt", net, META)
    return root


def belief_args(data: Path, run: Path, *extra: str) -> list[str]:
    """The belief trainer's argv for a one-core run of a tiny model on ``data``."""
    tiny = ["--batch", "16", "--hidden", "8", "--layers", "1", "--tile-channels", "4"]
    often = ["--val-every", "2", "--val-rows", "40", "--eval-every", "1000"]
    return [
        "--data",
        str(data),
        "--run",
        str(run),
        *tiny,
        *often,
        "--threads",
        "1",
        "--quiet",
        *extra,
    ]


def header_bomb(path: Path, name: str = "obs", shape=(10**11, 83, 27), descr: str = "|u1") -> None:
    """Replace array ``name`` of an ``.npz`` by a header declaring ``shape`` over 64 bytes."""
    import io
    import zipfile

    import numpy as np

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files if k != name}
    np.savez_compressed(path, **arrays)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{name}.npy", buf.getvalue() + bytes(64))


def rewrite_shard(path: Path, **changes) -> None:
    """Rewrite arrays of an ``.npz`` shard: ``name=f`` maps the array through ``f``, same dtype."""
    import numpy as np

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    for k, f in changes.items():
        arrays[k] = f(arrays[k]).astype(arrays[k].dtype)
    np.savez_compressed(path, **arrays)
