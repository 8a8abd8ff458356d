"""After-win search on the strongest network (issue #40)."""
