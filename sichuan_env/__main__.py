"""``python -m sichuan_env``: the hand-core demo."""

from .demo import main

main()
