"""Value-leaf expert-iteration rounds with the advantage-sum estimate choosing the margins (issue #40)."""
