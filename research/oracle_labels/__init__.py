"""Expert-iteration labels from the true state (rollouts with only the wall reshuffled), issue #40."""
