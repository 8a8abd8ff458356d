"""The advantage-sum estimate of a duplicate match (issue #39)."""
