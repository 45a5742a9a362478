"""Hypothesis strategies for the protocol classes, optionally restricted to one revision.

``values_of(tp, version)`` builds instances of *tp* whose wire form only uses what
*version* has (no audio blocks for 2024-11-05, no ``tool_use`` before 2025-11-25, ...),
so the unstructured JSON must validate against that revision's schema.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from typing import Any, Literal, get_args, get_origin

import attrs
from hypothesis import strategies as st

from trimcp import protocol as p

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
JSON_OBJECTS = st.dictionaries(st.text(max_size=5), JSON, max_size=3)
# 2026-07-28's JSONValue admits neither null nor non-integer numbers.
STATELESS_JSON = st.recursive(
    st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
STATELESS_JSON_OBJECTS = st.dictionaries(st.text(max_size=5), STATELESS_JSON, max_size=3)


def _json(version: str | None) -> st.SearchStrategy[Any]:
    stateless = version is not None and p.era_of(version) is p.Era.STATELESS
    return STATELESS_JSON if stateless else JSON


UNIT = st.floats(min_value=0, max_value=1, allow_nan=False)

# Classes that exist only from some revision on (unions drop them for older revisions).
CLASS_FEATURES: dict[type, p.Feature] = {
    p.AudioContent: p.Feature.AUDIO_CONTENT,
    p.ResourceLink: p.Feature.RESOURCE_LINK,
    p.ToolUseContent: p.Feature.SAMPLING_TOOLS,
    p.ToolResultContent: p.Feature.SAMPLING_TOOLS,
    p.ElicitUrlParams: p.Feature.URL_ELICITATION,
}


def _extra_keys(version: str | None) -> st.SearchStrategy[dict[str, Any] | None]:
    # Unknown capability keys: never one of the known names (those are read as members).
    return st.none() | st.dictionaries(
        st.text("abcxyz", min_size=1, max_size=4).map(lambda s: "x-" + s),
        st.dictionaries(st.text(max_size=5), _json(version), max_size=3),
        min_size=1,  # an empty extra is written (and so read back) like None
        max_size=2,
    )


def _sampling_content(version: str | None) -> st.SearchStrategy[Any]:
    one = values_of(p.SamplingContent, version)
    if version is not None and not p.supports(version, p.Feature.SAMPLING_TOOLS):
        return one  # a list of blocks is 2025-11-25+
    return one | st.lists(one, max_size=3)


def _overrides(version: str | None) -> dict[tuple[type, str], st.SearchStrategy[Any]]:
    object_schema = st.just({"type": "object"}) | st.just(
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    )
    return {
        (p.Annotations, "priority"): st.none() | UNIT,
        (p.ModelPreferences, "cost_priority"): st.none() | UNIT,
        (p.ModelPreferences, "speed_priority"): st.none() | UNIT,
        (p.ModelPreferences, "intelligence_priority"): st.none() | UNIT,
        (p.Tool, "input_schema"): object_schema,
        (p.Tool, "output_schema"): st.none() | object_schema,
        (p.ElicitParams, "requested_schema"): st.just(
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        ),
        (p.ElicitResult, "content"): st.none()
        | st.dictionaries(st.text(max_size=4), st.text(max_size=4) | st.integers() | st.booleans()),
        (p.ElicitUrlParams, "elicitation_id"): st.text(max_size=5),
        (p.CancelledNotificationParams, "request_id"): st.text(max_size=5) | st.integers(),
        (p.CallToolResult, "structured_content"): st.none() | JSON_OBJECTS,
        (p.SamplingMessage, "content"): st.deferred(lambda: _sampling_content(version)),
        (p.CreateMessageResult, "content"): st.deferred(lambda: _sampling_content(version)),
    }


def _available(tp: Any, version: str | None) -> bool:
    feature = CLASS_FEATURES.get(tp)
    return version is None or feature is None or p.supports(version, feature)


@functools.cache
def values_of(tp: Any, version: str | None = None) -> st.SearchStrategy[Any]:  # noqa: C901
    """Values of annotation *tp*, restricted to what *version* has (None: anything)."""
    origin = get_origin(tp)
    if tp is Any:
        return _json(version)
    if tp is str:
        return st.text(max_size=8)
    if tp is int:
        return st.integers(min_value=-(2**53), max_value=2**53)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if tp is bool:
        return st.booleans()
    if tp is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if origin in (typing.Union, types.UnionType):
        members = [m for m in get_args(tp) if _available(m, version)]
        return st.one_of([values_of(m, version) for m in members])
    if origin is list:
        return st.lists(values_of(get_args(tp)[0], version), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), values_of(get_args(tp)[1], version), max_size=3)
    if attrs.has(tp):
        return _instances(tp, version)
    raise NotImplementedError(tp)


def _instances(cls: type, version: str | None) -> st.SearchStrategy[Any]:
    attrs.resolve_types(cls)
    overrides = _overrides(version)
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for field in attrs.fields(cls):
        if not field.init:
            continue
        if (cls, field.name) in overrides:
            kwargs[field.alias] = overrides[(cls, field.name)]
        elif field.metadata.get(p.EXTRA_KEYS):
            kwargs[field.alias] = _extra_keys(version)
        else:
            kwargs[field.alias] = st.deferred(lambda t=field.type: values_of(t, version))
    return st.builds(cls, **kwargs)


ALL_CLASSES: list[type] = sorted(
    (obj for name in p.__all__ if attrs.has(obj := getattr(p, name))),
    key=lambda cls: cls.__name__,
)
"""Every attrs class the protocol package exports."""
