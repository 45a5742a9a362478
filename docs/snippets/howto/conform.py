"""Property-based conformance testing of a server, in this process."""

import trimcp
from trimcp.testing import MemoryTarget, run_conformance

server = trimcp.Server("checked", version="1.0")


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def main() -> None:
    report = run_conformance(MemoryTarget(server), max_examples=10, steps=10)
    print(f"{report.target}: {report.examples} sessions, {len(report.failures)} failures")
    for failure in report.failures:  # each one shrunk to the steps that reproduce it
        print(failure)


if __name__ == "__main__":
    main()
