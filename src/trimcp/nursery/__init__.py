"""The structured-concurrency core: sessions, request scopes and handler contexts."""

from ._channel import MessageChannel as MessageChannel
from ._construction import NoPublicConstructor as NoPublicConstructor
from ._context import BackgroundContext as BackgroundContext
from ._context import Caller as Caller
from ._context import HandlerContext as HandlerContext
from ._context import PendingOutput as PendingOutput
from ._context import detach_for_background as detach_for_background
from ._drain import cancel_requests as cancel_requests
from ._drain import is_idle as is_idle
from ._drain import refuse_requests as refuse_requests
from ._drain import running_requests as running_requests
from ._errors import SERVER_BUSY as SERVER_BUSY
from ._errors import BackgroundLimitError as BackgroundLimitError
from ._errors import unwrap_single as unwrap_single
from ._gc import DEFAULT_YOUNG_THRESHOLD as DEFAULT_YOUNG_THRESHOLD
from ._gc import tune_gc as tune_gc
from ._lifecycle import SHUTTING_DOWN as SHUTTING_DOWN
from ._lifecycle import TRANSITIONS as TRANSITIONS
from ._lifecycle import Action as Action
from ._lifecycle import Event as Event
from ._lifecycle import Lifecycle as Lifecycle
from ._lifecycle import LifecycleError as LifecycleError
from ._limits import SessionLimits as SessionLimits
from ._observer import InboundWatch as InboundWatch
from ._observer import OutboundCall as OutboundCall
from ._observer import RequestObserver as RequestObserver
from ._observer import RequestOptions as RequestOptions
from ._open import open_session as open_session
from ._session import Session as Session
from ._state import Phase as Phase
from ._state import Role as Role
from ._state import SessionState as SessionState

__all__ = [
    "DEFAULT_YOUNG_THRESHOLD",
    "SERVER_BUSY",
    "SHUTTING_DOWN",
    "TRANSITIONS",
    "Action",
    "BackgroundContext",
    "BackgroundLimitError",
    "Caller",
    "Event",
    "HandlerContext",
    "InboundWatch",
    "Lifecycle",
    "LifecycleError",
    "MessageChannel",
    "NoPublicConstructor",
    "OutboundCall",
    "PendingOutput",
    "Phase",
    "RequestObserver",
    "RequestOptions",
    "Role",
    "Session",
    "SessionLimits",
    "SessionState",
    "cancel_requests",
    "detach_for_background",
    "is_idle",
    "open_session",
    "refuse_requests",
    "running_requests",
    "tune_gc",
    "unwrap_single",
]
