"""Throughput and strength benchmarks: scripts that print a table and write JSON."""
