"""``trimcp list``, ``trimcp call`` and ``trimcp inspect``: any MCP server from the shell.

* ``trimcp list TARGET [tools|resources|templates|prompts]`` prints one line per item
  (name and description; the URI of resources and templates).
* ``trimcp call TARGET TOOL --args '{"k": 1}'`` calls a tool: progress goes to stderr
  as it comes, the result's text (and structured content, as JSON) to stdout. Ctrl-C
  cancels the call (the server gets ``notifications/cancelled``) and exits 130. A tool
  error exits 1.
* ``trimcp inspect TARGET``: server info, the negotiated revision and era,
  capabilities, instructions and every listing the server offers.

``--json`` prints the raw JSON instead; ``--era`` picks the era (default ``auto``);
``--timeout`` bounds each request. TARGET is described in :mod:`._target`. Exit
status: 0, 1 for an MCP error or a tool error, 2 for a usage or target error, 130
when interrupted.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from trimcp.binding import unstructure
from trimcp.client import Client, open_client
from trimcp.dispatch import McpError
from trimcp.nursery import SessionLimits

from ._target import UsageError, Words, open_target, split_words

__all__ = ["add_client_commands"]

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
KINDS = ("tools", "resources", "templates", "prompts")
_FLAGS = {"--json"}
_VALUED = {"--args", "--era", "--timeout"}


def add_client_commands(commands: Any) -> None:
    """Register ``list``, ``call`` and ``inspect`` on the ``trimcp`` subparsers."""
    for name, summary, usage, run in (
        ("list", "list a server's tools, resources, templates or prompts",
         "TARGET [tools|resources|templates|prompts]", _list),
        ("call", "call a tool of a server", "TARGET TOOL [--args JSON]", _call),
        ("inspect", "show a server's info, revision, era, capabilities and listings",
         "TARGET", _inspect),
    ):  # fmt: skip
        parser: argparse.ArgumentParser = commands.add_parser(
            name,
            help=summary,
            usage=f"trimcp {name} [--json] [--era ERA] [--timeout S] {usage}  (or -- COMMAND...)",
            description=f"{summary.capitalize()}. TARGET is a server file (server.py[:NAME]), "
            "an http(s):// or ws(s):// URL, or a command after --.",
        )
        parser.add_argument("--json", action="store_true", help="print the raw JSON")
        parser.add_argument("--era", help="auto (default), handshake or stateless")
        parser.add_argument("--timeout", help="seconds each request may take (60)")
        if name == "call":
            parser.add_argument("--args", help="the tool's arguments, a JSON object")
        parser.add_argument("words", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        parser.set_defaults(func=_runner(run))


Command = Callable[[Client, list[str], dict[str, Any]], Awaitable[int]]


def _runner(command: Command) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            words = split_words(args.words, _FLAGS, _VALUED)
            for option in ("json", "era", "timeout", "args"):
                given = getattr(args, option, None)
                if given not in (None, False):
                    words.options.setdefault(f"--{option}", given)
            transport, rest = open_target(words)
            era = words.options.get("--era", "auto")
            if era not in ("auto", "handshake", "stateless"):
                raise UsageError(f"--era must be auto, handshake or stateless, not {era!r}")
            timeout = float(words.options.get("--timeout", 60))
        except (UsageError, ValueError) as exc:
            print(f"trimcp: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return trio.run(_session, command, transport, era, timeout, rest, words)

    return run


async def _session(
    command: Command, transport: Any, era: str, timeout: float, rest: list[str], words: Words
) -> int:
    options = dict(words.options)
    options["timeout"] = timeout
    limits = SessionLimits(request_timeout=timeout, max_request_timeout=max(600, timeout))
    try:
        async with open_client(
            transport,
            era=era,  # type: ignore[arg-type]
            name="trimcp-cli",
            limits=limits,
        ) as client:
            return await command(client, rest, options)
    except UsageError as exc:
        print(f"trimcp: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except McpError as exc:
        print(f"trimcp: error: {exc.message} ({exc.code})", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"trimcp: error: cannot reach the server: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _dump(value: Any) -> None:
    print(json.dumps(unstructure(value), indent=2, ensure_ascii=False))


# ---------------------------------------------------------------------- list
async def _listing(client: Client, kind: str) -> list[Any]:
    capability = "resources" if kind in ("resources", "templates") else kind
    if getattr(client.state.server_capabilities, capability) is None:
        return []
    if kind == "tools":
        return await client.list_all_tools()
    if kind == "resources":
        return await client.list_all_resources()
    if kind == "templates":
        return await client.list_all_resource_templates()
    return await client.list_all_prompts()


def _line(kind: str, item: Any) -> str:
    where = getattr(item, "uri", None) or getattr(item, "uri_template", None)
    head = f"{item.name}  {where}" if where else item.name
    description = (item.description or "").strip().splitlines()
    return f"{head}  - {description[0]}" if description else head


async def _list(client: Client, rest: list[str], options: dict[str, Any]) -> int:
    if len(rest) > 1 or (rest and rest[0] not in KINDS):
        raise UsageError(f"list what? one of {', '.join(KINDS)} (got {' '.join(rest)})")
    kind = rest[0] if rest else "tools"
    items = await _listing(client, kind)
    if options.get("--json"):
        _dump(items)
    else:
        for item in items:
            print(_line(kind, item))
    return 0


# ---------------------------------------------------------------------- call
async def _call(client: Client, rest: list[str], options: dict[str, Any]) -> int:
    if len(rest) != 1:
        raise UsageError("call needs exactly one TOOL name after the TARGET")
    try:
        arguments = json.loads(options.get("--args", "{}"))
    except ValueError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise UsageError("--args must be a JSON object")

    async def progress(done: float, total: float | None, message: str | None) -> None:
        shown = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
        print(f"progress {shown}{f' {message}' if message else ''}", file=sys.stderr, flush=True)

    result = None
    with trio.CancelScope() as scope, trio.open_signal_receiver(signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                async for _ in signals:
                    scope.cancel()  # the session sends notifications/cancelled
                    return

            nursery.start_soon(watch)
            result = await client.call_tool(
                rest[0], arguments, on_progress=progress, timeout=options["timeout"]
            )
            nursery.cancel_scope.cancel()
    if result is None:
        print("trimcp: call cancelled", file=sys.stderr)
        return EXIT_INTERRUPTED
    if options.get("--json"):
        _dump(result)
    else:
        for block in result.content:
            text = getattr(block, "text", None)
            print(text if isinstance(text, str) else json.dumps(unstructure(block)))
        if result.structured_content is not None:
            print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return EXIT_ERROR if result.is_error else 0


# ---------------------------------------------------------------------- inspect
async def _inspect(client: Client, rest: list[str], options: dict[str, Any]) -> int:
    if rest:
        raise UsageError(f"inspect takes only a TARGET (got {' '.join(rest)})")
    info = client.server_info
    listings = {kind: await _listing(client, kind) for kind in KINDS}
    report: dict[str, Any] = {
        "serverInfo": unstructure(info) if info is not None else None,
        "protocolVersion": client.protocol_version,
        "era": "stateless" if client.era.stateless else "handshake",
        "capabilities": unstructure(client.state.server_capabilities),
        "instructions": client.instructions,
        **{kind: unstructure(items) for kind, items in listings.items()},
    }
    if options.get("--json"):
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    name = f"{info.name} {info.version}" if info is not None else "(no server info)"
    print(f"server:    {name}")
    print(f"revision:  {report['protocolVersion']} ({report['era']} era)")
    capabilities = report["capabilities"] or {}
    print(f"capabilities: {', '.join(sorted(capabilities)) or '(none)'}")
    if client.instructions:
        print(f"instructions: {client.instructions}")
    for kind, items in listings.items():
        print(f"\n{kind} ({len(items)}):")
        for item in items:
            print(f"  {_line(kind, item)}")
    return 0
