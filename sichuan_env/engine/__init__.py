"""The 血战到底 engine: one numba implementation of a whole hand, and its facades."""

from .game import Game, IllegalActionError
from .invariants import InvariantError, check_invariants

__all__ = ["Game", "IllegalActionError", "InvariantError", "check_invariants"]
