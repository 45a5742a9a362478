"""The official MCP JSON schemas, shipped with trimcp, and what they say about methods.

The schemas live in ``trimcp/testing/schemas/<revision>/schema.json`` (package data, so an
installed wheel finds them without a source checkout). Everything here is derived from
them once and cached: the definitions of each revision, a validator per definition, and
the method tables (which definition is the request, notification or result of a method,
and which side may send it). Nothing is hand-listed that the schema already says.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs
import jsonschema  # type: ignore[import-untyped]  # no stubs in the venv

__all__ = [
    "HANDSHAKE_REVISIONS",
    "REVISIONS",
    "MethodTable",
    "definitions",
    "method_table",
    "result_definition",
    "schema",
    "schema_errors",
]

#: Every revision whose schema ships with trimcp, oldest first.
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: The revisions negotiated with ``initialize`` (the stateful conformance machine's).
HANDSHAKE_REVISIONS = REVISIONS[:4]


@functools.cache
def schema(revision: str) -> Mapping[str, Any]:
    """The whole schema document of ``revision`` (``ext-tasks`` is accepted too)."""
    path = resources.files("trimcp.testing") / "schemas" / revision / "schema.json"
    if not path.is_file():
        raise KeyError(f"no MCP schema for revision {revision!r}")
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _section(revision: str) -> str:
    return "$defs" if "$defs" in schema(revision) else "definitions"


def definitions(revision: str) -> Mapping[str, Any]:
    """Definition name -> schema, for ``revision``."""
    defs: Mapping[str, Any] = schema(revision)[_section(revision)]
    return defs


def ref_name(ref: str) -> str:
    """``#/$defs/Name`` or ``#/definitions/Name`` to ``Name``."""
    return ref.rsplit("/", 1)[-1]


@functools.cache
def _validator(revision: str, definition: str) -> Any:
    root = schema(revision)
    if definition not in definitions(revision):
        raise KeyError(f"{revision} has no definition {definition}")
    document = {**root, "$ref": f"#/{_section(revision)}/{definition}"}
    return jsonschema.validators.validator_for(root)(document)


def schema_errors(revision: str, definition: str, value: Any) -> list[str]:
    """Every way ``value`` breaks ``definition`` of ``revision`` (empty when it is valid).

    Each entry names the failing location (``$.params.name``) and the reason; the list is
    sorted so reports are stable.
    """
    errors = _validator(revision, definition).iter_errors(value)
    return sorted(f"{e.json_path}: {e.message}" for e in errors)


@attrs.frozen
class MethodTable:
    """What one revision's schema says about its methods.

    Each mapping goes from a method name to the definition that describes the whole
    message (``CallToolRequest``); ``results`` maps a request method to its result.
    """

    client_requests: Mapping[str, str]
    client_notifications: Mapping[str, str]
    server_requests: Mapping[str, str]
    server_notifications: Mapping[str, str]
    results: Mapping[str, str]


def _members(revision: str, union: str) -> dict[str, str]:
    defs = definitions(revision)
    if union not in defs:
        return {}
    found: dict[str, str] = {}
    node = defs[union]
    # A union of one is written inline (2026-07-28's ClientNotification): it is its own member.
    for option in node.get("anyOf", [{"$ref": f"#/{union}"}]):
        name = ref_name(option["$ref"])
        method = defs[name].get("properties", {}).get("method", {}).get("const")
        if isinstance(method, str):
            found[method] = name
    return found


def result_definition(revision: str, request_definition: str) -> str:
    """The result of a request definition: ``XRequest`` -> ``XResult``, else ``EmptyResult``."""
    defs = definitions(revision)
    candidate = request_definition.removesuffix("Request") + "Result"
    if candidate in defs:
        return candidate
    return "EmptyResult" if "EmptyResult" in defs else "Result"


@functools.cache
def method_table(revision: str) -> MethodTable:
    """The method table of ``revision`` (computed once)."""
    client_requests = _members(revision, "ClientRequest")
    server_requests = _members(revision, "ServerRequest")
    results = {
        method: result_definition(revision, definition)
        for method, definition in {**server_requests, **client_requests}.items()
    }
    return MethodTable(
        client_requests=client_requests,
        client_notifications=_members(revision, "ClientNotification"),
        server_requests=server_requests,
        server_notifications=_members(revision, "ServerNotification"),
        results=results,
    )
