"""Belief-resampled determinizations in the rollout search (issue #23, item 3)."""
