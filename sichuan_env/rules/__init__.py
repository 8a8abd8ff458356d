"""Rule layer: the ruleset config and the fan scorer."""

from .config import PRESETS, RuleConfig
from .scoring import WinScore, best_wait_score, score_win

__all__ = ["PRESETS", "RuleConfig", "WinScore", "best_wait_score", "score_win"]
