"""Evaluation: duplicate matches, their statistics, metrics of predictions (``metrics``), Ray."""
