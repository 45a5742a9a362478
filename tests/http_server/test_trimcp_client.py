"""trimcp's own Streamable HTTP client against serve_http (both ends of the transport)."""

from __future__ import annotations

import trio

import trimcp
from trimcp.protocol import CreateMessageResult, TextContent

from ._fixture import make_server


async def test_trimcp_client_against_serve_http(engine: str) -> None:
    server = make_server()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def sampling(ctx: object, params: trimcp.CreateMessageParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="yes"), model="m")

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            transport = await _serve(nursery, server, engine)
            async with trimcp.open_client(transport, sampling=sampling, era="handshake") as client:
                echo = await client.call_tool("echo", {"text": "hi"})
                assert echo.content[0].text == "hi"  # type: ignore[union-attr]
                chatty = await client.call_tool("chatty", {"count": 2}, on_progress=on_progress)
                assert chatty.content[0].text == "done"  # type: ignore[union-attr]
                ask = await client.call_tool("ask", {"prompt": "q"})
                assert ask.content[0].text == "model said: yes"  # type: ignore[union-attr]
                server.test_state["release"].set()  # the tool still closes its stream first
                result = await client.call_tool("poll", {})
                assert result.content[0].text == "closed=True"  # type: ignore[union-attr]
            assert progress == [0, 1]
            nursery.cancel_scope.cancel()


async def test_cancelling_a_call_closes_the_clients_elicitation_form(engine: str) -> None:
    """Cancelling ``tools/call`` while its handler waits in ``ctx.elicit``: the server
    cancels the elicitation, and the client's handler is cancelled, over real HTTP."""
    server = make_server()
    asked = trio.Event()
    form_closed = trio.Event()

    async def elicitation(
        ctx: trimcp.HandlerContext, params: trimcp.ElicitParams
    ) -> trimcp.ElicitResult:
        asked.set()
        try:
            await trio.sleep_forever()
        finally:
            form_closed.set()
        raise AssertionError("unreachable")

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            transport = await _serve(nursery, server, engine)
            async with trimcp.open_client(
                transport, elicitation=elicitation, era="handshake"
            ) as client:
                with trio.CancelScope() as call:
                    nursery.start_soon(_cancel_when, asked, call)
                    await client.call_tool("form", {})
                assert call.cancelled_caught
                await form_closed.wait()  # the server told the client: the form is gone
                assert (await client.call_tool("echo", {"text": "on"})).content[0].text == "on"  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


async def _cancel_when(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _serve(
    nursery: trio.Nursery, server: trimcp.Server, engine: str
) -> trimcp.transports.StreamableHttp:
    """``serve_http`` on 127.0.0.1 in ``nursery``; a client transport to it."""
    port = await nursery.start(
        lambda task_status: trimcp.serve_http(
            server, port=0, engine=engine, task_status=task_status
        )
    )
    return trimcp.streamable_http(f"http://127.0.0.1:{port}/mcp")
