"""Observation encoders: versioned, seat-relative planes over the 27 tile types."""

from .observation import OBS_SHAPE, OBS_SPEC, block_offsets, encode_v1, obs_rows

__all__ = ["OBS_SHAPE", "OBS_SPEC", "block_offsets", "encode_v1", "obs_rows"]
