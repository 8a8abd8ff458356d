"""The hybrid player: points against cost (see README.md)."""
