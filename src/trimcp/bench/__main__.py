"""``python -m trimcp.bench``: the same as ``trimcp bench``."""

from trimcp.bench import main

raise SystemExit(main())
