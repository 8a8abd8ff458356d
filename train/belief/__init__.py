"""Belief-model training: the training loop, its baselines and its report."""
