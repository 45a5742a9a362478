"""The client: typed calls, pagination, handlers for the server's reverse calls, and the
tasks extension."""

from ._apps import AppView as AppView
from ._client import Client as Client
from ._client import ElicitationHandler as ElicitationHandler
from ._client import LoggingHandler as LoggingHandler
from ._client import RootsHandler as RootsHandler
from ._client import SamplingHandler as SamplingHandler
from ._client import open_client as open_client
from ._core_tasks import CoreTaskCalls as CoreTaskCalls
from ._core_tasks import TaskCancelledError as TaskCancelledError
from ._elicitation import MAX_COMPLETED_IDS as MAX_COMPLETED_IDS
from ._elicitation import Elicitation as Elicitation
from ._elicitation import FormHandler as FormHandler
from ._elicitation import FormRequest as FormRequest
from ._elicitation import UrlHandler as UrlHandler
from ._era import EraChoice as EraChoice
from ._form import ElicitationForm as ElicitationForm
from ._form import EnumOption as EnumOption
from ._form import FieldKind as FieldKind
from ._form import FormField as FormField
from ._form import FormSchemaError as FormSchemaError
from ._listen import Subscription as Subscription
from ._mrtr import DEFAULT_MAX_INPUT_ROUNDS as DEFAULT_MAX_INPUT_ROUNDS
from ._mrtr import InputRoundsExceeded as InputRoundsExceeded
from ._output import MAX_OUTPUT_SCHEMAS as MAX_OUTPUT_SCHEMAS
from ._output import OutputSchemaError as OutputSchemaError
from ._output import OutputSchemas as OutputSchemas
from ._output import ToolsChangedHandler as ToolsChangedHandler
from ._resources import ResourcesChangedHandler as ResourcesChangedHandler
from ._resources import ResourceUpdatedHandler as ResourceUpdatedHandler
from ._roots import RootList as RootList
from ._sampling import Sampling as Sampling
from ._skills import DirectoryPage as DirectoryPage
from ._skills import LoadedSkill as LoadedSkill
from ._skills import SkillList as SkillList
from ._skills import SkillVerificationError as SkillVerificationError
from ._tasks import InputResponder as InputResponder
from ._tasks import Requester as Requester
from ._tasks import TaskCalls as TaskCalls
from ._tasks import client_responder as client_responder
from ._tasks import input_responder as input_responder
from ._tasks import stateless_requester as stateless_requester

__all__ = [
    "DEFAULT_MAX_INPUT_ROUNDS",
    "MAX_COMPLETED_IDS",
    "MAX_OUTPUT_SCHEMAS",
    "AppView",
    "Client",
    "CoreTaskCalls",
    "DirectoryPage",
    "Elicitation",
    "ElicitationForm",
    "ElicitationHandler",
    "EnumOption",
    "EraChoice",
    "FieldKind",
    "FormField",
    "FormHandler",
    "FormRequest",
    "FormSchemaError",
    "InputResponder",
    "InputRoundsExceeded",
    "LoadedSkill",
    "LoggingHandler",
    "OutputSchemaError",
    "OutputSchemas",
    "Requester",
    "ResourceUpdatedHandler",
    "ResourcesChangedHandler",
    "RootList",
    "RootsHandler",
    "Sampling",
    "SamplingHandler",
    "SkillList",
    "SkillVerificationError",
    "Subscription",
    "TaskCalls",
    "TaskCancelledError",
    "ToolsChangedHandler",
    "UrlHandler",
    "client_responder",
    "input_responder",
    "open_client",
    "stateless_requester",
]
