"""Argument parsing and the subcommands of ``trimcp``.

Contract: logging goes to stderr only (stdout belongs to the protocol when serving
stdio); a usage or target error prints one line to stderr and exits 2: a target that
does not load (missing, or failing while it is imported: the line names the error and
where it was raised), an address to listen on that is taken or not allowed; ``--http``
and ``--ws`` are exclusive. ``serve`` over stdio exits 0 once stdin closes; ``serve
--http`` and ``--ws`` shut down gracefully on SIGINT or SIGTERM (running requests finish
within the grace, a second signal stops at once) and exit 0.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any

import trio

from trimcp.bench._gc import MODES as GC_MODES
from trimcp.nursery import tune_gc
from trimcp.server import Server, serve_http, serve_stdio, serve_websocket

from ._bench import add_bench
from ._conform import add_parser as add_conform_parser
from ._loader import LoadError, load_server
from ._poke import add_client_commands

__all__ = ["build_parser", "main", "parse_host_port"]

logger = logging.getLogger("trimcp.cli")

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _version() -> str:
    import trimcp

    return trimcp.__version__


def parse_host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6, ``:PORT`` for 127.0.0.1) to a pair."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port in {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range in {value!r}")
    return host, port


def build_parser() -> argparse.ArgumentParser:
    """The ``trimcp`` parser; each subcommand sets ``func(args) -> exit status``."""
    parser = argparse.ArgumentParser(
        prog="trimcp", description="A Model Context Protocol engine on Trio."
    )
    parser.add_argument("--version", action="version", version=f"trimcp {_version()}")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for messages on stderr (default WARNING)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    serve = commands.add_parser(
        "serve",
        help="serve a trimcp.Server over stdio (or HTTP, or WebSocket)",
        description="Load the Server object NAME (default 'server') and serve it.",
    )
    serve.add_argument("target", metavar="TARGET", help="FILE.py[:NAME] or package.module[:NAME]")
    where = serve.add_mutually_exclusive_group()
    where.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=parse_host_port,
        help="serve Streamable HTTP on HOST:PORT instead of stdio",
    )
    where.add_argument(
        "--ws",
        metavar="HOST:PORT",
        type=parse_host_port,
        help="serve MCP over WebSocket on ws://HOST:PORT/mcp instead of stdio",
    )
    serve.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        dest="allowed_hosts",
        help="a host name the server answers to in Host and Origin (repeatable; '*': any "
        "Host). Bound to a non-loopback address, only IP-literal Hosts and these are "
        "accepted (DNS-rebinding guard)",
    )
    serve.add_argument(
        "--store",
        metavar="SPEC",
        help="where sessions, events and tasks live (with --http): 'memory' (default) or "
        "redis://HOST:PORT/DB, shared by every process serving the same server behind a "
        "load balancer (needs trimcp[redis])",
    )
    serve.add_argument(
        "--gc",
        choices=GC_MODES,
        default="tuned",
        help="the garbage collector: 'tuned' (default) freezes what the loaded server holds "
        "and collects young objects every 20000 allocations instead of CPython's few "
        "hundred (trimcp.tune_gc); 'default' keeps CPython's settings",
    )
    serve.set_defaults(func=_cmd_serve)
    add_conform_parser(commands)
    add_bench(commands)
    add_client_commands(commands)
    return parser


def _fail(message: str) -> int:
    print(f"trimcp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _cmd_serve(args: argparse.Namespace) -> int:
    if args.store is not None and args.http is None:
        return _fail("--store applies to --http")
    try:
        server = load_server(args.target)
    except LoadError as exc:
        return _fail(str(exc))
    if args.store is not None:
        try:
            server.use_store(args.store)
        except (ValueError, ImportError, RuntimeError) as exc:
            return _fail(str(exc))
    if args.gc == "tuned":
        tune_gc()  # the loaded server is part of what it freezes
    try:
        if args.ws is not None:
            host, port = args.ws
            serve = partial(serve_websocket, allowed_hosts=args.allowed_hosts)
            trio.run(_run_http, serve, server, host, port, "ws")
        elif args.http is not None:
            host, port = args.http
            serve = partial(serve_http, allowed_hosts=args.allowed_hosts)
            trio.run(_run_http, serve, server, host, port)
        else:
            logger.info("serving %s on stdio", server.info.name)
            trio.run(serve_stdio, server)
    except BaseException as exc:
        address = args.ws or args.http
        problem = _listen_error(exc) if address is not None else None
        if problem is None:
            raise
        host, port = address
        shown = f"[{host}]" if ":" in host else host
        return _fail(f"cannot listen on {shown}:{port}: {problem}")
    return 0


def _listen_error(exc: BaseException) -> str | None:
    """What went wrong when the only error (in nested groups) is an ``OSError`` from
    listening: the port is taken, the address is not this machine's, no permission."""
    leaves = [leaf for leaf in _leaves(exc) if not isinstance(leaf, trio.Cancelled)]
    if len(leaves) != 1 or not isinstance(leaves[0], OSError):
        return None
    error = leaves[0]
    return error.strerror or str(error)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def _run_http(
    serve_http: Callable[..., Any], server: Server, host: str, port: int, scheme: str = "http"
) -> None:
    """Serve until SIGINT or SIGTERM, then shut down gracefully (exit status 0).

    The first signal starts :meth:`Server.shutdown`: new requests are refused, running
    ones get its grace to finish and answer, then the rest are cancelled and the serve
    function returns. A second signal stops at once (cancellation). The signals are
    taken over rather than left to raise ``KeyboardInterrupt``, which would land in
    whichever task runs at that moment (an HTTP response half sent, say) instead of
    unwinding the server in order.
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(partial(serve_http, server, host=host, port=port))
            shown = f"[{host}]" if ":" in host else host
            # On stderr whatever the log level: with port 0 this is how to learn the port.
            print(
                f"trimcp: serving {server.info.name} on {scheme}://{shown}:{bound}/mcp",
                file=sys.stderr,
                flush=True,
            )
            async for signum in signals:
                logger.info(
                    "shutting down on %s (a second signal stops at once)",
                    signal.Signals(signum).name,
                )
                break
            async with trio.open_nursery() as stopping:
                stopping.start_soon(_stop_on_signal, signals, nursery.cancel_scope)
                await server.shutdown()
                stopping.cancel_scope.cancel()


async def _stop_on_signal(signals: AsyncIterator[int], scope: trio.CancelScope) -> None:
    async for signum in signals:
        logger.info("stopping at once on %s", signal.Signals(signum).name)
        scope.cancel()
        return


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trimcp`` with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        status: int = args.func(args)
    except BaseException as exc:
        if _interrupted(exc):
            return EXIT_INTERRUPTED
        raise
    return status


def _interrupted(exc: BaseException) -> bool:
    """A Ctrl-C, alone or as the only kind of error in (nested) exception groups."""
    return all(isinstance(leaf, KeyboardInterrupt) for leaf in _leaves(exc))
