"""Prompt arguments typed other than ``str`` are read from the strings the protocol
carries: as they are for string-like types, as JSON otherwise; a string that does not
read is -32602 naming the argument."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Annotated, Literal

import annotated_types as at
import pytest
import trio

import trimcp
from trimcp.binding import text_reader
from trimcp.server import Server

WAIT = 30


class Tone(enum.Enum):
    WARM = "warm"
    DRY = "dry"


@dataclasses.dataclass
class Window:
    start: datetime.date
    days: int = 7


def _server() -> Server:
    server = Server("typed-prompts")

    @server.prompt()
    async def plan(
        days: Annotated[int, at.Ge(1)],
        start: datetime.date,
        tone: Tone = Tone.WARM,
        strict: bool = False,
        tags: list[str] | None = None,
        window: Window | None = None,
        mode: Literal["short", "long"] = "short",
    ) -> str:
        """Plan some days.

        Args:
            days: how many days.
        """
        return repr((days, start, tone, strict, tags, window, mode))

    return server


async def test_typed_arguments_are_converted() -> None:
    server = _server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            [listed] = await client.list_all_prompts()
            assert listed.arguments is not None
            days = listed.arguments[0]
            assert (days.name, days.required, days.description) == ("days", True, "how many days.")
            result = await client.get_prompt(
                "plan",
                {
                    "days": "3",
                    "start": "2024-05-01",
                    "tone": "dry",
                    "strict": "true",
                    "tags": '["a", "b"]',
                    "window": '{"start": "2024-06-01"}',
                    "mode": "long",
                },
            )
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert text == repr(
        (
            3,
            datetime.date(2024, 5, 1),
            Tone.DRY,
            True,
            ["a", "b"],
            Window(datetime.date(2024, 6, 1)),
            "long",
        )
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"days": "three", "start": "2024-05-01"}, "argument days: expected int"),
        ({"days": "0", "start": "2024-05-01"}, "argument days: expected at least 1"),
        ({"days": "1", "start": "May 1st"}, "argument start: expected date string"),
        ({"days": "1", "start": "2024-05-01", "tone": "cold"}, "argument tone: expected one of"),
        ({"days": "1", "start": "2024-05-01", "strict": "yes"}, "argument strict: expected bool"),
        ({"days": "1", "start": "2024-05-01", "window": "{}"}, "argument window:"),
    ],
)
async def test_arguments_that_do_not_read_are_invalid_params(
    arguments: dict[str, str], message: str
) -> None:
    server = _server()
    with trio.fail_after(WAIT):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            with pytest.raises(trimcp.McpError) as info:
                await client.get_prompt("plan", arguments)
    assert info.value.code == -32602
    assert "prompt plan " + message in info.value.message


def test_text_reader() -> None:
    assert text_reader(str)("5") == "5"
    assert text_reader(int)("5") == 5
    assert text_reader(float)("2.5") == 2.5
    assert text_reader(int | str)("5") == "5"  # a string type reads as it is first
    assert text_reader(int | None)("null") is None
    assert text_reader(dict[str, int])('{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError, match="expected int"):
        text_reader(int)("5.5")
