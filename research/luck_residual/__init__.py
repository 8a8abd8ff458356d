"""Where the luck adjustment's residual lives: exact-policy rollouts against the value model (issue #39)."""
