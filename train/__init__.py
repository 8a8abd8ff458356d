"""Training scripts (CleanRL-style, one file per algorithm); filled in with the env issue."""
