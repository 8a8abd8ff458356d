"""Belief models: what a seat's opponents hold, wait on and would win on, and the deal-in guard."""
