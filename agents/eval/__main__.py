"""``python -m sichuan_env.agents.eval``: the ``sichuan-eval`` command."""

import sys

from sichuan_env.agents.eval.cli import cli

if __name__ == "__main__":
    sys.exit(cli())
