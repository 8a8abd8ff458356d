"""Observation encoders: versioned, seat-relative planes over the 27 tile types.

``registry`` maps each version to its spec and numba writers; importing this
package registers the built-in versions (``v1``).
"""

from . import v1  # noqa: F401  (registers version 1)
from .registry import ObsVersion, block_offsets, get, obs_rows, obs_shape, register, versions

__all__ = ["ObsVersion", "block_offsets", "get", "obs_rows", "obs_shape", "register", "versions"]
