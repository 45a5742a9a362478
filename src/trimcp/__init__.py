"""trimcp: a Model Context Protocol engine, client and server, on Trio.

The public facade. Everything a user needs is re-exported here; the subpackages hold
the layers (``wire`` ← ``protocol`` ← ``binding`` ← ``dispatch`` ← ``nursery`` ←
``transports`` ← ``server``/``client`` ← ``testing``/``cli``). Every name listed in
``__all__`` reports ``trimcp`` as its module (``trimcp.McpError`` in a traceback, not
the private module that defines it); see :mod:`trimcp._facade`.
"""

from trimcp._facade import present_as
from trimcp.binding import ArgumentsError as ArgumentsError
from trimcp.client import AppView as AppView
from trimcp.client import Client as Client
from trimcp.client import Elicitation as Elicitation
from trimcp.client import ElicitationHandler as ElicitationHandler
from trimcp.client import InputRoundsExceeded as InputRoundsExceeded
from trimcp.client import LoadedSkill as LoadedSkill
from trimcp.client import LoggingHandler as LoggingHandler
from trimcp.client import RootsHandler as RootsHandler
from trimcp.client import Sampling as Sampling
from trimcp.client import SamplingHandler as SamplingHandler
from trimcp.client import SkillVerificationError as SkillVerificationError
from trimcp.client import Subscription as Subscription
from trimcp.client import open_client as open_client
from trimcp.dispatch import ConnectionClosedError as ConnectionClosedError
from trimcp.dispatch import ContextClosedError as ContextClosedError
from trimcp.dispatch import McpError as McpError
from trimcp.dispatch import Middlewares as Middlewares
from trimcp.dispatch import ProgressCallback as ProgressCallback
from trimcp.dispatch import RequestTimeoutError as RequestTimeoutError
from trimcp.nursery import BackgroundContext as BackgroundContext
from trimcp.nursery import HandlerContext as HandlerContext
from trimcp.nursery import SessionLimits as SessionLimits
from trimcp.nursery import detach_for_background as detach_for_background
from trimcp.nursery import tune_gc as tune_gc
from trimcp.protocol import AudioContent as AudioContent
from trimcp.protocol import BlobResourceContents as BlobResourceContents
from trimcp.protocol import CallToolResult as CallToolResult
from trimcp.protocol import ClientCapabilities as ClientCapabilities
from trimcp.protocol import CreateMessageParams as CreateMessageParams
from trimcp.protocol import CreateMessageResult as CreateMessageResult
from trimcp.protocol import ElicitParams as ElicitParams
from trimcp.protocol import ElicitResult as ElicitResult
from trimcp.protocol import EmbeddedResource as EmbeddedResource
from trimcp.protocol import GetPromptResult as GetPromptResult
from trimcp.protocol import Icon as Icon
from trimcp.protocol import ImageContent as ImageContent
from trimcp.protocol import Implementation as Implementation
from trimcp.protocol import Prompt as Prompt
from trimcp.protocol import PromptArgument as PromptArgument
from trimcp.protocol import PromptMessage as PromptMessage
from trimcp.protocol import PromptReference as PromptReference
from trimcp.protocol import ReadResourceResult as ReadResourceResult
from trimcp.protocol import Resource as Resource
from trimcp.protocol import ResourceLink as ResourceLink
from trimcp.protocol import ResourceTemplate as ResourceTemplate
from trimcp.protocol import ResourceTemplateReference as ResourceTemplateReference
from trimcp.protocol import Root as Root
from trimcp.protocol import SamplingMessage as SamplingMessage
from trimcp.protocol import ServerCapabilities as ServerCapabilities
from trimcp.protocol import SkillEntry as SkillEntry
from trimcp.protocol import TextContent as TextContent
from trimcp.protocol import TextResourceContents as TextResourceContents
from trimcp.protocol import Tool as Tool
from trimcp.protocol import ToolAnnotations as ToolAnnotations
from trimcp.server import CachePolicy as CachePolicy
from trimcp.server import CapabilityError as CapabilityError
from trimcp.server import McpLogHandler as McpLogHandler
from trimcp.server import RequestStateSealer as RequestStateSealer
from trimcp.server import Server as Server
from trimcp.server import Skill as Skill
from trimcp.server import TaskStore as TaskStore
from trimcp.server import ToolContext as ToolContext
from trimcp.server import ToolError as ToolError
from trimcp.server import asgi_app as asgi_app
from trimcp.server import close_sse_stream as close_sse_stream
from trimcp.server import serve_http as serve_http
from trimcp.server import serve_stdio as serve_stdio
from trimcp.server import serve_websocket as serve_websocket
from trimcp.transports import legacy_sse as legacy_sse
from trimcp.transports import stdio_command as stdio_command
from trimcp.transports import streamable_http as streamable_http
from trimcp.transports import websocket as websocket
from trimcp.transports.http import HttpServerLimits as HttpServerLimits
from trimcp.transports.websocket import WebSocketHandshakeError as WebSocketHandshakeError
from trimcp.transports.websocket import WebSocketLimits as WebSocketLimits

__version__ = "0.1.0"

__all__ = [
    "AppView",
    "ArgumentsError",
    "AudioContent",
    "BackgroundContext",
    "BlobResourceContents",
    "CachePolicy",
    "CallToolResult",
    "CapabilityError",
    "Client",
    "ClientCapabilities",
    "ConnectionClosedError",
    "ContextClosedError",
    "CreateMessageParams",
    "CreateMessageResult",
    "ElicitParams",
    "ElicitResult",
    "Elicitation",
    "ElicitationHandler",
    "EmbeddedResource",
    "GetPromptResult",
    "HandlerContext",
    "HttpServerLimits",
    "Icon",
    "ImageContent",
    "Implementation",
    "InputRoundsExceeded",
    "LoadedSkill",
    "LoggingHandler",
    "McpError",
    "McpLogHandler",
    "Middlewares",
    "ProgressCallback",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "ReadResourceResult",
    "RequestStateSealer",
    "RequestTimeoutError",
    "Resource",
    "ResourceLink",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "Root",
    "RootsHandler",
    "Sampling",
    "SamplingHandler",
    "SamplingMessage",
    "Server",
    "ServerCapabilities",
    "SessionLimits",
    "Skill",
    "SkillEntry",
    "SkillVerificationError",
    "Subscription",
    "TaskStore",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolError",
    "WebSocketHandshakeError",
    "WebSocketLimits",
    "__version__",
    "asgi_app",
    "close_sse_stream",
    "detach_for_background",
    "legacy_sse",
    "open_client",
    "serve_http",
    "serve_stdio",
    "serve_websocket",
    "stdio_command",
    "streamable_http",
    "tune_gc",
    "websocket",
]

present_as(__name__, globals(), __all__)
