"""Property-based MCP conformance testing, for trimcp and for any MCP server.

Strategies (Hypothesis), built from the official JSON schema of each revision, which
ship with trimcp (:data:`REVISIONS`):

- :func:`from_definition` any schema definition; :func:`client_requests`,
  :func:`client_notifications`, :func:`server_messages`, :func:`responses` whole
  JSON-RPC messages; :func:`request_ids`.
- :func:`invalid_frames` near misses as raw bytes (wrong types, missing members,
  case-changed keys, duplicate keys, bad ids, oversized or deeply nested values, not
  JSON at all), each with the :class:`Expect` answer the rules require.
- :func:`sessions` whole sessions: lists of actions (requests, notifications,
  cancellations, near misses, listings, disconnects) that :func:`replay` performs.

The conformance machine (:func:`run_conformance`) drives a server under test as a raw
JSON-RPC peer over stdio (:class:`StdioTarget`), Streamable HTTP (:class:`HttpTarget`,
loopback unless allowed) or in-process (:class:`MemoryTarget`), checks the
:data:`PROPERTIES` after every step, and reports each failure shrunk, as a replay file
(:func:`write_replay`, :func:`replay`). ``trimcp conform`` is its command line.
"""

from ._compile import for_tool_schema as for_tool_schema
from ._compile import from_definition as from_definition
from ._frames import Expect as Expect
from ._frames import Frame as Frame
from ._http_target import HttpTarget as HttpTarget
from ._http_target import is_loopback_url as is_loopback_url
from ._inbox import Target as Target
from ._invalid import invalid_frames as invalid_frames
from ._machine import Failure as Failure
from ._machine import machine_for as machine_for
from ._messages import client_notifications as client_notifications
from ._messages import client_requests as client_requests
from ._messages import request_ids as request_ids
from ._messages import responses as responses
from ._messages import server_messages as server_messages
from ._run import Report as Report
from ._run import load_replay as load_replay
from ._run import replay as replay
from ._run import run_conformance as run_conformance
from ._run import write_replay as write_replay
from ._schemas import HANDSHAKE_REVISIONS as HANDSHAKE_REVISIONS
from ._schemas import REVISIONS as REVISIONS
from ._schemas import method_table as method_table
from ._schemas import schema_errors as schema_errors
from ._session import Options as Options
from ._sessions import sessions as sessions
from ._stream_targets import MemoryTarget as MemoryTarget
from ._stream_targets import StdioTarget as StdioTarget
from ._violations import PROPERTIES as PROPERTIES
from ._violations import Violation as Violation

__all__ = [
    "HANDSHAKE_REVISIONS",
    "PROPERTIES",
    "REVISIONS",
    "Expect",
    "Failure",
    "Frame",
    "HttpTarget",
    "MemoryTarget",
    "Options",
    "Report",
    "StdioTarget",
    "Target",
    "Violation",
    "client_notifications",
    "client_requests",
    "for_tool_schema",
    "from_definition",
    "invalid_frames",
    "is_loopback_url",
    "load_replay",
    "machine_for",
    "method_table",
    "replay",
    "request_ids",
    "responses",
    "run_conformance",
    "schema_errors",
    "server_messages",
    "sessions",
    "write_replay",
]
