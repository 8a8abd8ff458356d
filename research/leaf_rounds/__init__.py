"""Value-leaf expert-iteration rounds (issue #40): run, confirmation and plot."""
