"""``python -m sichuan_env``: the hand-core demo."""

import sys

from ._cli import run
from .demo import main

sys.exit(run(main, "python -m sichuan_env"))
