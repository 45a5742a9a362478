"""The structured-concurrency core: sessions, request scopes and handler contexts."""

from ._channel import MessageChannel as MessageChannel
from ._context import BackgroundContext as BackgroundContext
from ._context import HandlerContext as HandlerContext
from ._context import PendingOutput as PendingOutput
from ._context import detach_for_background as detach_for_background
from ._errors import unwrap_single as unwrap_single
from ._limits import SessionLimits as SessionLimits
from ._open import open_session as open_session
from ._session import Session as Session
from ._state import Role as Role
from ._state import SessionState as SessionState

__all__ = [
    "BackgroundContext",
    "HandlerContext",
    "MessageChannel",
    "PendingOutput",
    "Role",
    "Session",
    "SessionLimits",
    "SessionState",
    "detach_for_background",
    "open_session",
    "unwrap_single",
]
