"""``python -m trimcp.bench``: the measurements of ``trimcp bench``, with progress as plain lines
(the live display belongs to the command line, :mod:`trimcp.cli`)."""

from trimcp.bench import main

raise SystemExit(main())
