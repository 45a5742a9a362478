"""The server: registration API, handshake-era lifecycle, tools, and stdio serving."""

from ._context import CapabilityError as CapabilityError
from ._context import ToolContext as ToolContext
from ._http import asgi_app as asgi_app
from ._http import close_sse_stream as close_sse_stream
from ._http import serve_http as serve_http
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
    "asgi_app",
    "close_sse_stream",
    "serve_http",
    "serve_stdio",
]
