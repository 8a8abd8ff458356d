"""Expert iteration (issue #23): the per-round pictures and the claim-search comparison."""
