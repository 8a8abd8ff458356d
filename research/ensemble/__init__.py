"""Averaging the rounds' networks: an ensemble as strongest-net (issue #40)."""
