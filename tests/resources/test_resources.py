"""Resources end to end over the in-memory transport, every server message schema-checked."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import trio
import trio.testing

import trimcp
from trimcp.protocol import (
    BlobResourceContents,
    ReadResourceResult,
    ResourceUpdatedParams,
    TextResourceContents,
)
from trimcp.transports import memory_channel_pair
from trimcp.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    ErrorResponse,
    Request,
)

from ._support import HANDSHAKE, PNG, WAIT, Recorder, fixture_server


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_list_read_subscribe_against_each_schema(version: str) -> None:
    server = fixture_server()
    recorder = Recorder(server)
    updates: list[ResourceUpdatedParams] = []

    async def on_updated(params: ResourceUpdatedParams) -> None:
        updates.append(params)

    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            server.in_memory(),
            protocol_version=version,
            on_resource_updated=on_updated,
            era="handshake",
        ) as client:
            capability = client.state.server_capabilities.resources
            assert capability is not None
            assert capability.subscribe
            assert capability.list_changed

            listed = await client.list_all_resources()
            assert [r.uri for r in listed] == [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource",
            ]
            assert listed[0].name == "Static Text"
            assert listed[0].description == "A static text resource."
            assert listed[2].name == "watched"  # the function's name
            # title is 2025-06-18+: older revisions do not see it.
            assert listed[2].title == ("Watched" if version >= "2025-06-18" else None)

            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == [
                "test://template/{id}/data",
                "file:///{+path}",
            ]
            assert templates[0].mime_type == "application/json"

            text = await client.read_resource("test://static-text")
            assert text.contents == [
                TextResourceContents(
                    uri="test://static-text",
                    mime_type="text/plain",
                    text="This is the content of the static text resource.",
                )
            ]
            blob = (await client.read_resource("test://static-binary")).contents[0]
            assert isinstance(blob, BlobResourceContents)
            assert blob.mime_type == "image/png"
            assert base64.b64decode(blob.blob) == PNG

            data = (await client.read_resource("test://template/123/data")).contents[0]
            assert isinstance(data, TextResourceContents)
            assert json.loads(data.text) == {"id": 123, "templateTest": True}
            assert data.uri == "test://template/123/data"

            await client.subscribe_resource("test://watched-resource")
            server.notify_resource_updated("test://watched-resource")
            server.notify_resource_updated("test://static-text")  # not subscribed
            await client.ping()
            await trio.testing.wait_all_tasks_blocked()
            assert updates == [ResourceUpdatedParams(uri="test://watched-resource")]

            await client.unsubscribe_resource("test://watched-resource")
            server.notify_resource_updated("test://watched-resource")
            await client.ping()
            await trio.testing.wait_all_tasks_blocked()
            assert len(updates) == 1

    seen = recorder.validate(version)
    assert seen["ListResourcesResult"] == 1
    assert seen["ListResourceTemplatesResult"] == 1
    assert seen["ReadResourceResult"] == 3
    assert seen["EmptyResult"] >= 4  # subscribe, unsubscribe and the pings
    assert seen["ResourceUpdatedNotification"] == 1


@pytest.mark.parametrize(
    "uri",
    [
        "test://nope",
        "test://template/abc/data",  # id is an int
        "test://template/../data",
        "test://template/%2e%2e/data",
        "test://template/%2E%2E/data",
        "test://template/1%2F2/data",
        "file:///etc/../passwd",
        "file:///etc/%2e%2e/passwd",
        "file:///a\\..\\b",
        "file:///a/%00",
    ],
)
async def test_unknown_and_hostile_uris_are_not_found(uri: str) -> None:
    server = fixture_server()
    recorder = Recorder(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as caught:
                await client.read_resource(uri)
    assert caught.value.code == RESOURCE_NOT_FOUND
    assert caught.value.message == "Resource not found"
    assert caught.value.data == {"uri": uri}
    assert recorder.validate("2025-11-25")["JSONRPCErrorResponse"] == 1


async def test_reserved_expansion_reads_paths() -> None:
    server = fixture_server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            result = await client.read_resource("file:///srv/data/a.txt")
    assert result.contents == [
        TextResourceContents(uri="file:///srv/data/a.txt", text="srv/data/a.txt")
    ]


async def test_return_forms_context_and_failures() -> None:
    server = trimcp.Server("forms")
    seen_ids: list[object] = []

    @server.resource("test://many")
    async def many(ctx: trimcp.ToolContext) -> list[object]:
        seen_ids.append(ctx.request_id)
        return ["a", b"b", TextResourceContents(uri="test://other", text="c")]

    @server.resource("test://whole")
    async def whole() -> ReadResourceResult:
        return ReadResourceResult(contents=[BlobResourceContents(uri="test://whole", blob="AA==")])

    @server.resource("test://broken")
    async def broken() -> str:
        raise RuntimeError("secret detail")

    @server.resource("test://refused")
    async def refused() -> str:
        raise trimcp.McpError(INVALID_PARAMS, "not today")

    @server.resource_template("test://fails/{name}")
    async def fails(name: str) -> str:
        raise RuntimeError(f"secret detail about {name}")

    @server.resource_template("test://opt/{a}{?b,flag}")
    async def optional(a: str, flag: bool = False, b: float | None = None) -> str:
        return f"{a}:{b}:{flag}"

    recorder = Recorder(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            contents = (await client.read_resource("test://many")).contents
            assert [type(c).__name__ for c in contents] == [
                "TextResourceContents",
                "BlobResourceContents",
                "TextResourceContents",
            ]
            assert contents[0].uri == "test://many"
            assert contents[2].uri == "test://other"
            assert len(seen_ids) == 1
            whole_result = await client.read_resource("test://whole")
            assert whole_result.contents[0] == BlobResourceContents(uri="test://whole", blob="AA==")
            with pytest.raises(trimcp.McpError) as caught:
                await client.read_resource("test://broken")
            assert caught.value.code == INTERNAL_ERROR
            assert "secret" not in caught.value.message
            with pytest.raises(trimcp.McpError) as caught:
                await client.read_resource("test://refused")
            assert caught.value.code == INVALID_PARAMS
            with pytest.raises(trimcp.McpError) as caught:
                await client.read_resource("test://fails/abc")
            assert caught.value.code == INTERNAL_ERROR
            assert caught.value.message == (
                "Resource read failed: the template test://fails/{name} raised an error"
            )
            assert caught.value.data == {
                "uri": "test://fails/abc",
                "uriTemplate": "test://fails/{name}",
            }
            text = (await client.read_resource("test://opt/x?b=1.5&flag=true")).contents[0]
            assert isinstance(text, TextResourceContents)
            assert text.text == "x:1.5:True"
            text = (await client.read_resource("test://opt/y")).contents[0]
            assert isinstance(text, TextResourceContents)
            assert text.text == "y:None:False"
    assert recorder.validate("2025-11-25")["ReadResourceResult"] == 4


async def test_pagination_and_bad_cursor() -> None:
    server = trimcp.Server("pages", page_size=2)
    for i in range(5):

        async def read() -> str:
            return "x"

        server.resource(f"test://r{i}", name=f"r{i}")(read)
        server.resource_template(f"test://t{i}/{{id}}", name=f"t{i}")(read_id)
    recorder = Recorder(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            first = await client.list_resources()
            assert len(first.resources) == 2
            assert first.next_cursor
            everything = await client.list_all_resources()
            assert [r.name for r in everything] == [f"r{i}" for i in range(5)]
            templates = await client.list_all_resource_templates()
            assert [t.name for t in templates] == [f"t{i}" for i in range(5)]
            with pytest.raises(trimcp.McpError) as caught:
                await client.list_resources("not-a-cursor")
            assert caught.value.code == INVALID_PARAMS
            tools_cursor = (await client.list_resource_templates()).next_cursor
            with pytest.raises(trimcp.McpError):
                await client.list_resources(tools_cursor)  # a cursor of another list
    assert recorder.validate("2025-11-25")["ListResourcesResult"] == 4


async def read_id(id: str) -> str:
    return id


async def test_capability_only_with_resources_or_flag() -> None:
    bare = trimcp.Server("bare")
    with trio.fail_after(WAIT):
        async with trimcp.open_client(bare.in_memory(), era="handshake") as client:
            assert client.state.server_capabilities.resources is None
            with pytest.raises(trimcp.McpError) as caught:
                await client.list_resources()
            assert caught.value.code == METHOD_NOT_FOUND
            # Sent anyway, the server refuses it too.
            with pytest.raises(trimcp.McpError) as caught:
                await client.request("resources/read", {"uri": "test://x"})
            assert caught.value.code == METHOD_NOT_FOUND
        declared = trimcp.Server("declared", declare_resources=True)
        async with trimcp.open_client(declared.in_memory(), era="handshake") as client:
            assert client.state.server_capabilities.resources is not None
            assert (await client.list_resources()).resources == []


async def test_list_changed_at_run_time() -> None:
    server = trimcp.Server("dynamic", declare_resources=True)
    recorder = Recorder(server)
    changes: list[None] = []

    async def on_changed() -> None:
        changes.append(None)

    with trio.fail_after(WAIT):
        async with trimcp.open_client(
            server.in_memory(), on_resources_list_changed=on_changed, era="handshake"
        ) as client:

            @server.resource("test://late")
            async def late() -> str:
                return "late"

            await client.ping()
            await trio.testing.wait_all_tasks_blocked()
            assert len(changes) == 1
            assert [r.uri for r in await client.list_all_resources()] == ["test://late"]
            server.remove_resource("test://late")
            await client.ping()
            await trio.testing.wait_all_tasks_blocked()
            assert len(changes) == 2
            assert await client.list_all_resources() == []
    assert recorder.validate("2025-11-25")["ResourceListChangedNotification"] == 2


async def test_subscribe_unknown_uri_and_params_errors() -> None:
    server = fixture_server()
    recorder = Recorder(server)
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as caught:
                await client.subscribe_resource("test://nope")
            assert caught.value.code == RESOURCE_NOT_FOUND
            # A template URI may be subscribed to; a sub-resource update reaches it.
            await client.subscribe_resource("file:///srv")
            for params in (None, {}, {"uri": 5}):
                with pytest.raises(trimcp.McpError) as caught:
                    await client.request("resources/read", params)
                assert caught.value.code == INVALID_PARAMS
            await client.unsubscribe_resource("test://never-subscribed")
    assert recorder.validate("2025-11-25")["JSONRPCErrorResponse"] == 4


async def test_sub_resource_updates_reach_the_subscriber() -> None:
    server = fixture_server()
    got: list[str] = []

    async def on_updated(params: ResourceUpdatedParams) -> None:
        got.append(params.uri)

    with trio.fail_after(WAIT):
        async with (
            trimcp.open_client(
                server.in_memory(), on_resource_updated=on_updated, era="handshake"
            ) as a,
            trimcp.open_client(server.in_memory(), era="handshake") as b,
        ):
            await a.subscribe_resource("file:///srv")
            server.notify_resource_updated("file:///srv/x.txt")
            server.notify_resource_updated("file:///srvother")
            await a.ping()
            await b.ping()
            await trio.testing.wait_all_tasks_blocked()
    assert got == ["file:///srv/x.txt"]


def test_registration_errors() -> None:
    server = trimcp.Server("bad")

    def generator() -> Any:
        yield ""

    async def extra(other: str) -> str:
        return other

    async def weird(id: dict[str, int]) -> str:
        return ""

    with pytest.raises(TypeError, match="a generator cannot be a resource"):
        server.resource("test://a")(generator)
    with pytest.raises(TypeError, match="not a template variable"):
        server.resource_template("test://{id}")(extra)
    with pytest.raises(TypeError, match="unsupported type"):
        server.resource_template("test://{id}")(weird)
    with pytest.raises(trimcp.server.UriTemplateError):
        server.resource_template("test://{id")(read_id)
    assert len(server.resources) == 0
    assert server.capabilities().resources is None


async def test_routes_wait_for_initialize() -> None:
    server = fixture_server()
    client_end, server_end = memory_channel_pair()
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve_channel, server_end)
            for number, method in enumerate(["resources/list", "resources/read"]):
                await client_end.send(Request(id=number, method=method, params={"uri": "x"}))
                reply = await client_end.receive()
                assert isinstance(reply, ErrorResponse)
                assert reply.error.code == INVALID_REQUEST
                assert "not initialized" in reply.error.message
            nursery.cancel_scope.cancel()
