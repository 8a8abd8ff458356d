"""The engine's error type for decisions (bad arguments raise plain ``ValueError`` / ``TypeError``)."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action that is malformed or not legal now; the hand is left unchanged."""

    def __init__(self, message: str, legal: list[str] | None = None, index: int | None = None):
        self.legal = legal or []
        self.index = index
        where = f"action {index}: " if index is not None else ""
        shown = ", ".join(self.legal) if len(self.legal) <= 40 else f"{len(self.legal)} actions"
        super().__init__(
            f"{where}{message}; legal: [{shown}]" if legal is not None else where + message
        )
