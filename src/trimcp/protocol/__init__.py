"""The MCP vocabulary: revisions and features, method names, and the attrs classes of the
params, results, content blocks and capabilities the engine speaks.

Pure data: no I/O, no trio, no converter. :mod:`trimcp.binding` turns these classes into
wire JSON and back.
"""

from ._apps import APP_MIME_TYPE as APP_MIME_TYPE
from ._apps import LEGACY_RESOURCE_URI_META as LEGACY_RESOURCE_URI_META
from ._apps import UI_EXTENSION as UI_EXTENSION
from ._apps import UI_SCHEME as UI_SCHEME
from ._apps import VISIBILITIES as VISIBILITIES
from ._apps import supports_apps as supports_apps
from ._apps import tool_ui_uri as tool_ui_uri
from ._apps import tool_visibility as tool_visibility
from ._apps import ui_client_capability as ui_client_capability
from ._capabilities import ClientCapabilities as ClientCapabilities
from ._capabilities import ElicitationCapability as ElicitationCapability
from ._capabilities import PromptsCapability as PromptsCapability
from ._capabilities import ResourcesCapability as ResourcesCapability
from ._capabilities import RootsCapability as RootsCapability
from ._capabilities import SamplingCapability as SamplingCapability
from ._capabilities import ServerCapabilities as ServerCapabilities
from ._capabilities import ToolsCapability as ToolsCapability
from ._common import DESCRIPTION as DESCRIPTION
from ._common import EXTRA_KEYS as EXTRA_KEYS
from ._common import WIRE_NAME as WIRE_NAME
from ._common import Cursor as Cursor
from ._common import Meta as Meta
from ._common import ProgressToken as ProgressToken
from ._common import RequestId as RequestId
from ._common import Role as Role
from ._completion import MAX_COMPLETION_VALUES as MAX_COMPLETION_VALUES
from ._completion import CompleteParams as CompleteParams
from ._completion import CompleteResult as CompleteResult
from ._completion import Completion as Completion
from ._completion import CompletionArgument as CompletionArgument
from ._completion import CompletionContext as CompletionContext
from ._completion import CompletionReference as CompletionReference
from ._completion import PromptReference as PromptReference
from ._completion import ResourceTemplateReference as ResourceTemplateReference
from ._content import AudioContent as AudioContent
from ._content import BlobResourceContents as BlobResourceContents
from ._content import ContentBlock as ContentBlock
from ._content import EmbeddedResource as EmbeddedResource
from ._content import ImageContent as ImageContent
from ._content import ResourceContents as ResourceContents
from ._content import ResourceLink as ResourceLink
from ._content import TextContent as TextContent
from ._content import TextResourceContents as TextResourceContents
from ._core_tasks import CORE_TASK_METHODS as CORE_TASK_METHODS
from ._core_tasks import RELATED_TASK_META as RELATED_TASK_META
from ._core_tasks import TASK_STATUS_NOTIFICATION as TASK_STATUS_NOTIFICATION
from ._core_tasks import CoreTask as CoreTask
from ._core_tasks import ListTasksResult as ListTasksResult
from ._core_tasks import core_tasks_capability as core_tasks_capability
from ._core_tasks import declares_tool_tasks as declares_tool_tasks
from ._core_tasks import related_task_meta as related_task_meta
from ._elicitation import ElicitationCompleteParams as ElicitationCompleteParams
from ._elicitation import ElicitParams as ElicitParams
from ._elicitation import ElicitRequestParams as ElicitRequestParams
from ._elicitation import ElicitResult as ElicitResult
from ._elicitation import ElicitUrlParams as ElicitUrlParams
from ._lifecycle import InitializeParams as InitializeParams
from ._lifecycle import InitializeResult as InitializeResult
from ._logging import LoggingLevel as LoggingLevel
from ._logging import LoggingMessageParams as LoggingMessageParams
from ._logging import SetLevelParams as SetLevelParams
from ._metadata import Annotations as Annotations
from ._metadata import Icon as Icon
from ._metadata import Implementation as Implementation
from ._methods import Method as Method
from ._methods import NotificationMethod as NotificationMethod
from ._methods import method_available as method_available
from ._modern import CLIENT_CAPABILITIES_META as CLIENT_CAPABILITIES_META
from ._modern import CLIENT_INFO_META as CLIENT_INFO_META
from ._modern import LOG_LEVEL_META as LOG_LEVEL_META
from ._modern import PROTOCOL_VERSION_META as PROTOCOL_VERSION_META
from ._modern import SERVER_INFO_META as SERVER_INFO_META
from ._modern import SUBSCRIPTION_ID_META as SUBSCRIPTION_ID_META
from ._modern import TRACE_META_KEYS as TRACE_META_KEYS
from ._modern import MetaProblem as MetaProblem
from ._modern import RequestMeta as RequestMeta
from ._modern import is_stateless_request as is_stateless_request
from ._modern import read_request_meta as read_request_meta
from ._modern import unsupported_version as unsupported_version
from ._notifications import CancelledNotificationParams as CancelledNotificationParams
from ._notifications import ProgressNotificationParams as ProgressNotificationParams
from ._prompts import GetPromptParams as GetPromptParams
from ._prompts import GetPromptResult as GetPromptResult
from ._prompts import ListPromptsResult as ListPromptsResult
from ._prompts import Prompt as Prompt
from ._prompts import PromptArgument as PromptArgument
from ._prompts import PromptMessage as PromptMessage
from ._requests import PaginatedParams as PaginatedParams
from ._requests import TaskMetadata as TaskMetadata
from ._resources import ListResourcesResult as ListResourcesResult
from ._resources import ListResourceTemplatesResult as ListResourceTemplatesResult
from ._resources import ReadResourceParams as ReadResourceParams
from ._resources import ReadResourceResult as ReadResourceResult
from ._resources import Resource as Resource
from ._resources import ResourceTemplate as ResourceTemplate
from ._resources import ResourceUpdatedParams as ResourceUpdatedParams
from ._resources import SubscribeParams as SubscribeParams
from ._revisions import ALL_VERSIONS as ALL_VERSIONS
from ._revisions import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
from ._revisions import LATEST_HANDSHAKE_VERSION as LATEST_HANDSHAKE_VERSION
from ._revisions import LATEST_VERSION as LATEST_VERSION
from ._revisions import STATELESS_VERSIONS as STATELESS_VERSIONS
from ._revisions import Era as Era
from ._revisions import Feature as Feature
from ._revisions import era_of as era_of
from ._revisions import features_of as features_of
from ._revisions import negotiate_version as negotiate_version
from ._revisions import supports as supports
from ._roots import ListRootsResult as ListRootsResult
from ._roots import Root as Root
from ._sampling import CreateMessageParams as CreateMessageParams
from ._sampling import CreateMessageResult as CreateMessageResult
from ._sampling import ModelHint as ModelHint
from ._sampling import ModelPreferences as ModelPreferences
from ._sampling import SamplingContent as SamplingContent
from ._sampling import SamplingMessage as SamplingMessage
from ._sampling import ToolChoice as ToolChoice
from ._sampling import ToolResultContent as ToolResultContent
from ._sampling import ToolUseContent as ToolUseContent
from ._sampling_tools import TOOL_CHOICE_MODES as TOOL_CHOICE_MODES
from ._sampling_tools import blocks_of as blocks_of
from ._sampling_tools import tool_turn_problem as tool_turn_problem
from ._sampling_tools import uses_sampling_tools as uses_sampling_tools
from ._skills import DIRECTORY_MIME_TYPE as DIRECTORY_MIME_TYPE
from ._skills import DYNAMIC_RESOURCES as DYNAMIC_RESOURCES
from ._skills import MAX_SKILL_BYTES as MAX_SKILL_BYTES
from ._skills import MAX_SKILL_RESOURCES as MAX_SKILL_RESOURCES
from ._skills import SKILL_FILE as SKILL_FILE
from ._skills import SKILL_MIME_TYPE as SKILL_MIME_TYPE
from ._skills import SKILLS_EXTENSION as SKILLS_EXTENSION
from ._skills import FrontmatterError as FrontmatterError
from ._skills import SkillEntry as SkillEntry
from ._skills import SkillEntryError as SkillEntryError
from ._skills import SkillFile as SkillFile
from ._skills import parse_frontmatter as parse_frontmatter
from ._skills import same_json as same_json
from ._skills import sha256_digest as sha256_digest
from ._skills import skill_name_of as skill_name_of
from ._skills import skill_root_of as skill_root_of
from ._skills import valid_skill_name as valid_skill_name
from ._tasks import TASK_METHODS as TASK_METHODS
from ._tasks import TASK_RESULT_TYPE as TASK_RESULT_TYPE
from ._tasks import TASKS_EXTENSION as TASKS_EXTENSION
from ._tasks import TERMINAL_STATUSES as TERMINAL_STATUSES
from ._tasks import DetailedTask as DetailedTask
from ._tasks import Task as Task
from ._tasks import TaskStatus as TaskStatus
from ._tasks import TaskSupport as TaskSupport
from ._tasks import declares_tasks as declares_tasks
from ._tasks import tasks_required_by as tasks_required_by
from ._tasks import tasks_required_data as tasks_required_data
from ._tools import CallToolParams as CallToolParams
from ._tools import CallToolResult as CallToolResult
from ._tools import ListToolsResult as ListToolsResult
from ._tools import Tool as Tool
from ._tools import ToolAnnotations as ToolAnnotations
from ._tools import ToolExecution as ToolExecution

__all__ = [
    "ALL_VERSIONS",
    "APP_MIME_TYPE",
    "CLIENT_CAPABILITIES_META",
    "CLIENT_INFO_META",
    "CORE_TASK_METHODS",
    "DESCRIPTION",
    "DIRECTORY_MIME_TYPE",
    "DYNAMIC_RESOURCES",
    "EXTRA_KEYS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "LEGACY_RESOURCE_URI_META",
    "LOG_LEVEL_META",
    "MAX_COMPLETION_VALUES",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_RESOURCES",
    "PROTOCOL_VERSION_META",
    "RELATED_TASK_META",
    "SERVER_INFO_META",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "SKILL_MIME_TYPE",
    "STATELESS_VERSIONS",
    "SUBSCRIPTION_ID_META",
    "TASKS_EXTENSION",
    "TASK_METHODS",
    "TASK_RESULT_TYPE",
    "TASK_STATUS_NOTIFICATION",
    "TERMINAL_STATUSES",
    "TOOL_CHOICE_MODES",
    "TRACE_META_KEYS",
    "UI_EXTENSION",
    "UI_SCHEME",
    "VISIBILITIES",
    "WIRE_NAME",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CallToolParams",
    "CallToolResult",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "CompleteParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "ContentBlock",
    "CoreTask",
    "CreateMessageParams",
    "CreateMessageResult",
    "Cursor",
    "DetailedTask",
    "ElicitParams",
    "ElicitRequestParams",
    "ElicitResult",
    "ElicitUrlParams",
    "ElicitationCapability",
    "ElicitationCompleteParams",
    "EmbeddedResource",
    "Era",
    "Feature",
    "FrontmatterError",
    "GetPromptParams",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "InitializeParams",
    "InitializeResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListTasksResult",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageParams",
    "Meta",
    "MetaProblem",
    "Method",
    "ModelHint",
    "ModelPreferences",
    "NotificationMethod",
    "PaginatedParams",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "PromptsCapability",
    "ReadResourceParams",
    "ReadResourceResult",
    "RequestId",
    "RequestMeta",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedParams",
    "ResourcesCapability",
    "Role",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "SamplingContent",
    "SamplingMessage",
    "ServerCapabilities",
    "SetLevelParams",
    "SkillEntry",
    "SkillEntryError",
    "SkillFile",
    "SubscribeParams",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskSupport",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolExecution",
    "ToolResultContent",
    "ToolUseContent",
    "ToolsCapability",
    "blocks_of",
    "core_tasks_capability",
    "declares_tasks",
    "declares_tool_tasks",
    "era_of",
    "features_of",
    "is_stateless_request",
    "method_available",
    "negotiate_version",
    "parse_frontmatter",
    "read_request_meta",
    "related_task_meta",
    "same_json",
    "sha256_digest",
    "skill_name_of",
    "skill_root_of",
    "supports",
    "supports_apps",
    "tasks_required_by",
    "tasks_required_data",
    "tool_turn_problem",
    "tool_ui_uri",
    "tool_visibility",
    "ui_client_capability",
    "unsupported_version",
    "uses_sampling_tools",
    "valid_skill_name",
]
