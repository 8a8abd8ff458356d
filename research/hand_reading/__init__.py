"""Policy-aware hand readers (MCMC wall sampler, SMC hand reader) against heuristic opponents."""
