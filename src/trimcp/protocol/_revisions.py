"""The revision table: which MCP versions exist, which era each belongs to, and which
feature exists in which version.

Theory of operation
-------------------
Everything that depends on "which protocol version is this" reads :data:`_FEATURE_RANGES`,
the one table in this module. Each :class:`Feature` maps to the inclusive range of
versions (in :data:`ALL_VERSIONS` order) that have it; ``None`` as the upper bound means
"still present in the latest version". Every entry was checked against the published
``schema.json`` of each revision (``tests/protocol/test_revisions.py`` re-checks them
mechanically), so a feature is present exactly when the schema shows it.

Versions are compared by their position in :data:`ALL_VERSIONS`, never by string
comparison of unknown strings: an unknown version is a :class:`ValueError`, because
asking about one is a programming error (negotiation only ever yields known versions).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Final, final

__all__ = [
    "ALL_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "STATELESS_VERSIONS",
    "Era",
    "Feature",
    "era_of",
    "features_of",
    "negotiate_version",
    "supports",
]

HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Versions of the handshake era (``initialize``/``initialized``, sessions), oldest first."""

STATELESS_VERSIONS: Final = ("2026-07-28",)
"""Versions of the stateless era (per-request ``_meta``, ``server/discover``, MRTR)."""

ALL_VERSIONS: Final = HANDSHAKE_VERSIONS + STATELESS_VERSIONS
"""Every version trimcp knows, oldest first."""

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]
LATEST_VERSION: Final = ALL_VERSIONS[-1]

_INDEX: Final[Mapping[str, int]] = {v: i for i, v in enumerate(ALL_VERSIONS)}


@final
class Era(enum.Enum):
    """The two lifecycles of MCP. See the design notes, "The two eras"."""

    HANDSHAKE = "handshake"
    STATELESS = "stateless"


@final
class Feature(enum.Enum):
    """A protocol feature whose presence depends on the negotiated version.

    Query with :func:`supports`. The value is a short human-readable label.
    """

    # 2025-03-26 only
    JSONRPC_BATCH = "JSON-RPC batch arrays"
    # 2025-03-26 onwards
    AUDIO_CONTENT = "audio content blocks"
    TOOL_ANNOTATIONS = "Tool.annotations"
    PROGRESS_MESSAGE = "notifications/progress message"
    COMPLETIONS = "completions server capability"
    # 2025-06-18 onwards
    STRUCTURED_OUTPUT = "outputSchema / structuredContent"
    ELICITATION = "elicitation/create"
    RESOURCE_LINK = "resource_link content blocks"
    TITLES = "title on BaseMetadata types"
    META_ON_TYPES = "_meta on tools, content blocks, resources, roots"
    COMPLETION_CONTEXT = "completion/complete context.arguments"
    ANNOTATIONS_LAST_MODIFIED = "Annotations.lastModified"
    # 2025-11-25 onwards
    ICONS = "icons"
    IMPLEMENTATION_DESCRIPTION = "Implementation.description / websiteUrl"
    URL_ELICITATION = "URL-mode elicitation"
    SAMPLING_TOOLS = "sampling with tools (tool_use / tool_result)"
    ELICITATION_DEFAULTS = "default on elicitation primitive schemas"
    ENUM_SCHEMAS = "titled / multi-select elicitation enum schemas"
    # 2025-11-25 only
    TASKS = "core tasks (experimental, SEP-1686)"
    TOOL_EXECUTION = "Tool.execution.taskSupport"
    ELICITATION_COMPLETE = "notifications/elicitation/complete"
    # handshake era only
    INITIALIZE = "initialize / notifications/initialized"
    PING = "ping"
    LOGGING_SET_LEVEL = "logging/setLevel"
    RESOURCE_SUBSCRIBE = "resources/subscribe / unsubscribe"
    ROOTS_LIST_CHANGED = "notifications/roots/list_changed"
    # stateless era only
    SERVER_DISCOVER = "server/discover"
    MRTR = "multi round-trip requests (InputRequiredResult)"
    RESULT_TYPE = "resultType on every result"
    SUBSCRIPTIONS_LISTEN = "subscriptions/listen"
    CACHE_HINTS = "ttlMs / cacheScope"
    EXTENSIONS = "capabilities.extensions"
    STRUCTURED_CONTENT_ANY = "structuredContent / outputSchema of any JSON type"
    TASKS_EXTENSION = "io.modelcontextprotocol/tasks extension (SEP-2663)"


_V24_11, _V25_03, _V25_06, _V25_11, _V26_07 = ALL_VERSIONS

# THE table. (first version, last version or None for "still present").
_FEATURE_RANGES: Final[Mapping[Feature, tuple[str, str | None]]] = {
    Feature.JSONRPC_BATCH: (_V25_03, _V25_03),
    Feature.AUDIO_CONTENT: (_V25_03, None),
    Feature.TOOL_ANNOTATIONS: (_V25_03, None),
    Feature.PROGRESS_MESSAGE: (_V25_03, None),
    Feature.COMPLETIONS: (_V25_03, None),
    Feature.STRUCTURED_OUTPUT: (_V25_06, None),
    Feature.ELICITATION: (_V25_06, None),
    Feature.RESOURCE_LINK: (_V25_06, None),
    Feature.TITLES: (_V25_06, None),
    Feature.META_ON_TYPES: (_V25_06, None),
    Feature.COMPLETION_CONTEXT: (_V25_06, None),
    Feature.ANNOTATIONS_LAST_MODIFIED: (_V25_06, None),
    Feature.ICONS: (_V25_11, None),
    Feature.IMPLEMENTATION_DESCRIPTION: (_V25_11, None),
    Feature.URL_ELICITATION: (_V25_11, None),
    Feature.SAMPLING_TOOLS: (_V25_11, None),
    Feature.ELICITATION_DEFAULTS: (_V25_11, None),
    Feature.ENUM_SCHEMAS: (_V25_11, None),
    Feature.TASKS: (_V25_11, _V25_11),
    Feature.TOOL_EXECUTION: (_V25_11, _V25_11),
    Feature.ELICITATION_COMPLETE: (_V25_11, _V25_11),
    Feature.INITIALIZE: (_V24_11, _V25_11),
    Feature.PING: (_V24_11, _V25_11),
    Feature.LOGGING_SET_LEVEL: (_V24_11, _V25_11),
    Feature.RESOURCE_SUBSCRIBE: (_V24_11, _V25_11),
    Feature.ROOTS_LIST_CHANGED: (_V24_11, _V25_11),
    Feature.SERVER_DISCOVER: (_V26_07, None),
    Feature.MRTR: (_V26_07, None),
    Feature.RESULT_TYPE: (_V26_07, None),
    Feature.SUBSCRIPTIONS_LISTEN: (_V26_07, None),
    Feature.CACHE_HINTS: (_V26_07, None),
    Feature.EXTENSIONS: (_V26_07, None),
    Feature.STRUCTURED_CONTENT_ANY: (_V26_07, None),
    Feature.TASKS_EXTENSION: (_V26_07, None),
}


def _expand() -> dict[str, frozenset[Feature]]:
    by_version: dict[str, set[Feature]] = {v: set() for v in ALL_VERSIONS}
    for feature, (first, last) in _FEATURE_RANGES.items():
        hi = _INDEX[last] if last is not None else len(ALL_VERSIONS) - 1
        for version in ALL_VERSIONS[_INDEX[first] : hi + 1]:
            by_version[version].add(feature)
    return {v: frozenset(fs) for v, fs in by_version.items()}


# Derived once from the table; supports() is a dict lookup plus a set membership test.
_FEATURES_BY_VERSION: Final = _expand()
assert set(_FEATURE_RANGES) == set(Feature), "every Feature needs a row in the table"


def _features(version: str) -> frozenset[Feature]:
    features = _FEATURES_BY_VERSION.get(version)
    if features is None:
        raise ValueError(f"unknown MCP protocol version {version!r}; known: {ALL_VERSIONS}")
    return features


def era_of(version: str) -> Era:
    """Return the era of a known *version*.

    Raises:
        ValueError: *version* is not one of :data:`ALL_VERSIONS`.
    """
    _features(version)
    return Era.STATELESS if version in STATELESS_VERSIONS else Era.HANDSHAKE


def features_of(version: str) -> frozenset[Feature]:
    """Every :class:`Feature` present in *version* (raises ValueError if unknown)."""
    return _features(version)


def supports(version: str, feature: Feature) -> bool:
    """Whether *feature* exists in protocol *version*.

    Raises:
        ValueError: *version* is not one of :data:`ALL_VERSIONS`.
    """
    return feature in _features(version)


def negotiate_version(requested: str, supported: Sequence[str] = HANDSHAKE_VERSIONS) -> str:
    """Pick the version to answer an ``initialize`` with.

    The spec's rule: if the server supports the requested version it MUST answer with it;
    otherwise it answers with another version it supports, SHOULD be its latest. "Latest"
    is the newest of *supported* by date (MCP versions are ISO dates, so they order as
    strings), so the order of *supported* does not matter.

    Raises:
        ValueError: *supported* is empty.
    """
    if requested in supported:
        return requested
    if not supported:
        raise ValueError("negotiate_version() needs at least one supported version")
    return max(supported)
