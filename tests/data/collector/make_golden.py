"""Write golden.npz: two PPO rollouts of a fixed configuration (tests/test_collector_golden.py).

The committed file was made by the collector of commit fb745e2 (before the device path):

    git show fb745e2:train/policy/rollout.py > /tmp/old_rollout.py
    python tests/data/collector/make_golden.py /tmp/old_rollout.py tests/data/collector/golden.npz
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import numpy as np
import torch

FIELDS = ("actions", "logp", "values", "rewards", "dones", "next_idx", "boot", "masks", "obs")


def rollouts(mod: ModuleType) -> dict[str, np.ndarray]:
    """Two collections of 80 steps of 16 envs (half against a heuristic / random pool)."""
    from sichuan_env.agents import make_agent
    from sichuan_env.agents.nn.policy import AUX_SIZE, PolicyConfig, PolicyNet

    from sichuan_env.envs.vector import VectorEnv

    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(aux=True, oracle_critic=True)).eval()
    venv = VectorEnv(16, seed=4, oracle=True)
    pool = [
        ("heuristic", make_agent("heuristic", seed=1)),
        ("random", make_agent("random", seed=2)),
    ]
    coll = mod.Collector(net, venv, pool, 0.5, 0.5, 0.1, seed=7)
    buf = mod.Buffer(16 * 80, net.config.public_rows, venv.obs_shape[0], aux=AUX_SIZE)
    out = {}
    for it in range(2):
        coll.collect(80, buf)
        for f in FIELDS:
            out[f"{f}{it}"] = getattr(buf, f)[: buf.n].copy()
    return out


if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("rollout_under_test", sys.argv[1])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.savez_compressed(sys.argv[2], **rollouts(module))
