"""``python -m benchmarks``: the same as ``trimcp bench`` (its live progress included)."""

import sys

from trimcp.cli import main

raise SystemExit(main(["bench", *sys.argv[1:]]))
