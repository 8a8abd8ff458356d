"""Does the belief model help play? The belief-guarded agent against its base, wall by wall."""
