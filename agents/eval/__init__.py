"""Evaluation: duplicate matches, their statistics, and Ray for parallel matches."""
