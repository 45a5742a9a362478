"""Unstructured protocol objects validate against the published MCP schemas.

For each class and each revision whose ``schema.json`` has the matching definition (or,
in older revisions, the inline ``params`` of the matching request/notification), objects
generated with only that revision's features must validate. Handshake-era revisions check
every class; the stateless revision checks the value types shared by both eras (its
results need ``resultType`` and its request params a ``_meta``, added by upper layers).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import protocol as p
from trimcp.binding import unstructure

from ._strategies import values_of

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"

# class -> (definition name, fallback: (request/notification definition, "params") or None)
TARGETS: dict[type, tuple[str, str | None]] = {
    p.Implementation: ("Implementation", None),
    p.ClientCapabilities: ("ClientCapabilities", None),
    p.ServerCapabilities: ("ServerCapabilities", None),
    p.InitializeParams: ("InitializeRequestParams", "InitializeRequest"),
    p.InitializeResult: ("InitializeResult", None),
    p.Tool: ("Tool", None),
    p.ToolAnnotations: ("ToolAnnotations", None),
    p.ToolExecution: ("ToolExecution", None),
    p.CoreTask: ("Task", None),
    p.ListTasksResult: ("ListTasksResult", None),
    p.CallToolParams: ("CallToolRequestParams", "CallToolRequest"),
    p.CallToolResult: ("CallToolResult", None),
    p.ListToolsResult: ("ListToolsResult", None),
    p.PaginatedParams: ("PaginatedRequestParams", "PaginatedRequest"),
    p.TextContent: ("TextContent", None),
    p.ImageContent: ("ImageContent", None),
    p.AudioContent: ("AudioContent", None),
    p.ResourceLink: ("ResourceLink", None),
    p.EmbeddedResource: ("EmbeddedResource", None),
    p.TextResourceContents: ("TextResourceContents", None),
    p.BlobResourceContents: ("BlobResourceContents", None),
    p.Annotations: ("Annotations", None),
    p.Icon: ("Icon", None),
    p.ProgressNotificationParams: ("ProgressNotificationParams", "ProgressNotification"),
    p.CancelledNotificationParams: ("CancelledNotificationParams", "CancelledNotification"),
    p.SamplingMessage: ("SamplingMessage", None),
    p.CreateMessageParams: ("CreateMessageRequestParams", "CreateMessageRequest"),
    p.CreateMessageResult: ("CreateMessageResult", None),
    p.ModelPreferences: ("ModelPreferences", None),
    p.ModelHint: ("ModelHint", None),
    p.ToolChoice: ("ToolChoice", None),
    p.ToolUseContent: ("ToolUseContent", None),
    p.ToolResultContent: ("ToolResultContent", None),
    p.TaskMetadata: ("TaskMetadata", None),
    p.ElicitParams: ("ElicitRequestFormParams", "ElicitRequest"),
    p.ElicitUrlParams: ("ElicitRequestURLParams", None),
    p.ElicitResult: ("ElicitResult", None),
    p.ElicitationCompleteParams: ("-", "ElicitationCompleteNotification"),
    p.Root: ("Root", None),
    p.ListRootsResult: ("ListRootsResult", None),
    p.LoggingMessageParams: ("LoggingMessageNotificationParams", "LoggingMessageNotification"),
    p.SetLevelParams: ("SetLevelRequestParams", "SetLevelRequest"),
    p.Resource: ("Resource", None),
    p.ResourceTemplate: ("ResourceTemplate", None),
    p.ListResourcesResult: ("ListResourcesResult", None),
    p.ListResourceTemplatesResult: ("ListResourceTemplatesResult", None),
    p.ReadResourceParams: ("ReadResourceRequestParams", "ReadResourceRequest"),
    p.ReadResourceResult: ("ReadResourceResult", None),
    p.SubscribeParams: ("SubscribeRequestParams", "SubscribeRequest"),
    p.ResourceUpdatedParams: (
        "ResourceUpdatedNotificationParams",
        "ResourceUpdatedNotification",
    ),
    p.Prompt: ("Prompt", None),
    p.PromptArgument: ("PromptArgument", None),
    p.PromptMessage: ("PromptMessage", None),
    p.ListPromptsResult: ("ListPromptsResult", None),
    p.GetPromptParams: ("GetPromptRequestParams", "GetPromptRequest"),
    p.GetPromptResult: ("GetPromptResult", None),
    p.PromptReference: ("PromptReference", None),
    p.ResourceTemplateReference: ("ResourceTemplateReference", None),
    p.CompleteParams: ("CompleteRequestParams", "CompleteRequest"),
    p.CompleteResult: ("CompleteResult", None),
    # Inline objects without definitions of their own; validated inside the two above.
    p.Completion: ("-", None),
    p.CompletionArgument: ("-", None),
    p.CompletionContext: ("-", None),
}

# Shared by both eras and free of stateless-only requirements (resultType, params._meta).
STATELESS_CHECKED = {
    p.Implementation,
    p.ClientCapabilities,
    p.ServerCapabilities,
    p.Tool,
    p.ToolAnnotations,
    p.TextContent,
    p.ImageContent,
    p.AudioContent,
    p.ResourceLink,
    p.EmbeddedResource,
    p.TextResourceContents,
    p.BlobResourceContents,
    p.Annotations,
    p.Icon,
    p.SamplingMessage,
    p.ModelPreferences,
    p.ModelHint,
    p.ToolChoice,
    p.ToolUseContent,
    p.ToolResultContent,
    p.ElicitUrlParams,
    p.Root,
}


@functools.cache
def _root(version: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / version / "schema.json").read_text())  # type: ignore[no-any-return]


def _pointer(version: str, cls: type) -> str | None:
    root = _root(version)
    section = "$defs" if "$defs" in root else "definitions"
    defs = root[section]
    name, fallback = TARGETS[cls]
    if name in defs:
        return f"#/{section}/{name}"
    if fallback is not None and fallback in defs:
        return f"#/{section}/{fallback}/properties/params"
    return None


@functools.cache
def _validator(version: str, pointer: str) -> Any:
    root = _root(version)
    schema = {**root, "$ref": pointer}
    cls = jsonschema.validators.validator_for(root)
    return cls(schema)


def _cases() -> list[Any]:
    cases = []
    for version in p.ALL_VERSIONS:
        for cls in TARGETS:
            if p.era_of(version) is p.Era.STATELESS and cls not in STATELESS_CHECKED:
                continue
            pointer = _pointer(version, cls)
            if pointer is not None:
                cases.append(pytest.param(version, cls, pointer, id=f"{version}-{cls.__name__}"))
    return cases


CASES = _cases()


def test_every_protocol_class_is_targeted() -> None:
    exported = {getattr(p, n) for n in p.__all__}
    capability_parts = {
        p.RootsCapability,
        p.SamplingCapability,
        p.ElicitationCapability,
        p.ToolsCapability,
        p.PromptsCapability,
        p.ResourcesCapability,
    }  # no definitions of their own; validated inside the capabilities
    # parsed views of a request's reserved _meta keys, never sent as such
    capability_parts |= {p.RequestMeta, p.MetaProblem}
    # the tasks extension's own schema checks these (tests/tasks)
    capability_parts |= {p.Task, p.DetailedTask}
    classes = {c for c in exported if isinstance(c, type) and hasattr(c, "__attrs_attrs__")}
    assert classes - capability_parts == set(TARGETS)


def test_the_expected_revisions_are_checked() -> None:
    checked = {(c.values[0], c.values[1]) for c in CASES}
    assert ("2024-11-05", p.AudioContent) not in checked  # no audio in the first revision
    assert ("2025-03-26", p.AudioContent) in checked
    assert ("2025-03-26", p.ResourceLink) not in checked
    assert ("2025-06-18", p.ElicitParams) in checked  # the inline params of ElicitRequest
    assert ("2025-11-25", p.ElicitUrlParams) in checked
    assert ("2024-11-05", p.CancelledNotificationParams) in checked
    assert all((v, p.InitializeParams) in checked for v in p.HANDSHAKE_VERSIONS)
    assert len(CASES) > 120


@pytest.mark.parametrize(("version", "cls", "pointer"), CASES)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_unstructured_objects_validate(
    version: str, cls: type, pointer: str, data: st.DataObject
) -> None:
    value = data.draw(values_of(cls, version))
    wire = unstructure(value)
    errors = sorted(_validator(version, pointer).iter_errors(wire), key=str)
    assert not errors, (wire, [e.message for e in errors])


def test_cancel_without_request_id_only_valid_in_2025_11_25() -> None:
    wire = unstructure(p.CancelledNotificationParams(reason="bye"))
    valid = {
        v: _validator(v, ptr).is_valid(wire)
        for v in p.ALL_VERSIONS
        if (ptr := _pointer(v, p.CancelledNotificationParams)) is not None
    }
    assert valid == {v: v == "2025-11-25" for v in valid}


def test_audio_is_rejected_by_the_first_revision() -> None:
    # A check that the validation is real: 2024-11-05 results cannot carry audio.
    result = p.CallToolResult(content=[p.AudioContent(data="AA==", mime_type="audio/wav")])
    wire = unstructure(result)
    assert not _validator("2024-11-05", _pointer("2024-11-05", p.CallToolResult) or "").is_valid(
        wire
    )
    assert _validator("2025-03-26", _pointer("2025-03-26", p.CallToolResult) or "").is_valid(wire)
