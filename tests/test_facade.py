"""The public facade: names report ``trimcp`` as their module, the types users need are
exported, and the objects only a factory can make refuse to be built by hand."""

from __future__ import annotations

import inspect
import traceback

import pytest
import trio

import trimcp
from trimcp.binding import structure
from trimcp.nursery import Session

#: Classes and functions; the rest of ``__all__`` is type aliases (``typing`` objects).
DEFINED = [
    n
    for n in trimcp.__all__
    if isinstance(getattr(trimcp, n), type) or inspect.isfunction(getattr(trimcp, n))
]


def test_most_public_names_are_classes_and_functions() -> None:
    aliases = set(trimcp.__all__) - set(DEFINED) - {"__version__"}
    assert aliases == {
        "ElicitationHandler",
        "LoggingHandler",
        "ProgressCallback",
        "RootsHandler",
        "SamplingHandler",
    }


@pytest.mark.parametrize("name", DEFINED)
def test_every_public_name_reports_the_package_as_its_module(name: str) -> None:
    value = getattr(trimcp, name)
    assert value.__module__ == "trimcp", f"trimcp.{name} reports {value.__module__}"


def test_methods_of_public_classes_read_as_members_of_the_package() -> None:
    assert trimcp.Client.call_tool.__module__ == "trimcp"
    assert trimcp.Client.call_tool.__qualname__ == "Client.call_tool"
    assert trimcp.Server.tool.__qualname__ == "Server.tool"


def test_a_traceback_names_the_public_error() -> None:
    try:
        raise trimcp.McpError(-32603, "boom")
    except trimcp.McpError as exc:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    assert text.startswith("trimcp.McpError: ")
    assert repr(trimcp.ToolError) == "<class 'trimcp.ToolError'>"


def test_public_attrs_classes_still_bind() -> None:
    # Their annotations were resolved in their own modules before the rename.
    result = structure({"content": [{"type": "text", "text": "hi"}]}, trimcp.CallToolResult)
    assert result.content == [trimcp.TextContent(text="hi")]
    assert structure({"name": "p"}, trimcp.Prompt).name == "p"
    info = structure({"name": "n", "version": "1"}, trimcp.Implementation)
    assert info == trimcp.Implementation(name="n", version="1")


@pytest.mark.parametrize(
    "name",
    [
        "Prompt",
        "PromptArgument",
        "Implementation",
        "Icon",
        "ClientCapabilities",
        "ServerCapabilities",
        "TaskStore",
        "Sampling",
        "SamplingHandler",
        "Elicitation",
        "ElicitationHandler",
        "RootsHandler",
        "LoggingHandler",
        "ProgressCallback",
    ],
)
def test_types_users_need_are_exported(name: str) -> None:
    assert name in trimcp.__all__
    assert getattr(trimcp, name) is not None


def test_client_is_made_by_open_client_only() -> None:
    with pytest.raises(
        TypeError,
        match=r"trimcp\.Client has no public constructor; use "
        r"trimcp\.open_client\(\)",
    ):
        trimcp.Client(object())  # type: ignore[call-arg]


def test_session_is_made_by_open_session_only() -> None:
    with pytest.raises(TypeError, match=r"no public constructor; use trimcp\.nursery\.open_"):
        Session(object())  # type: ignore[call-arg]


async def test_the_factories_still_make_them() -> None:
    server = trimcp.Server("facade")
    with trio.fail_after(5):
        async with trimcp.open_client(server.in_memory(), era="handshake") as client:
            assert isinstance(client, trimcp.Client)
            assert isinstance(client.session, Session)
