"""One tool body, two eras: a live reverse call, or an input round."""

import attrs
import trio

import trimcp
from trimcp.wire import Request, Response

server = trimcp.Server("hotel")
runs = 0


@attrs.frozen
class Nights:
    nights: int


@server.tool()
async def book(ctx: trimcp.ToolContext, city: str) -> str:
    global runs
    runs += 1  # code before a reverse call runs once per input round
    _, answer = await ctx.elicit(f"How many nights in {city}?", Nights)
    return f"booked {answer.nights} nights in {city}" if answer else "not booked"


async def user(ctx: trimcp.HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"nights": 3})


def tap(arrow: str) -> trimcp.dispatch.Middleware:
    async def middleware(message, call_next):
        if isinstance(message, Request):
            keys = sorted(message.params or {})
            print(f"  {arrow} request {message.method} id={message.id} {keys}")
        elif isinstance(message, Response):
            kind = message.result.get("resultType", sorted(message.result))
            print(f"  {arrow} answer id={message.id} {kind}")
        await call_next(message)

    return middleware


async def main() -> None:
    global runs
    for era in ("handshake", "stateless"):
        runs = 0
        wire = trimcp.Middlewares()
        transport = server.in_memory()
        async with trimcp.open_client(
            transport, elicitation=user, era=era, middlewares=wire
        ) as client:
            print(f"{era} era, revision {client.protocol_version}:")
            wire.client_send.add(tap("client sends   "))
            wire.client_recv.add(tap("client receives"))
            result = await client.call_tool("book", {"city": "Lyon"}, validate_output=False)
            print(f"  {result.content[0].text}; the handler ran {runs} time(s)")


if __name__ == "__main__":
    trio.run(main)
