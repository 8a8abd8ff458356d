"""Test-suite setup shared by tests/ and research/*/tests: helpers, Hypothesis profiles, tiers."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# numba's OpenMP threads must not spin between parallel calls while torch trains in a test
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests"))  # the shared helpers (engine_helpers, strategies, ...)

pytest_plugins = ["viewer_support"]  # the viewer tests' record fixtures

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)
settings.register_profile("soak", deadline=None, max_examples=50_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(config, items):
    """Tests under research/ belong to the ``research`` tier (they move with their code)."""
    research = ROOT / "research"
    for item in items:
        if research in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.research)
