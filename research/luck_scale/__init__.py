"""More data and a wider per-seat value model in the luck adjustment (issue #39)."""
