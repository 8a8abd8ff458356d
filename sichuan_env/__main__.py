"""``python -m sichuan_env``: the hand-core demo."""

import sys

from .demo import main

sys.exit(main())
