"""Luck corrections whose counterfactual draws are played forward to the next draw (issue #39)."""
