"""The floor under any luck adjustment: the between-deal variance of a duplicate match."""
