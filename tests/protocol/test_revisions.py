"""The revision table against the published schemas, negotiation, eras, method names."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trimcp import protocol as p
from trimcp.protocol import Feature as F

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"


def _defs(version: str) -> dict[str, Any]:
    root = json.loads((SCHEMAS / version / "schema.json").read_text())
    return root.get("$defs") or root["definitions"]  # type: ignore[no-any-return]


DEFS = {v: _defs(v) for v in p.ALL_VERSIONS}
TASKS_EXTENSION_DEFS = _defs("ext-tasks")


def _params(d: dict[str, Any], request: str) -> dict[str, Any]:
    own = d.get(f"{request}Params")
    return own if own is not None else d[request]["properties"]["params"]  # type: ignore[no-any-return]


def _props(d: dict[str, Any], name: str) -> dict[str, Any]:
    return d.get(name, {}).get("properties", {})  # type: ignore[no-any-return]


# One mechanical probe per feature: what in a revision's schema.json shows the feature.
PROBES: dict[F, Callable[[dict[str, Any]], bool]] = {
    F.JSONRPC_BATCH: lambda d: "JSONRPCBatchRequest" in d,
    F.AUDIO_CONTENT: lambda d: "AudioContent" in d,
    F.TOOL_ANNOTATIONS: lambda d: "ToolAnnotations" in d,
    F.PROGRESS_MESSAGE: lambda d: "message" in _params(d, "ProgressNotification")["properties"],
    F.COMPLETIONS: lambda d: "completions" in _props(d, "ServerCapabilities"),
    F.STRUCTURED_OUTPUT: lambda d: "structuredContent" in _props(d, "CallToolResult"),
    F.ELICITATION: lambda d: "ElicitRequest" in d,
    F.RESOURCE_LINK: lambda d: "ResourceLink" in d,
    F.TITLES: lambda d: "title" in _props(d, "Implementation"),
    F.META_ON_TYPES: lambda d: "_meta" in _props(d, "Tool") and "_meta" in _props(d, "TextContent"),
    F.COMPLETION_CONTEXT: lambda d: "context" in _params(d, "CompleteRequest")["properties"],
    F.ANNOTATIONS_LAST_MODIFIED: lambda d: "lastModified" in _props(d, "Annotations"),
    F.ICONS: lambda d: "Icon" in d and "icons" in _props(d, "Tool"),
    F.IMPLEMENTATION_DESCRIPTION: lambda d: (
        {"description", "websiteUrl"} <= set(_props(d, "Implementation"))
    ),
    F.URL_ELICITATION: lambda d: "ElicitRequestURLParams" in d,
    F.SAMPLING_TOOLS: lambda d: (
        "ToolUseContent" in d and "tools" in _params(d, "CreateMessageRequest")["properties"]
    ),
    F.ELICITATION_DEFAULTS: lambda d: "default" in _props(d, "StringSchema"),
    F.ENUM_SCHEMAS: lambda d: "TitledSingleSelectEnumSchema" in d,
    F.TASKS: lambda d: "Task" in d and "tasks" in _props(d, "ServerCapabilities"),
    F.TOOL_EXECUTION: lambda d: "execution" in _props(d, "Tool"),
    F.ELICITATION_COMPLETE: lambda d: "ElicitationCompleteNotification" in d,
    F.INITIALIZE: lambda d: "InitializeRequest" in d and "InitializedNotification" in d,
    F.PING: lambda d: "PingRequest" in d,
    F.LOGGING_SET_LEVEL: lambda d: "SetLevelRequest" in d,
    F.RESOURCE_SUBSCRIBE: lambda d: "SubscribeRequest" in d and "UnsubscribeRequest" in d,
    F.ROOTS_LIST_CHANGED: lambda d: "RootsListChangedNotification" in d,
    F.SERVER_DISCOVER: lambda d: "DiscoverRequest" in d,
    F.MRTR: lambda d: (
        "InputRequiredResult" in d
        and "inputResponses" in _params(d, "CallToolRequest")["properties"]
    ),
    F.RESULT_TYPE: lambda d: "resultType" in d["Result"].get("required", []),
    F.SUBSCRIPTIONS_LISTEN: lambda d: "SubscriptionsListenRequest" in d,
    F.CACHE_HINTS: lambda d: "ttlMs" in _props(d, "CacheableResult"),
    F.EXTENSIONS: lambda d: "extensions" in _props(d, "ServerCapabilities"),
    F.STRUCTURED_CONTENT_ANY: lambda d: (
        "structuredContent" in _props(d, "CallToolResult")
        and "type" not in _props(d, "CallToolResult")["structuredContent"]
    ),
    # The tasks extension has its own schema; the core schema shows the era it plugs into.
    F.TASKS_EXTENSION: lambda d: "DiscoverRequest" in d and "Task" not in d,
}


def test_every_feature_has_a_probe() -> None:
    assert set(PROBES) == set(F)


@pytest.mark.parametrize("feature", list(F), ids=lambda f: f.name)
def test_feature_table_matches_the_schemas(feature: F) -> None:
    table = {v: p.supports(v, feature) for v in p.ALL_VERSIONS}
    schema = {v: PROBES[feature](DEFS[v]) for v in p.ALL_VERSIONS}
    assert table == schema


@pytest.mark.parametrize(
    ("version", "feature", "expected"),
    [
        ("2024-11-05", F.AUDIO_CONTENT, False),
        ("2025-03-26", F.AUDIO_CONTENT, True),
        ("2025-03-26", F.JSONRPC_BATCH, True),
        ("2025-06-18", F.JSONRPC_BATCH, False),
        ("2024-11-05", F.COMPLETIONS, False),
        ("2025-06-18", F.STRUCTURED_OUTPUT, True),
        ("2025-03-26", F.ELICITATION, False),
        ("2025-06-18", F.ICONS, False),
        ("2025-11-25", F.ICONS, True),
        ("2025-11-25", F.TASKS, True),
        ("2026-07-28", F.TASKS, False),
        ("2026-07-28", F.TASKS_EXTENSION, True),
        ("2026-07-28", F.ICONS, True),
        ("2026-07-28", F.PING, False),
        ("2025-11-25", F.SERVER_DISCOVER, False),
        ("2026-07-28", F.MRTR, True),
        ("2026-07-28", F.RESULT_TYPE, True),
    ],
)
def test_supports_spot_checks(version: str, feature: F, expected: bool) -> None:
    assert p.supports(version, feature) is expected
    assert (feature in p.features_of(version)) is expected


def test_unknown_version_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown MCP protocol version"):
        p.supports("1999-01-01", F.PING)
    with pytest.raises(ValueError, match="unknown"):
        p.era_of("draft")


def test_versions() -> None:
    assert p.ALL_VERSIONS == p.HANDSHAKE_VERSIONS + p.STATELESS_VERSIONS
    assert list(p.ALL_VERSIONS) == sorted(p.ALL_VERSIONS)
    assert p.LATEST_HANDSHAKE_VERSION == "2025-11-25"
    assert p.LATEST_VERSION == "2026-07-28"
    assert [p.era_of(v) for v in p.ALL_VERSIONS] == [p.Era.HANDSHAKE] * 4 + [p.Era.STATELESS]


@pytest.mark.parametrize(
    ("requested", "supported", "expected"),
    [
        ("2025-06-18", p.HANDSHAKE_VERSIONS, "2025-06-18"),
        ("2024-11-05", p.HANDSHAKE_VERSIONS, "2024-11-05"),
        ("2026-07-28", p.HANDSHAKE_VERSIONS, "2025-11-25"),  # stateless asked via initialize
        ("1.0.0", p.HANDSHAKE_VERSIONS, "2025-11-25"),
        ("", p.HANDSHAKE_VERSIONS, "2025-11-25"),
        ("2025-11-25", ("2025-03-26", "2024-11-05"), "2025-03-26"),  # order does not matter
        ("2025-03-26", ("2025-03-26",), "2025-03-26"),
    ],
)
def test_negotiate_version(requested: str, supported: tuple[str, ...], expected: str) -> None:
    assert p.negotiate_version(requested, supported) == expected


def test_negotiate_needs_a_supported_version() -> None:
    with pytest.raises(ValueError, match="at least one"):
        p.negotiate_version("2025-06-18", ())


def _schema_methods(node: Any) -> set[str]:
    """Every ``"method": {"const": ...}`` anywhere in a schema."""
    found: set[str] = set()
    if isinstance(node, dict):
        method = node.get("properties", {}).get("method")
        if isinstance(method, dict) and "const" in method:
            found.add(method["const"])
        for value in node.values():
            found |= _schema_methods(value)
    elif isinstance(node, list):
        for value in node:
            found |= _schema_methods(value)
    return found


EXTENSION_ONLY = {p.Method.TASKS_UPDATE, p.NotificationMethod.TASKS}


@pytest.mark.parametrize("version", p.ALL_VERSIONS)
def test_method_names_match_the_schemas(version: str) -> None:
    names = {str(m) for m in (*p.Method, *p.NotificationMethod)}
    schema = _schema_methods(DEFS[version])
    assert schema <= names, schema - names
    available = {n for n in names if p.method_available(version, n)}
    extension = set()
    if p.supports(version, F.TASKS_EXTENSION):
        extension = (_schema_methods(TASKS_EXTENSION_DEFS) & names) - schema
        assert extension == {"tasks/get", "tasks/cancel", "tasks/update", "notifications/tasks"}
    assert available == schema | extension


def test_method_names_are_strings() -> None:
    assert p.Method.TOOLS_CALL == "tools/call"
    assert {p.Method.TOOLS_CALL: 1}["tools/call"] == 1
    assert json.dumps(p.NotificationMethod.CANCELLED) == '"notifications/cancelled"'
    assert p.method_available("2025-06-18", "elicitation/create")
    assert not p.method_available("2025-03-26", p.Method.ELICITATION_CREATE)
    assert not p.method_available("2025-06-18", "no/such/method")
    assert set(p.Method) | set(p.NotificationMethod) >= EXTENSION_ONLY


def test_logging_levels_are_ordered_by_severity() -> None:
    L = p.LoggingLevel
    levels = list(L)
    assert [lv.value for lv in levels] == [
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
    ]  # fmt: skip
    assert sorted(reversed(levels)) == levels
    assert L.DEBUG < L.INFO <= L.INFO < L.EMERGENCY
    assert L.ERROR > L.WARNING >= L.WARNING
    assert [lv.severity for lv in levels] == list(range(8))
    assert L.ALERT < L.EMERGENCY  # not alphabetical
    with pytest.raises(TypeError):
        _ = L.DEBUG < "info"  # type: ignore[operator]


def test_logging_levels_from_python() -> None:
    import logging

    L = p.LoggingLevel
    assert L.from_python(logging.DEBUG) is L.DEBUG
    assert L.from_python(5) is L.DEBUG
    assert L.from_python(logging.INFO) is L.INFO
    assert L.from_python(logging.WARNING) is L.WARNING
    assert L.from_python(logging.ERROR + 5) is L.ERROR
    assert L.from_python(logging.CRITICAL) is L.CRITICAL


def test_logging_levels_match_the_schemas() -> None:
    for version in p.ALL_VERSIONS:
        assert set(DEFS[version]["LoggingLevel"]["enum"]) == {lv.value for lv in p.LoggingLevel}
