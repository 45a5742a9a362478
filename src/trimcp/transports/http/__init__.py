"""Streamable HTTP: the server (an ASGI app) and the client."""

from ._asgi import StreamableHttpApp as StreamableHttpApp
from ._auth import AuthenticatedCaller as AuthenticatedCaller
from ._auth import Authenticator as Authenticator
from ._auth import AuthRefusal as AuthRefusal
from ._auth import AuthRequest as AuthRequest
from ._client import HeadersHook as HeadersHook
from ._client import HttpRequestInfo as HttpRequestInfo
from ._client import StreamableHttp as StreamableHttp
from ._client import legacy_sse as legacy_sse
from ._client import streamable_http as streamable_http
from ._client_auth import AuthorizationError as AuthorizationError
from ._client_auth import AuthResponse as AuthResponse
from ._client_auth import HttpAuth as HttpAuth
from ._client_auth import HttpAuthSession as HttpAuthSession
from ._client_channel import HttpClientChannel as HttpClientChannel
from ._client_fetch import FetchedResponse as FetchedResponse
from ._client_fetch import FetchError as FetchError
from ._client_fetch import HttpFetcher as HttpFetcher
from ._client_fetch import fetch as fetch
from ._event_store import EventStore as EventStore
from ._event_store import MemoryEventStore as MemoryEventStore
from ._event_store import Replay as Replay
from ._event_store import split_event_id as split_event_id
from ._h11_server import serve_h11 as serve_h11
from ._header_values import decode_header_value as decode_header_value
from ._hosts import ANY_HOST as ANY_HOST
from ._hosts import HostPolicy as HostPolicy
from ._hosts import is_loopback as is_loopback
from ._legacy_sse_channel import LegacySseChannel as LegacySseChannel
from ._server_limits import HttpServerLimits as HttpServerLimits
from ._sessions import HttpSessionChannel as HttpSessionChannel
from ._shared import Attached as Attached
from ._shared import Envelope as Envelope
from ._shared import Opened as Opened
from ._shared import SessionRecord as SessionRecord
from ._shared import SharedEvents as SharedEvents
from ._shared import SharedSessions as SharedSessions
from ._shared import StoreUnavailable as StoreUnavailable

__all__ = [
    "ANY_HOST",
    "Attached",
    "AuthRefusal",
    "AuthRequest",
    "AuthResponse",
    "AuthenticatedCaller",
    "Authenticator",
    "AuthorizationError",
    "Envelope",
    "EventStore",
    "FetchError",
    "FetchedResponse",
    "HeadersHook",
    "HostPolicy",
    "HttpAuth",
    "HttpAuthSession",
    "HttpClientChannel",
    "HttpFetcher",
    "HttpRequestInfo",
    "HttpServerLimits",
    "HttpSessionChannel",
    "LegacySseChannel",
    "MemoryEventStore",
    "Opened",
    "Replay",
    "SessionRecord",
    "SharedEvents",
    "SharedSessions",
    "StoreUnavailable",
    "StreamableHttp",
    "StreamableHttpApp",
    "decode_header_value",
    "fetch",
    "is_loopback",
    "legacy_sse",
    "serve_h11",
    "split_event_id",
    "streamable_http",
]
