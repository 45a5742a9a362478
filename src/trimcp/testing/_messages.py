"""Strategies for valid MCP messages of any revision, built from its JSON schema.

Every strategy here draws plain JSON values (dicts) that validate against the named
revision's ``JSONRPCMessage`` and against the definition of their method. Requests get
the id you give (or any valid id), so a caller that needs unique ids keeps control.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st

from ._compile import from_definition
from ._schemas import method_table

__all__ = [
    "client_notifications",
    "client_requests",
    "request_ids",
    "responses",
    "server_messages",
]

Id = str | int


def request_ids() -> st.SearchStrategy[Id]:
    """Valid JSON-RPC ids as MCP allows them: integers and strings."""
    return st.integers(min_value=-(2**53), max_value=2**53) | st.text(
        string.ascii_letters + string.digits + "-_:.", min_size=1, max_size=12
    )


def _ids(request_id: Id | None) -> st.SearchStrategy[Id]:
    return request_ids() if request_id is None else st.just(request_id)


def _pick(
    table: dict[str, str], methods: Iterable[str] | None, exclude: Iterable[str]
) -> list[str]:
    chosen = set(table) if methods is None else set(methods) & set(table)
    chosen -= set(exclude)
    return sorted(chosen)


def _request(revision: str, definition: str, ids: st.SearchStrategy[Id]) -> Any:
    return st.tuples(from_definition(revision, definition), ids).map(
        lambda pair: {**pair[0], "jsonrpc": "2.0", "id": pair[1]}
    )


def _notification(revision: str, definition: str) -> Any:
    return from_definition(revision, definition).map(lambda v: {**v, "jsonrpc": "2.0"})


def client_requests(
    revision: str,
    *,
    request_id: Id | None = None,
    methods: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
) -> st.SearchStrategy[dict[str, Any]]:
    """Client-to-server requests of ``revision`` (every method unless narrowed)."""
    names = tuple(_pick(dict(method_table(revision).client_requests), methods, exclude))
    if not names:
        raise ValueError(f"no client request methods left for {revision}")
    base = _requests(revision, names)
    if request_id is None:
        return base
    return base.map(lambda message: {**message, "id": request_id})


@functools.cache
def _requests(revision: str, names: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    # Built once per revision and method set: a new one_of per call would make
    # Hypothesis re-analyse the whole (recursive) schema graph every time.
    table = method_table(revision).client_requests
    return st.one_of([_request(revision, table[m], request_ids()) for m in names])


def client_notifications(
    revision: str, *, methods: Iterable[str] | None = None, exclude: Iterable[str] = ()
) -> st.SearchStrategy[dict[str, Any]]:
    """Client-to-server notifications of ``revision``."""
    names = tuple(_pick(dict(method_table(revision).client_notifications), methods, exclude))
    if not names:
        raise ValueError(f"no client notifications left for {revision}")
    return _notifications(revision, names)


@functools.cache
def _notifications(revision: str, names: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    table = method_table(revision).client_notifications
    return st.one_of([_notification(revision, table[m]) for m in names])


def responses(revision: str, method: str, request_id: Id) -> st.SearchStrategy[dict[str, Any]]:
    """A successful response to a ``method`` request (for example a reverse call)."""
    definition = method_table(revision).results[method]
    return from_definition(revision, definition).map(
        lambda result: {"jsonrpc": "2.0", "id": request_id, "result": result}
    )


def server_messages(revision: str) -> st.SearchStrategy[dict[str, Any]]:
    """Anything a server may send: requests, notifications, results and errors."""
    table = method_table(revision)
    parts: list[st.SearchStrategy[dict[str, Any]]] = [
        _request(revision, d, request_ids()) for d in table.server_requests.values()
    ]
    parts += [_notification(revision, d) for d in table.server_notifications.values()]
    for method in table.client_requests:

        def answer(request_id: Id, method: str = method) -> st.SearchStrategy[dict[str, Any]]:
            return responses(revision, method, request_id)

        parts.append(request_ids().flatmap(answer))
    error_def = "JSONRPCError" if revision < "2025-11-25" else "JSONRPCErrorResponse"
    parts.append(from_definition(revision, error_def))
    return st.one_of(parts)
