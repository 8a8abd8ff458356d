"""Observation encoders: versioned, seat-relative planes over the 27 tile types.

``registry`` maps each version to its spec and numba writers; importing this
package registers the built-in versions (``v1``, ``v2``).
"""

from . import v1, v2  # noqa: F401  (register versions 1 and 2)
from .registry import ObsVersion, block_offsets, get, obs_rows, obs_shape, register, versions

__all__ = ["ObsVersion", "block_offsets", "get", "obs_rows", "obs_shape", "register", "versions"]
