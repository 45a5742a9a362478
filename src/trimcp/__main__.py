"""``python -m trimcp``: the same as the ``trimcp`` command."""

import sys

from trimcp.cli import main

if __name__ == "__main__":
    sys.exit(main())
