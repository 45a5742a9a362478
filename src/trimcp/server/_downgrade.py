"""Content blocks fitted to the peer's revision before they are sent.

A handler writes content once, in the newest vocabulary; a client on an older revision
must not receive blocks or members its revision lacks. Everything here works on the wire
form (``dict``), per block:

* ``audio`` (2025-03-26+) sent to a 2024-11-05 peer becomes a ``text`` block saying what
  was left out (``[audio omitted: audio/wav, 1024 bytes]``): the base64 payload cannot be
  shown, and dropping the block silently would change the meaning of a result.
* ``resource_link`` (2025-06-18+) sent to an older peer becomes a ``text`` block naming
  the resource (``Resource: <title or name> <uri>`` and its description, if any): the
  peer can still read it with ``resources/read``.
* Members a revision lacks are removed: ``_meta`` (on blocks and embedded resource
  contents, 2025-06-18+), ``annotations.lastModified`` (2025-06-18+), ``icons``
  (2025-11-25+) and ``title`` (2025-06-18+) of a resource link.

Form elicitation schemas are fitted too (:func:`fit_requested_schema`): before 2025-11-25
a field's ``default`` is left out (a boolean's is kept: 2025-06-18 has that one), a
titled single select (``oneOf`` of ``const``/``title``) is sent in the form 2025-06-18
has (``enum`` with ``enumNames``), and a multi-select field, which cannot be expressed
there, is a ``ValueError`` raised before anything is sent.

The block's ``annotations`` (audience, priority) exist in every revision and are kept
on a converted block. :func:`fit_tool_result` and :func:`fit_prompt_result` apply this to
a ``tools/call`` and a ``prompts/get`` result; a revision that has everything is a no-op
that returns its input unchanged (no copy).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from trimcp.protocol import HANDSHAKE_VERSIONS, Feature, supports

__all__ = [
    "fit_annotations",
    "fit_block",
    "fit_initialize_result",
    "fit_prompt_result",
    "fit_read_result",
    "fit_requested_schema",
    "fit_sampling_messages",
    "fit_tool_result",
    "needs_fitting",
]

_LATEST: Final = HANDSHAKE_VERSIONS[-1]
_GATED_LINK_MEMBERS: Final = (("title", Feature.TITLES), ("icons", Feature.ICONS))


def needs_fitting(version: str | None) -> bool:
    """Whether content for ``version`` may need changes (anything older than the newest
    handshake revision; the stateless era has every content feature)."""
    return version is not None and version in HANDSHAKE_VERSIONS and version != _LATEST


def fit_annotations(version: str, value: Any) -> Any:
    """``annotations`` without the members ``version`` lacks (``lastModified``)."""
    if not isinstance(value, dict) or "lastModified" not in value:
        return value
    if supports(version, Feature.ANNOTATIONS_LAST_MODIFIED):
        return value
    return {key: item for key, item in value.items() if key != "lastModified"}


def _decoded_size(data: Any) -> str:
    if not isinstance(data, str):
        return "unknown size"
    try:
        return f"{len(base64.b64decode(data, validate=True))} bytes"
    except (binascii.Error, ValueError):
        return "unknown size"


def _as_text(block: dict[str, Any], text: str) -> dict[str, Any]:
    converted: dict[str, Any] = {"type": "text", "text": text}
    if "annotations" in block:
        converted["annotations"] = block["annotations"]
    return converted


def _link_text(block: dict[str, Any]) -> str:
    name = block.get("title") or block.get("name") or block.get("uri")
    text = f"Resource: {name} <{block.get('uri')}>"
    if block.get("description"):
        text += f"\n{block['description']}"
    return text


def fit_block(version: str, block: Any) -> Any:
    """One content block as a peer on ``version`` may receive it (see the module doc).
    Anything that is not a block (not a ``dict``) is returned as it is."""
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "text" and "_meta" not in block and "annotations" not in block:
        return block  # plain text: every revision has it as it is
    if kind == "audio" and not supports(version, Feature.AUDIO_CONTENT):
        size = _decoded_size(block.get("data"))
        block = _as_text(block, f"[audio omitted: {block.get('mimeType')}, {size}]")
    elif kind == "resource_link" and not supports(version, Feature.RESOURCE_LINK):
        block = _as_text(block, _link_text(block))
    elif kind == "resource_link":
        block = {
            key: value
            for key, value in block.items()
            if all(key != name or supports(version, f) for name, f in _GATED_LINK_MEMBERS)
        }
    if not supports(version, Feature.META_ON_TYPES):
        block = {key: value for key, value in block.items() if key != "_meta"}
        resource = block.get("resource")
        if isinstance(resource, dict) and "_meta" in resource:
            block["resource"] = {k: v for k, v in resource.items() if k != "_meta"}
    if "annotations" in block:
        block = {**block, "annotations": fit_annotations(version, block["annotations"])}
    return block


def fit_tool_result(version: str | None, result: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result with every content block fitted to ``version``."""
    content = result.get("content")
    # (needs_fitting, inline: every tools/call asks)
    if version is None or version == _LATEST or version not in HANDSHAKE_VERSIONS:
        return result
    if not isinstance(content, list):
        return result
    for block in content:  # plain text blocks only (the common case): nothing to fit
        if type(block) is not dict or block.get("type") != "text":
            break
        if "_meta" in block or "annotations" in block:
            break
    else:
        return result
    return {**result, "content": [fit_block(version, block) for block in content]}


def fit_prompt_result(version: str | None, result: dict[str, Any]) -> dict[str, Any]:
    """A ``prompts/get`` result with each message's content fitted to ``version``."""
    messages = result.get("messages")
    if not needs_fitting(version) or not isinstance(messages, list):
        return result
    assert version is not None
    fitted = [
        {**message, "content": fit_block(version, message.get("content"))}
        if isinstance(message, dict)
        else message
        for message in messages
    ]
    return {**result, "messages": fitted}


def fit_read_result(version: str | None, result: dict[str, Any]) -> dict[str, Any]:
    """A ``resources/read`` result without the contents' ``_meta`` where ``version``
    lacks it."""
    contents = result.get("contents")
    if (
        not needs_fitting(version)
        or not isinstance(contents, list)
        or supports(version or _LATEST, Feature.META_ON_TYPES)
    ):
        return result
    fitted = [
        {k: v for k, v in item.items() if k != "_meta"} if isinstance(item, dict) else item
        for item in contents
    ]
    return {**result, "contents": fitted}


#: ``Implementation`` members and the feature that introduced them.
_GATED_INFO_MEMBERS: Final = (
    ("title", Feature.TITLES),
    ("icons", Feature.ICONS),
    ("websiteUrl", Feature.IMPLEMENTATION_DESCRIPTION),
    ("description", Feature.IMPLEMENTATION_DESCRIPTION),
)


def fit_initialize_result(version: str, result: dict[str, Any]) -> dict[str, Any]:
    """An ``initialize`` result without what ``version`` lacks: ``serverInfo`` members
    (title, icons, websiteUrl, description) and the ``completions`` capability."""
    if not needs_fitting(version):
        return result
    fitted = dict(result)
    info = fitted.get("serverInfo")
    if isinstance(info, dict):
        fitted["serverInfo"] = {
            key: value
            for key, value in info.items()
            if all(key != name or supports(version, f) for name, f in _GATED_INFO_MEMBERS)
        }
    capabilities = fitted.get("capabilities")
    if (
        isinstance(capabilities, dict)
        and "completions" in capabilities
        and not supports(version, Feature.COMPLETIONS)
    ):
        fitted["capabilities"] = {k: v for k, v in capabilities.items() if k != "completions"}
    return fitted


def fit_sampling_messages(version: str | None, messages: list[Any]) -> list[Any]:
    """``sampling/createMessage`` messages (wire form) fitted to ``version``: a single
    content block is fitted like any other (audio to a 2024-11-05 client becomes text);
    lists of blocks exist only where the revision has them, so they are left alone."""
    if not needs_fitting(version):
        return messages
    assert version is not None
    return [
        {**message, "content": fit_block(version, message.get("content"))}
        if isinstance(message, dict) and isinstance(message.get("content"), dict)
        else message
        for message in messages
    ]


def _fit_property(version: str, name: str, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    fitted = dict(schema)
    if not supports(version, Feature.ELICITATION_DEFAULTS) and fitted.get("type") != "boolean":
        fitted.pop("default", None)  # booleans had a default before the others
    if supports(version, Feature.ENUM_SCHEMAS):
        return fitted
    if fitted.get("type") == "array":
        raise ValueError(
            f"elicitation field {name!r} is a multi-select, which protocol {version} lacks"
        )
    options = fitted.pop("oneOf", None)
    if isinstance(options, list):
        fitted["enum"] = [o.get("const") for o in options if isinstance(o, dict)]
        fitted["enumNames"] = [
            o.get("title", o.get("const")) for o in options if isinstance(o, dict)
        ]
    return fitted


def fit_requested_schema(version: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """A form's ``requestedSchema`` fitted to ``version`` (see the module doc)."""
    properties = schema.get("properties")
    if not needs_fitting(version) or not isinstance(properties, dict):
        return schema
    assert version is not None
    fitted = {name: _fit_property(version, name, prop) for name, prop in properties.items()}
    return {**schema, "properties": fitted}
