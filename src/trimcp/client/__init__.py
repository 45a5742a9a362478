"""The client: typed calls, pagination, and handlers for the server's reverse calls."""

from ._client import Client as Client
from ._client import ElicitationHandler as ElicitationHandler
from ._client import LoggingHandler as LoggingHandler
from ._client import RootsHandler as RootsHandler
from ._client import SamplingHandler as SamplingHandler
from ._client import open_client as open_client
from ._era import EraChoice as EraChoice
from ._listen import Subscription as Subscription
from ._mrtr import DEFAULT_MAX_INPUT_ROUNDS as DEFAULT_MAX_INPUT_ROUNDS
from ._mrtr import InputRoundsExceeded as InputRoundsExceeded
from ._resources import ResourcesChangedHandler as ResourcesChangedHandler
from ._resources import ResourceUpdatedHandler as ResourceUpdatedHandler

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "Client",
    "ElicitationHandler",
    "EraChoice",
    "InputRoundsExceeded",
    "LoggingHandler",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "RootsHandler",
    "SamplingHandler",
    "Subscription",
    "open_client",
]
