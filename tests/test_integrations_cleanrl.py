"""The single-file CleanRL-style masked PPO (examples/cleanrl_ppo.py) on the batched vector env."""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integrations

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("cleanrl_ppo", ROOT / "examples/cleanrl_ppo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("error")  # no warning from the example's own code (float(loss))
def test_a_few_updates_and_a_greedy_evaluation():
    ex = _example()
    args = ex.parse_args(["--num-envs", "16", "--num-steps", "64", "--total-timesteps", "2048",
                          "--eval-hands", "8", "--update-epochs", "1"])  # fmt: skip
    agent, log = ex.train(args)
    assert len(log) == 2
    assert sum(r["hands_finished"] for r in log) > 0  # autoreset happened inside the rollouts
    # autoreset steps are not decisions: fewer rows than env steps once a hand has ended
    assert any(r["decisions"] < 16 * 64 for r in log)
    assert all(math.isfinite(r["policy_loss"]) and math.isfinite(r["value_loss"]) for r in log)
    assert np.isfinite(ex.evaluate(agent, 8, seed=5))


def test_masked_sampling_never_picks_an_illegal_action():
    import gymnasium
    import torch

    ex = _example()
    envs = gymnasium.make_vec("SichuanMahjong-v0", num_envs=8, illegal_action="raise")
    obs, _ = envs.reset(seed=0)
    agent = ex.Agent(int(np.prod(envs.single_observation_space.shape)), 88)
    for _ in range(200):  # "raise": one illegal action in the batch would stop the run
        mask = torch.as_tensor(envs.action_masks())
        with torch.no_grad():
            action, *_ = agent.get_action_and_value(
                torch.as_tensor(obs.reshape(8, -1), dtype=torch.float32), mask
            )
        assert mask[torch.arange(8), action].all()
        obs, *_ = envs.step(action.numpy())
