"""``trimcp conform``: property-based conformance testing of any MCP server.

``trimcp conform [OPTIONS] -- COMMAND...`` tests a server that speaks stdio (started
once per session); ``trimcp conform --url http://127.0.0.1:PORT/mcp`` one that serves
Streamable HTTP. Only loopback URLs are accepted unless ``--allow-remote`` is given (the
tool sends malformed and oversized input, which is not for other people's servers).
``--replay FILE`` re-runs one saved failure against the given server.

Exit status: 0 when every property held, 1 when one failed (each failure is printed with
its shrunk steps and written as a replay file under ``--out``), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from ._progress import progress

__all__ = ["add_parser"]

EXIT_FAILED = 1
EXIT_USAGE = 2


def add_parser(commands: Any) -> None:
    """Register ``conform`` on the ``trimcp`` subcommand parser."""
    conform = commands.add_parser(
        "conform",
        help="property-based conformance testing of an MCP server",
        description="Drive an MCP server with Hypothesis and check protocol properties "
        "after every step. Give the server as -- COMMAND... (stdio) or --url URL (HTTP).",
    )
    conform.add_argument("--url", help="a Streamable HTTP endpoint (loopback only by default)")
    conform.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --url that is not a loopback address",
    )
    conform.add_argument("--replay", type=Path, metavar="FILE", help="re-run one replay file")
    conform.add_argument("--max-examples", type=int, default=50, help="sessions to try (50)")
    conform.add_argument("--max-seconds", type=float, help="stop starting sessions after this")
    conform.add_argument("--steps", type=int, default=20, help="steps per session (20)")
    conform.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="seconds a request may go unanswered; progress restarts the wait (5)",
    )
    conform.add_argument(
        "--tool-timeout",
        action="append",
        default=[],
        metavar="NAME=SECONDS",
        help="the same wait for calls of one (slow) tool",
    )
    conform.add_argument("--out", type=Path, default=Path("conform-replays"), help="replay dir")
    conform.add_argument("--no-shrink", action="store_true", help="report failures unshrunk")
    conform.add_argument("--skip-tool", action="append", default=[], metavar="NAME")
    conform.add_argument("--no-call-tools", action="store_true", help="call no tools")
    conform.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="PROPERTY",
        help="do not report this property (to look past a known failure)",
    )
    conform.add_argument(
        "--revision", action="append", metavar="VERSION", help="revisions to negotiate (all)"
    )
    conform.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND... (stdio)")
    conform.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"trimcp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _target(args: argparse.Namespace) -> Any:
    from trimcp.testing import HttpTarget, StdioTarget

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.url):
        raise ValueError("give exactly one server: -- COMMAND... or --url URL")
    if args.url:
        return HttpTarget(args.url, allow_remote=args.allow_remote)
    return StdioTarget(command)


def _tool_timeouts(given: list[str]) -> dict[str, float]:
    """``NAME=SECONDS`` options as a mapping (``ValueError`` names a bad one)."""
    timeouts: dict[str, float] = {}
    for item in given:
        name, _, seconds = item.rpartition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = math.nan
        if not name or not value > 0 or math.isinf(value):
            raise ValueError(f"--tool-timeout {item!r}: expected NAME=SECONDS (seconds > 0)")
        timeouts[name] = value
    return timeouts


def run(args: argparse.Namespace) -> int:
    """The ``conform`` subcommand."""
    try:
        from trimcp import testing
    except ImportError as exc:  # hypothesis is an optional dependency
        return _fail(f"trimcp conform needs Hypothesis ({exc}); pip install 'trimcp[testing]'")
    try:
        target = _target(args)
        tool_timeouts = _tool_timeouts(args.tool_timeout)
    except ValueError as exc:
        return _fail(str(exc))
    options = testing.Options(
        response_timeout=args.timeout,
        skip_tools=tuple(args.skip_tool),
        call_tools=not args.no_call_tools,
        ignore=tuple(args.ignore),
        tool_timeouts=tool_timeouts,
    )
    unknown_properties = set(options.ignore) - set(testing.PROPERTIES)
    if unknown_properties:
        return _fail(f"unknown properties {sorted(unknown_properties)}")
    if args.replay is not None:
        return _replay(testing, target, args.replay, options)
    versions = tuple(args.revision or testing.HANDSHAKE_REVISIONS)
    unknown = set(versions) - set(testing.HANDSHAKE_REVISIONS)
    if unknown:
        return _fail(f"unknown revisions {sorted(unknown)}")
    print(f"conform: {target.describe()}", file=sys.stderr)

    with progress("conform", total=args.max_examples) as shown:

        def started(n: int) -> None:
            shown.update(n - 1, f"session {n}")
            if n % 10 == 0:
                shown.line(f"conform: {n} sessions run", plain_only=True)

        report = testing.run_conformance(
            target,
            max_examples=args.max_examples,
            max_seconds=args.max_seconds,
            steps=args.steps,
            options=options,
            versions=versions,
            shrink=not args.no_shrink,
            on_example=started,
        )
        shown.update(report.examples, f"{len(report.failures)} failed")
    print(f"conform: {report.examples} sessions in {report.seconds:.1f} s", file=sys.stderr)
    for failure in report.failures:
        path = args.out / f"{failure.property}.json"
        testing.write_replay(failure, path, report.target, options)
        print(f"\nFAILED {failure.property}: {testing.PROPERTIES.get(failure.property, '')}")
        print(f"  {failure.detail}")
        count = len(failure.steps)
        print(f"  reproduced by {count} step{'s' * (count != 1)}, each followed by a ping")
        print(f"  (replay: trimcp conform --replay {path} ...):")
        for step in failure.steps:
            print("   ", _describe(step))
    if report.ok:
        print(f"all {len(testing.PROPERTIES)} properties held")
        return 0
    return EXIT_FAILED


def _describe(step: dict[str, Any]) -> str:
    if "frame" in step:
        frame = step["frame"]
        text = frame.get("text", "<" + frame.get("base64", "")[:40] + " base64>")
        text = text if len(text) <= 160 else text[:140] + f"... ({len(text)} chars)"
        return f"{step['op']} [{frame['kind']}] {text}"
    return json.dumps(step)


def _replay(testing: Any, target: Any, path: Path, options: Any) -> int:
    try:
        body = testing.load_replay(path)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    found = testing.replay(target, body["steps"], options)
    if found is None:
        print(f"replay {path}: every property held ({body['property']} did not fail)")
        return 0
    print(f"replay {path}: FAILED {found}")
    return EXIT_FAILED
