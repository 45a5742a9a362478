"""The server: registration API, handshake-era lifecycle, tools, prompts, completion,
serving, and graceful shutdown."""

from trimcp.nursery import Phase as Phase

from ._context import CapabilityError as CapabilityError
from ._context import ToolContext as ToolContext
from ._http import asgi_app as asgi_app
from ._http import close_sse_stream as close_sse_stream
from ._http import host_policy_for as host_policy_for
from ._http import serve_http as serve_http
from ._log_bridge import DEFAULT_LOG_BUFFER as DEFAULT_LOG_BUFFER
from ._log_bridge import McpLogHandler as McpLogHandler
from ._pagination import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from ._prompts import CompletionProvider as CompletionProvider
from ._request_state import DEFAULT_STATE_TTL as DEFAULT_STATE_TTL
from ._request_state import RequestStateError as RequestStateError
from ._request_state import RequestStateSealer as RequestStateSealer
from ._server import InMemoryTransport as InMemoryTransport
from ._server import Server as Server
from ._shutdown import DEFAULT_ABANDON_AFTER as DEFAULT_ABANDON_AFTER
from ._shutdown import DEFAULT_SHUTDOWN_GRACE as DEFAULT_SHUTDOWN_GRACE
from ._shutdown import ShutdownControl as ShutdownControl
from ._skills import Skill as Skill
from ._stateless import CachePolicy as CachePolicy
from ._stdio import serve_stdio as serve_stdio
from ._task_job import TaskToolContext as TaskToolContext
from ._task_store import DEFAULT_MAX_TASKS as DEFAULT_MAX_TASKS
from ._task_store import DEFAULT_POLL_INTERVAL as DEFAULT_POLL_INTERVAL
from ._task_store import DEFAULT_TASK_TTL as DEFAULT_TASK_TTL
from ._task_store import TaskStore as TaskStore
from ._tools import ToolError as ToolError
from ._uri_template import UriTemplate as UriTemplate
from ._uri_template import UriTemplateError as UriTemplateError
from ._websocket import serve_websocket as serve_websocket

__all__ = [
    "DEFAULT_ABANDON_AFTER",
    "DEFAULT_LOG_BUFFER",
    "DEFAULT_MAX_TASKS",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_SHUTDOWN_GRACE",
    "DEFAULT_STATE_TTL",
    "DEFAULT_TASK_TTL",
    "CachePolicy",
    "CapabilityError",
    "CompletionProvider",
    "InMemoryTransport",
    "McpLogHandler",
    "Phase",
    "RequestStateError",
    "RequestStateSealer",
    "Server",
    "ShutdownControl",
    "Skill",
    "TaskStore",
    "TaskToolContext",
    "ToolContext",
    "ToolError",
    "UriTemplate",
    "UriTemplateError",
    "asgi_app",
    "close_sse_stream",
    "host_policy_for",
    "serve_http",
    "serve_stdio",
    "serve_websocket",
]
