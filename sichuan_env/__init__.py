"""Sichuan Mahjong, 血战到底: a numba hand core for reinforcement learning.

The public hand API::

    from sichuan_env import parse, to_str, is_win, waits, shanten
    from sichuan_env import is_win_batch, waits_batch, shanten_batch
    from sichuan_env import score_win, score_win_batch, best_wait_score, RuleConfig

Rules follow ``docs/rules.md`` (the rules page of the docs).
"""

from importlib.metadata import PackageNotFoundError, version

from . import threads  # noqa: F401  (OMP_WAIT_POLICY before numba or torch load OpenMP)
from .engine import Game, IllegalActionError, check_invariants
from .envs.pettingzoo import env, raw_env
from .hand import (
    discard_table,
    is_win,
    is_win_batch,
    shanten,
    shanten_batch,
    waits,
    waits_batch,
    waits_mask,
)
from .plugins import register_gymnasium, register_pettingzoo
from .rules import (
    PRESETS,
    BestWait,
    RuleConfig,
    WinScore,
    WinScores,
    best_wait_score,
    score_win,
    score_win_batch,
)
from .tiles import InputTypeError, parse, tile_index, tile_name, to_str

register_gymnasium()  # gymnasium.make("SichuanMahjong-v0"): ids come from entry points
register_pettingzoo()  # pettingzoo.make("aec", "SichuanMahjong-v0") where PettingZoo has a registry

try:
    __version__ = version("sichuan-env")  # single source: pyproject.toml [project] version
except PackageNotFoundError:  # a source tree that was never pip-installed
    __version__ = "0+unknown"

__all__ = [
    "PRESETS",
    "BestWait",
    "Game",
    "IllegalActionError",
    "InputTypeError",
    "RuleConfig",
    "WinScore",
    "WinScores",
    "__version__",
    "best_wait_score",
    "check_invariants",
    "discard_table",
    "env",
    "is_win",
    "is_win_batch",
    "parse",
    "raw_env",
    "score_win",
    "score_win_batch",
    "shanten",
    "shanten_batch",
    "tile_index",
    "tile_name",
    "to_str",
    "waits",
    "waits_batch",
    "waits_mask",
]
