"""The server: registration API, handshake-era lifecycle, tools, and stdio serving."""

from ._context import CapabilityError as CapabilityError
from ._context import ToolContext as ToolContext
from ._lifecycle import Phase as Phase
from ._pagination import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from ._server import InMemoryTransport as InMemoryTransport
from ._server import Server as Server
from ._stdio import serve_stdio as serve_stdio
from ._tools import ToolError as ToolError

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "CapabilityError",
    "InMemoryTransport",
    "Phase",
    "Server",
    "ToolContext",
    "ToolError",
    "serve_stdio",
]
