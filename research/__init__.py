"""Experiments beside the library: each topic holds its code, run script, README and results.

Nothing here is installed, and no library module imports it; run a topic from a
checkout (``python -m research.<topic>.<script> ...``, or its ``run.sh``).
"""
