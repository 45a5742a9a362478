"""The client: typed calls, pagination, and handlers for the server's reverse calls."""

from ._client import Client as Client
from ._client import ElicitationHandler as ElicitationHandler
from ._client import LoggingHandler as LoggingHandler
from ._client import RootsHandler as RootsHandler
from ._client import SamplingHandler as SamplingHandler
from ._client import open_client as open_client
from ._output import MAX_OUTPUT_SCHEMAS as MAX_OUTPUT_SCHEMAS
from ._output import OutputSchemaError as OutputSchemaError
from ._output import OutputSchemas as OutputSchemas
from ._output import ToolsChangedHandler as ToolsChangedHandler
from ._resources import ResourcesChangedHandler as ResourcesChangedHandler
from ._resources import ResourceUpdatedHandler as ResourceUpdatedHandler

__all__ = [
    "MAX_OUTPUT_SCHEMAS",
    "Client",
    "ElicitationHandler",
    "LoggingHandler",
    "OutputSchemaError",
    "OutputSchemas",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "RootsHandler",
    "SamplingHandler",
    "ToolsChangedHandler",
    "open_client",
]
