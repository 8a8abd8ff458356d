"""Rule-based agents: random, the heuristic, the population of styles, and their numba seats."""
