"""Ready-made middleware for the four stacks.

- :class:`RequestLogging`: one structured log record per request.
- :class:`Timing`: per-method counts and durations, and a callback per request.
- :class:`RateLimit`: a token bucket per session, per principal or per any key;
  ``-32000``, or HTTP 429 with ``Retry-After`` over Streamable HTTP.
- :class:`ResponseCache`: answers repeated list and read requests from a bounded cache,
  as the results' ``ttlMs``/``cacheScope`` hints allow.
- :class:`ErrorMasking`: errors raised on purpose go out without their details.

Each is installed with ``.install(middlewares, role="server")`` (or ``"client"``) on
the :class:`~trimcp.dispatch.Middlewares` of a server (``server.middlewares``) or of a
client (``open_client(..., middlewares=...)``). The first installed is the outermost.
The order that reads best, outermost first::

    RequestLogging()   # sees every request, the refused and cached ones included
    Timing()
    RateLimit(...)     # refuses before any work is done
    ResponseCache()    # answers before the handler runs
    ErrorMasking()     # innermost: the others log and time the real error

(Masking innermost means logs keep the real error; put it outermost to log the masked
one instead.) Every table they keep is bounded; see the README's limits table.
"""

from ._base import DEFAULT_MAX_TRACKED as DEFAULT_MAX_TRACKED
from ._base import RoleMiddleware as RoleMiddleware
from ._base import answer as answer
from ._cache import CACHEABLE as CACHEABLE
from ._cache import DEFAULT_MAX_ENTRIES as DEFAULT_MAX_ENTRIES
from ._cache import ResponseCache as ResponseCache
from ._logging import RequestLogging as RequestLogging
from ._masking import PROTOCOL_CODES as PROTOCOL_CODES
from ._masking import ErrorMasking as ErrorMasking
from ._ratelimit import DEFAULT_MAX_KEYS as DEFAULT_MAX_KEYS
from ._ratelimit import RATE_LIMITED as RATE_LIMITED
from ._ratelimit import RateLimit as RateLimit
from ._ratelimit import per_principal as per_principal
from ._ratelimit import per_session as per_session
from ._timing import DEFAULT_MAX_METHODS as DEFAULT_MAX_METHODS
from ._timing import Completed as Completed
from ._timing import MethodStats as MethodStats
from ._timing import Timing as Timing

__all__ = [
    "CACHEABLE",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_KEYS",
    "DEFAULT_MAX_METHODS",
    "DEFAULT_MAX_TRACKED",
    "PROTOCOL_CODES",
    "RATE_LIMITED",
    "Completed",
    "ErrorMasking",
    "MethodStats",
    "RateLimit",
    "RequestLogging",
    "ResponseCache",
    "RoleMiddleware",
    "Timing",
    "answer",
    "per_principal",
    "per_session",
]
