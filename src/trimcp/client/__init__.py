"""The client: typed calls, pagination, handlers for the server's reverse calls, and the
tasks extension."""

from ._client import Client as Client
from ._client import ElicitationHandler as ElicitationHandler
from ._client import LoggingHandler as LoggingHandler
from ._client import RootsHandler as RootsHandler
from ._client import SamplingHandler as SamplingHandler
from ._client import open_client as open_client
from ._resources import ResourcesChangedHandler as ResourcesChangedHandler
from ._resources import ResourceUpdatedHandler as ResourceUpdatedHandler
from ._tasks import InputResponder as InputResponder
from ._tasks import Requester as Requester
from ._tasks import TaskCalls as TaskCalls
from ._tasks import TaskCancelledError as TaskCancelledError
from ._tasks import client_responder as client_responder
from ._tasks import input_responder as input_responder
from ._tasks import stateless_requester as stateless_requester

__all__ = [
    "Client",
    "ElicitationHandler",
    "InputResponder",
    "LoggingHandler",
    "Requester",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "RootsHandler",
    "SamplingHandler",
    "TaskCalls",
    "TaskCancelledError",
    "client_responder",
    "input_responder",
    "open_client",
    "stateless_requester",
]
