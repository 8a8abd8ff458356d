"""RLlib (new API stack) trains a masked PPO on the AEC env: ``examples/rllib_ppo.py``, tiny.

``ray[rllib]==2.60`` pins gymnasium 1.2.2, so it lives in its own venv; marked
``rllib`` (off by default) and skipped where RLlib cannot be imported:

    python3 -m venv .venv-rllib
    .venv-rllib/bin/pip install torch==2.13.0 -e . "ray[rllib]==2.60.0" pytest hypothesis
    .venv-rllib/bin/python -m pytest -m rllib tests/test_integrations_rllib.py
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.rllib

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rllib_ppo.py"


def _example():
    try:
        import ray.rllib  # noqa: F401
    except ImportError as exc:  # ray without its rllib extras: dm-tree, ...
        pytest.skip(f"RLlib is not importable here ({exc}); see this module's docstring")
    spec = importlib.util.spec_from_file_location("rllib_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_passes_rllib_env_check_with_unmasked_samples():
    """RLlib's pre-check steps a bare ``Discrete(88)`` sample: ``penalize`` takes any id."""
    example = _example()
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = example.make_env()
    obs, _ = env.reset(seed=3)
    (agent,) = obs
    assert set(obs[agent]) == {"observations", "action_mask"}
    assert obs[agent] in env.observation_spaces[agent]
    for _ in range(20):  # some samples are illegal: each is penalised, none raises
        check_multiagent_environments(env)
    # an illegal id leaves the hand as it was, the same seat owes the decision, reward -1
    env.reset(seed=3)
    agent = env.env.agent_selection
    mask = env.env.observe(agent)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    obs, rew, term, trunc, info = env.step({agent: bad})
    assert list(obs) == [agent] and rew[agent] == -1.0 and info[agent]["illegal_action"]
    assert not term["__all__"] and not trunc["__all__"]
    assert np.array_equal(obs[agent]["action_mask"], mask)


def test_masked_ppo_trains_and_samples_only_legal_actions(capsys):
    example = _example()
    doc = example.main(["--iterations", "2", "--batch", "256", "--seed", "0"])
    assert doc["iterations"] == 2
    assert [r["iteration"] for r in doc["per_iteration"]] == [1, 2]
    assert doc["env_steps"] >= 2 * 256
    assert doc["sampled_actions"] > 400  # the check below saw (almost) every env step
    assert doc["illegal_sampled_actions"] == 0
    assert '"illegal_sampled_actions": 0' in capsys.readouterr().out
