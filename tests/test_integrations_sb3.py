"""sb3-contrib's ``MaskablePPO``, as its docs show: ``examples/sb3_maskable_ppo.py``, tiny.

Marked ``integrations`` (off by default): ``pytest -m integrations tests/test_integrations_sb3.py``.
Skipped where sb3-contrib is not installed (``pip install -e ".[scale]"``).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integrations

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sb3_maskable_ppo.py"


@pytest.fixture(scope="module")
def example():
    pytest.importorskip("sb3_contrib")
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_trains_predicts_and_steps_with_the_raw_action(example, capsys):
    doc = example.main(["--steps", "128", "--eval-hands", "2", "--seed", "0", "--n-envs", "2"])
    for name in ("maskable_ppo", "random_legal"):
        assert doc[name]["hands"] == 2 and np.isfinite(doc[name]["points_per_hand"])
        assert doc[name]["illegal_actions"] == 0  # the masks reach predict: never illegal
    assert "maskable_ppo:" in capsys.readouterr().out


def test_predict_returns_an_array_that_step_takes_as_it_is(example):
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    vec_env = make_vec_env(example.ENV_ID, n_envs=2, seed=1)  # no wrapper: action_masks() itself
    assert is_masking_supported(vec_env)
    vec_env.reset()
    masks = get_action_masks(vec_env)
    assert masks.shape == (2, 88) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=32, batch_size=32, seed=1, device="cpu")
    env = example.make_env()
    obs, _ = env.reset(seed=2)
    action_masks = get_action_masks(env)
    action, _states = model.predict(obs, action_masks=action_masks)
    assert isinstance(action, np.ndarray) and action.shape == () and action_masks[action]
    obs, reward, terminated, truncated, info = env.step(action)
    assert not info["illegal_action"] and obs in env.observation_space
    assert np.isfinite(reward) and isinstance(terminated, bool) and not truncated
    vec_env.close()
