"""Two server processes, one key ring: an input round begun on one ends on the other."""

import attrs
import trio

import trimcp

# In production: keys from your secret store, newest first (the first seals, all open).
KEYS = [
    ("2026-q3", b"a shared secret of at least 16 bytes"),
    ("2026-q2", b"the previous one, still open"),
]


@attrs.frozen
class Nights:
    nights: int


def make_server(keys: list[tuple[str, bytes]] | None = KEYS) -> trimcp.Server:
    """What each process behind the balancer builds (keys=None: a random key of its own,
    the default)."""
    server = trimcp.Server("booking", request_state=trimcp.RequestStateSealer(keys=keys))

    @server.tool()
    async def book(ctx: trimcp.ToolContext, city: str) -> str:
        _, answer = await ctx.elicit(f"How many nights in {city}?", Nights, key="nights")
        return f"booked {answer.nights} nights in {city}" if answer else "not booked"

    return server


async def user(ctx: trimcp.HandlerContext, params: trimcp.ElicitParams) -> trimcp.ElicitResult:
    return trimcp.ElicitResult(action="accept", content={"nights": 3})


async def main() -> None:
    one, two, stranger = make_server(), make_server(), make_server(keys=None)
    call = {"name": "book", "arguments": {"city": "Lyon"}}
    async with (
        trimcp.open_client(one.in_memory(), era="stateless", elicitation=user) as to_one,
        trimcp.open_client(two.in_memory(), era="stateless", elicitation=user) as to_two,
        trimcp.open_client(stranger.in_memory(), era="stateless", elicitation=user) as other,
    ):
        # client.request is the raw escape hatch: it shows the round instead of taking it.
        first = await to_one.request("tools/call", call)
        print("process one:", first["resultType"], list(first["inputRequests"]))
        retry = {
            **call,
            "inputResponses": {"nights": {"action": "accept", "content": {"nights": 3}}},
            "requestState": first["requestState"],
        }
        second = await to_two.request("tools/call", retry)
        print("process two:", second["resultType"], second["content"][0]["text"])
        try:
            await other.request("tools/call", retry)
        except trimcp.McpError as exc:
            print("a process with other keys:", exc.code, exc.message)


if __name__ == "__main__":
    trio.run(main)
