"""Baseline agents (rule-based and PyTorch) for sichuan_env; filled in with the env issue."""
