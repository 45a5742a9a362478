"""The client: typed calls, pagination, and handlers for the server's reverse calls."""

from ._client import Client as Client
from ._client import ElicitationHandler as ElicitationHandler
from ._client import LoggingHandler as LoggingHandler
from ._client import RootsHandler as RootsHandler
from ._client import SamplingHandler as SamplingHandler
from ._client import open_client as open_client
from ._resources import ResourcesChangedHandler as ResourcesChangedHandler
from ._resources import ResourceUpdatedHandler as ResourceUpdatedHandler

__all__ = [
    "Client",
    "ElicitationHandler",
    "LoggingHandler",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "RootsHandler",
    "SamplingHandler",
    "open_client",
]
