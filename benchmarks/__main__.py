"""``python -m benchmarks``: the comparison harness (see :mod:`benchmarks.cli`)."""

from benchmarks.cli import main

raise SystemExit(main())
