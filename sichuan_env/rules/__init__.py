"""Rule layer: the ruleset config and the fan scorer."""

from .config import PRESETS, RuleConfig
from .scoring import BestWait, WinScore, WinScores, best_wait_score, score_win, score_win_batch

__all__ = [
    "PRESETS",
    "BestWait",
    "RuleConfig",
    "WinScore",
    "WinScores",
    "best_wait_score",
    "score_win",
    "score_win_batch",
]
