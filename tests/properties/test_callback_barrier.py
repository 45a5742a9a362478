"""Property: a call returns only once the callbacks of everything that came before its
answer have run.

Callbacks run off the session's reader, in a queue per kind, so a slow one lags behind
the messages. For any plan of log lines, progress and list-changed notifications sent by
concurrent tool calls, and any callback speeds: when a call returns, every log line and
progress notification its tool sent has reached its callback, and for every list change
it announced a callback of that kind has run from start to end after the announcement
(announcements coalesce, so one run may cover several). Virtual time: the clock jumps.
"""

from __future__ import annotations

import itertools
from typing import Any

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

import trimcp
from trimcp.protocol import LoggingMessageParams

KINDS = ("log", "progress", "tools", "resources")
_METHODS = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
}

_step = st.tuples(st.sampled_from(KINDS), st.integers(0, 2))  # (what, virtual gap before)
_plans = st.lists(st.lists(_step, max_size=8), min_size=1, max_size=3)
_delays = st.fixed_dictionaries({kind: st.integers(0, 3) for kind in KINDS})


class _World:
    """What both sides of one run share (they are in one process): a counter the
    server bumps before each announcement, and what the callbacks saw."""

    def __init__(self) -> None:
        self.counter = itertools.count(1)
        self.now = 0
        self.logs: set[str] = set()
        self.progress: set[tuple[int, float]] = set()
        #: per list kind, (counter when the callback started) of each finished run
        self.runs: dict[str, list[int]] = {"tools": [], "resources": []}

    def bump(self) -> int:
        self.now = next(self.counter)
        return self.now


def _server(world: _World) -> trimcp.Server:
    server = trimcp.Server("barrier", declare_tools=True)

    @server.tool()
    async def emit(ctx: trimcp.ToolContext, call: int, plan: list[list[Any]]) -> dict[str, Any]:
        announced: dict[str, int] = {}
        for index, (kind, gap) in enumerate(plan):
            await trio.sleep(gap)
            if kind == "log":
                await ctx.log("info", f"{call}:{index}")
            elif kind == "progress":
                await ctx.report_progress(index + 1)
            else:
                announced[kind] = world.bump()
                await ctx.notify(_METHODS[kind])
        return {"announced": announced}

    return server


async def _run(plans: list[list[tuple[str, int]]], delays: dict[str, int]) -> None:
    world = _World()

    async def on_log(params: LoggingMessageParams) -> None:
        await trio.sleep(delays["log"])
        world.logs.add(str(params.data))

    def on_list(kind: str) -> Any:
        async def changed() -> None:
            started = world.now
            await trio.sleep(delays[kind])
            world.runs[kind].append(started)

        return changed

    async with trimcp.open_client(
        _server(world).in_memory(),
        on_log=on_log,
        on_tools_list_changed=on_list("tools"),
        on_resources_list_changed=on_list("resources"),
        era="handshake",
    ) as client:
        await client.set_logging_level("debug")

        async def call(number: int, plan: list[tuple[str, int]]) -> None:
            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                await trio.sleep(delays["progress"])
                world.progress.add((number, progress))

            arguments = {"call": number, "plan": [list(step) for step in plan]}
            result = await client.call_tool("emit", arguments, on_progress=on_progress)
            # No checkpoint between the return and these checks.
            for index, (kind, _) in enumerate(plan):
                if kind == "log":
                    assert f"{number}:{index}" in world.logs, (number, index)
                elif kind == "progress":
                    assert (number, index + 1) in world.progress, (number, index)
            announced = (result.structured_content or {}).get("announced", {})
            for kind, seq in announced.items():
                assert any(started >= seq for started in world.runs[kind]), (kind, seq)

        async with trio.open_nursery() as nursery:
            for number, plan in enumerate(plans):
                nursery.start_soon(call, number, plan)


@settings(max_examples=150, deadline=None)
@given(_plans, _delays)
def test_a_call_returns_after_the_callbacks_of_what_preceded_its_answer(
    plans: list[list[tuple[str, int]]], delays: dict[str, int]
) -> None:
    trio.run(_run, plans, delays, clock=trio.testing.MockClock(autojump_threshold=0))
