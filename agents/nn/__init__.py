"""Neural agents: the policy network, its hand-analysis features, and ``TorchAgent``."""
