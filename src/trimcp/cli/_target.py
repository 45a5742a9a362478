"""What ``trimcp list``, ``call`` and ``inspect`` connect to, and their argument words.

A target is one of:

* a URL: ``http://`` or ``https://`` (Streamable HTTP), ``ws://`` or ``wss://``
  (WebSocket);
* a command after ``--`` (a stdio server, started as a child process);
* a server file or module, ``server.py[:NAME]``: loaded and served in this process, in
  memory.

The subcommands take their options anywhere before ``--`` (``trimcp call server.py
echo --args '{}' --json`` as well as ``trimcp call --json server.py echo``), so the
words after the subcommand are read here rather than by argparse, which would hand
everything after the first positional word to the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from trimcp.transports import ClientTransport, stdio_command, streamable_http, websocket

from ._loader import LoadError, load_server

__all__ = ["Words", "open_target", "split_words"]


class UsageError(Exception):
    """The command line does not say what to do (exit status 2)."""


@attrs.define
class Words:
    """The words after a subcommand: positionals, options, and a ``--`` command."""

    positionals: list[str]
    options: dict[str, Any]
    command: list[str]


def split_words(words: Sequence[str], flags: set[str], valued: set[str]) -> Words:
    """Read ``words``: ``--flag``, ``--name VALUE`` / ``--name=VALUE``, positionals, and
    everything after ``--`` as the command."""
    out = Words([], {}, [])
    items = list(words)
    i = 0
    while i < len(items):
        word = items[i]
        i += 1
        if word == "--":
            out.command = items[i:]
            break
        name, eq, value = word.partition("=")
        if name in flags and not eq:
            out.options[name] = True
        elif name in valued:
            if not eq:
                if i >= len(items):
                    raise UsageError(f"{name} needs a value")
                value = items[i]
                i += 1
            out.options[name] = value
        elif word.startswith("--") and len(word) > 2:
            raise UsageError(f"unknown option {word}")
        else:
            out.positionals.append(word)
    return out


def open_target(words: Words) -> tuple[ClientTransport, list[str]]:
    """The transport the words name, and the positionals left after the target."""
    if words.command:
        return stdio_command(*words.command), words.positionals
    if not words.positionals:
        raise UsageError("give a TARGET: a server file, a URL, or -- COMMAND...")
    target, rest = words.positionals[0], words.positionals[1:]
    if target.startswith(("http://", "https://")):
        return streamable_http(target), rest
    if target.startswith(("ws://", "wss://")):
        return websocket(target), rest
    try:
        server = load_server(target)
    except LoadError as exc:
        raise UsageError(str(exc)) from None
    return server.in_memory(), rest
