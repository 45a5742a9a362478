"""Registries, the pending-id table, the middleware stacks and the error policy.

This layer knows JSON-RPC messages and MCP errors but no transport and no lifecycle.
"""

from ._errors import LOCAL_CONNECTION_CLOSED as LOCAL_CONNECTION_CLOSED
from ._errors import ConnectionClosedError as ConnectionClosedError
from ._errors import ContextClosedError as ContextClosedError
from ._errors import McpError as McpError
from ._errors import RequestTimeoutError as RequestTimeoutError
from ._errors import connection_closed_error as connection_closed_error
from ._middleware import CallNext as CallNext
from ._middleware import Middleware as Middleware
from ._middleware import Middlewares as Middlewares
from ._middleware import MiddlewareStack as MiddlewareStack
from ._middleware import SessionMiddleware as SessionMiddleware
from ._middleware import Terminal as Terminal
from ._outcome import error_for_exception as error_for_exception
from ._outcome import single_error as single_error
from ._pending import DEFAULT_MAX_PENDING as DEFAULT_MAX_PENDING
from ._pending import PendingCall as PendingCall
from ._pending import PendingTable as PendingTable
from ._pending import ProgressCallback as ProgressCallback
from ._registry import NotificationHandler as NotificationHandler
from ._registry import Registry as Registry
from ._registry import RequestHandler as RequestHandler
from ._registry import RequestRoute as RequestRoute
from ._slots import Slots as Slots
from ._url_elicitation import MAX_REQUIRED_ELICITATIONS as MAX_REQUIRED_ELICITATIONS
from ._url_elicitation import UrlElicitationRequiredError as UrlElicitationRequiredError

__all__ = [
    "DEFAULT_MAX_PENDING",
    "LOCAL_CONNECTION_CLOSED",
    "MAX_REQUIRED_ELICITATIONS",
    "CallNext",
    "ConnectionClosedError",
    "ContextClosedError",
    "McpError",
    "Middleware",
    "MiddlewareStack",
    "Middlewares",
    "NotificationHandler",
    "PendingCall",
    "PendingTable",
    "ProgressCallback",
    "Registry",
    "RequestHandler",
    "RequestRoute",
    "SessionMiddleware",
    "Slots",
    "Terminal",
    "UrlElicitationRequiredError",
    "connection_closed_error",
    "error_for_exception",
    "single_error",
]
