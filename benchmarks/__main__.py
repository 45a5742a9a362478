"""``python -m benchmarks``: the benchmarks of ``trimcp bench`` (:mod:`trimcp.bench`)."""

from trimcp.bench import main

raise SystemExit(main())
