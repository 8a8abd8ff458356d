"""Threads, in one place: OpenMP's wait policy and the thread counts numba and torch share.

``import sichuan_env`` sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment
already names one: numba's OpenMP threads must not spin between parallel calls
while torch computes, or torch runs 10-20x slower on a busy CPU. The policy is
read when the OpenMP runtime loads, so import ``sichuan_env`` (or set the
variable yourself) before ``torch``. ``set_threads`` keeps numba's and torch's
thread counts equal: numba's OpenMP layer resets the count that torch shares
at every parallel launch.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def set_threads(threads: int) -> None:
    """Use ``threads`` threads in numba's parallel kernels and, when it is loaded, in torch.

    Raises:
        ValueError: threads below 1 (or not an integer).
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    import numba

    # numba.config sets its NUMBA_* settings at import time (globals()), so they are not declared
    cap = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(min(threads, cap))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
