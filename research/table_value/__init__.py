"""The whole-table value network in the luck-adjusted estimate: measurements (issue #39)."""
