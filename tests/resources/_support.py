"""Shared tools of the resources tests: the schema recorder (the suite's one, from
``tests/core/_schema_check.py``) and a fixture server."""

from __future__ import annotations

import json
from typing import Any

import trimcp

from ..core._schema_check import HANDSHAKE, check
from ..core._schema_check import SchemaCheck as Recorder

__all__ = ["HANDSHAKE", "PNG", "WAIT", "Recorder", "check", "fixture_server"]

WAIT = 30

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def fixture_server(**options: Any) -> trimcp.Server:
    """A server with a text, a binary and a watched resource and two templates."""
    server = trimcp.Server("resources-test", version="1.0", **options)

    @server.resource("test://static-text", name="Static Text", mime_type="text/plain")
    async def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="Static Binary", mime_type="image/png")
    async def static_binary() -> bytes:
        return PNG

    @server.resource("test://watched-resource", title="Watched", mime_type="text/plain")
    async def watched() -> str:
        return "watched"

    @server.resource_template("test://template/{id}/data", mime_type="application/json")
    async def template_data(id: int) -> str:
        """JSON data for an integer id."""
        return json.dumps({"id": id, "templateTest": True})

    @server.resource_template("file:///{+path}", name="files")
    async def files(path: str) -> trimcp.TextResourceContents:
        return trimcp.TextResourceContents(uri=f"file:///{path}", text=path)

    return server
