"""Policy training: behaviour cloning, PPO (local or on Ray), search labels and distillation."""
