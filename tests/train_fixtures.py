"""Tiny training inputs shared by the hostile-input tests of the training and dataset CLIs:
observation-v1/v2 datasets, a label set with a prior network, and the belief trainer's argv."""

from __future__ import annotations

import argparse
import shutil
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


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by relative path: equal before and after means untouched."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def copy_run(src: Path, dst: Path) -> Path:
    """A copy of a run folder."""
    shutil.copytree(src, dst)
    return dst


def run_state(run: Path) -> dict:
    """A run's ``state.pt``."""
    import torch

    return torch.load(run / "state.pt", weights_only=True)


def doctor_state(run: Path, how: str) -> None:
    """Damage a run's ``state.pt`` one way."""
    import torch

    path = run / "state.pt"
    s = run_state(run)
    moments = next(iter(s["optimizer"]["state"].values()))
    if how == "nan moments":
        moments["exp_avg"].view(-1)[0] = float("nan")
    elif how == "inf second moments":
        moments["exp_avg_sq"].view(-1)[-1] = float("inf")
    elif how == "mis-shaped moments":
        moments["exp_avg"] = torch.zeros(3)
    elif how == "nan lr":
        s["optimizer"]["param_groups"][0]["lr"] = float("nan")
    elif how == "sparse moments":
        moments["exp_avg"] = moments["exp_avg"].to_sparse()
    elif how in ("counter text", "counter float", "counter negative", "counter bool"):
        key = next(iter(s["counters"]))
        s["counters"][key] = {
            "counter text": "3",
            "counter float": 1.5,
            "counter negative": -1,
            "counter bool": True,
        }[how]
    elif how == "counter missing":
        s["counters"].pop(next(iter(s["counters"])))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
        return
    elif how == "pickled":
        torch.save({"optimizer": argparse.Namespace(evil=1), "counters": {}}, path)
        return
    elif how == "not a state":
        torch.save([1, 2, 3], path)
        return
    elif how == "missing":
        path.unlink()
        return
    torch.save(s, path)


STATE_DAMAGE = [
    "nan moments",
    "inf second moments",
    "mis-shaped moments",
    "nan lr",
    "sparse moments",
    "counter text",
    "counter float",
    "counter negative",
    "counter bool",
    "counter missing",
    "truncated",
    "pickled",
    "not a state",
    "missing",
]
