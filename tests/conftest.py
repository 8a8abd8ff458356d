import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# numba's OpenMP threads must not spin between parallel calls while torch trains in a test
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["viewer_support"]  # the viewer tests' record fixtures

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)
settings.register_profile("soak", deadline=None, max_examples=50_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
