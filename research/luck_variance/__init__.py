"""The per-seat value model fitted to the luck adjustment's own variance, draw by draw (issue #39)."""
