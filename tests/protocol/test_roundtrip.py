"""Every protocol class survives unstructure -> JSON text -> structure unchanged, and its
wire form follows the naming and omission policies."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import protocol as p
from trimcp.binding import structure, unstructure

from ._strategies import ALL_CLASSES, values_of


def test_every_exported_class_is_covered() -> None:
    assert len(ALL_CLASSES) >= 45
    for cls in ALL_CLASSES:
        assert attrs.has(cls)


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_round_trip(cls: type, data: st.DataObject) -> None:
    value = data.draw(values_of(cls))
    wire = unstructure(value)
    assert structure(json.loads(json.dumps(wire)), cls) == value


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_wire_keys_are_camel_case(cls: type, data: st.DataObject) -> None:
    value = data.draw(values_of(cls))
    wire = unstructure(value)
    extra = getattr(value, "extra", None) or {}
    for key in wire:
        assert key in extra or key == "_meta" or "_" not in key, key


def test_meta_and_camel_case_names() -> None:
    result = p.CallToolResult(
        content=[p.TextContent(text="hi", meta={"k": 1})],
        structured_content={"a": 1},
        is_error=False,
        meta={"progressToken": 3},
    )
    assert unstructure(result) == {
        "content": [{"type": "text", "text": "hi", "_meta": {"k": 1}}],
        "structuredContent": {"a": 1},
        "isError": False,
        "_meta": {"progressToken": 3},
    }


def test_none_members_are_omitted() -> None:
    assert unstructure(p.Implementation(name="n", version="1")) == {"name": "n", "version": "1"}
    assert unstructure(p.ToolsCapability()) == {}


def test_required_any_member_is_written_as_null() -> None:
    params = p.LoggingMessageParams(level=p.LoggingLevel.INFO, data=None)
    assert unstructure(params) == {"level": "info", "data": None}


def test_tags_are_written_and_fixed() -> None:
    assert unstructure(p.AudioContent(data="QQ==", mime_type="audio/wav")) == {
        "type": "audio",
        "data": "QQ==",
        "mimeType": "audio/wav",
    }
    assert p.ResourceLink(uri="file:///a", name="a").type == "resource_link"
    assert unstructure(p.ElicitUrlParams(message="m", url="https://x"))["mode"] == "url"


def test_unknown_keys_are_ignored() -> None:
    wire = {"name": "n", "version": "1", "futureField": {"x": 1}, "title": "T"}
    assert structure(wire, p.Implementation) == p.Implementation(name="n", version="1", title="T")
    block = structure({"type": "text", "text": "t", "novel": True}, p.ContentBlock)
    assert block == p.TextContent(text="t")


def test_unknown_capability_keys_survive() -> None:
    wire = {"tools": {"listChanged": True, "future": {}}, "io.example/thing": {"on": True}}
    caps = structure(wire, p.ServerCapabilities)
    assert caps.tools == p.ToolsCapability(list_changed=True, extra={"future": {}})
    assert caps.extra == {"io.example/thing": {"on": True}}
    assert unstructure(caps) == wire


def test_extra_keys_never_override_known_members() -> None:
    caps = p.ToolsCapability(list_changed=True, extra={"listChanged": False, "x": 1})
    assert unstructure(caps) == {"listChanged": True, "x": 1}


def test_content_block_union_is_discriminated_by_type() -> None:
    wires = [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
        {"type": "resource", "resource": {"uri": "file:///x", "blob": "AA=="}},
    ]
    kinds = [type(structure(w, p.ContentBlock)) for w in wires]
    assert kinds == [
        p.TextContent,
        p.ImageContent,
        p.AudioContent,
        p.ResourceLink,
        p.EmbeddedResource,
    ]


def test_resource_contents_told_apart_by_member() -> None:
    text = structure({"uri": "u", "text": "t"}, p.ResourceContents)
    blob = structure({"uri": "u", "blob": "b"}, p.ResourceContents)
    assert isinstance(text, p.TextResourceContents)
    assert isinstance(blob, p.BlobResourceContents)


def test_elicit_params_mode() -> None:
    assert isinstance(
        structure({"message": "m", "requestedSchema": {}}, p.ElicitRequestParams), p.ElicitParams
    )
    url = structure(
        {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
        p.ElicitRequestParams,
    )
    assert url == p.ElicitUrlParams(message="m", url="https://x", elicitation_id="e")


def test_sampling_content_single_or_list() -> None:
    one = p.SamplingMessage(role="user", content=p.TextContent(text="a"))
    many = p.SamplingMessage(
        role="assistant",
        content=[p.TextContent(text="a"), p.ToolUseContent(id="1", name="t", input={"q": 1})],
    )
    for message in (one, many):
        assert structure(unstructure(message), p.SamplingMessage) == message
    assert isinstance(unstructure(many)["content"], list)
