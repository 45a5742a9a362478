"""Method and notification names of every known revision, and which revision has which.

Names are :class:`enum.StrEnum` members, so they *are* strings: they compare and hash equal
to the raw method string, so ``registry[Method.TOOLS_CALL]`` and ``registry["tools/call"]``
find the same entry, and they serialise as plain JSON strings.

Availability is not a second table: each name is gated by :class:`Feature` rows of the
revision table (any one of them suffices), or by nothing when it exists in every revision.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from ._revisions import Feature, features_of

__all__ = ["Method", "NotificationMethod", "method_available"]


class Method(enum.StrEnum):
    """Request method names (client→server and server→client)."""

    INITIALIZE = "initialize"
    PING = "ping"
    TOOLS_LIST = "tools/list"
    TOOLS_CALL = "tools/call"
    RESOURCES_LIST = "resources/list"
    RESOURCES_TEMPLATES_LIST = "resources/templates/list"
    RESOURCES_READ = "resources/read"
    RESOURCES_SUBSCRIBE = "resources/subscribe"
    RESOURCES_UNSUBSCRIBE = "resources/unsubscribe"
    PROMPTS_LIST = "prompts/list"
    PROMPTS_GET = "prompts/get"
    COMPLETION_COMPLETE = "completion/complete"
    LOGGING_SET_LEVEL = "logging/setLevel"
    SAMPLING_CREATE_MESSAGE = "sampling/createMessage"
    ELICITATION_CREATE = "elicitation/create"
    ROOTS_LIST = "roots/list"
    TASKS_GET = "tasks/get"
    TASKS_RESULT = "tasks/result"
    TASKS_LIST = "tasks/list"
    TASKS_CANCEL = "tasks/cancel"
    TASKS_UPDATE = "tasks/update"
    SERVER_DISCOVER = "server/discover"
    SUBSCRIPTIONS_LISTEN = "subscriptions/listen"


class NotificationMethod(enum.StrEnum):
    """Notification method names."""

    INITIALIZED = "notifications/initialized"
    CANCELLED = "notifications/cancelled"
    PROGRESS = "notifications/progress"
    MESSAGE = "notifications/message"
    TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
    RESOURCES_LIST_CHANGED = "notifications/resources/list_changed"
    RESOURCES_UPDATED = "notifications/resources/updated"
    PROMPTS_LIST_CHANGED = "notifications/prompts/list_changed"
    ROOTS_LIST_CHANGED = "notifications/roots/list_changed"
    ELICITATION_COMPLETE = "notifications/elicitation/complete"
    TASKS_STATUS = "notifications/tasks/status"
    TASKS = "notifications/tasks"
    SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


_F = Feature
# Names absent from this map exist in every revision.
_GATES: Final[Mapping[str, tuple[Feature, ...]]] = {
    Method.INITIALIZE: (_F.INITIALIZE,),
    Method.PING: (_F.PING,),
    Method.RESOURCES_SUBSCRIBE: (_F.RESOURCE_SUBSCRIBE,),
    Method.RESOURCES_UNSUBSCRIBE: (_F.RESOURCE_SUBSCRIBE,),
    Method.LOGGING_SET_LEVEL: (_F.LOGGING_SET_LEVEL,),
    Method.ELICITATION_CREATE: (_F.ELICITATION,),
    Method.TASKS_GET: (_F.TASKS, _F.TASKS_EXTENSION),
    Method.TASKS_RESULT: (_F.TASKS,),
    Method.TASKS_LIST: (_F.TASKS,),
    Method.TASKS_CANCEL: (_F.TASKS, _F.TASKS_EXTENSION),
    Method.TASKS_UPDATE: (_F.TASKS_EXTENSION,),
    Method.SERVER_DISCOVER: (_F.SERVER_DISCOVER,),
    Method.SUBSCRIPTIONS_LISTEN: (_F.SUBSCRIPTIONS_LISTEN,),
    NotificationMethod.INITIALIZED: (_F.INITIALIZE,),
    NotificationMethod.ROOTS_LIST_CHANGED: (_F.ROOTS_LIST_CHANGED,),
    NotificationMethod.ELICITATION_COMPLETE: (_F.ELICITATION_COMPLETE,),
    NotificationMethod.TASKS_STATUS: (_F.TASKS,),
    NotificationMethod.TASKS: (_F.TASKS_EXTENSION,),
    NotificationMethod.SUBSCRIPTIONS_ACKNOWLEDGED: (_F.SUBSCRIPTIONS_LISTEN,),
}


def method_available(version: str, method: str) -> bool:
    """Whether request or notification *method* exists in protocol *version*.

    Unknown method names are ``False``. Methods of the tasks extension
    (``tasks/update``, ``notifications/tasks``) count as available in the stateless era;
    whether a given request may use them also depends on the negotiated extension.

    Raises:
        ValueError: *version* is unknown.
    """
    features = features_of(version)
    gates = _GATES.get(method)
    if gates is None:
        return method in _ALL_NAMES
    return any(gate in features for gate in gates)


_ALL_NAMES: Final = frozenset(Method) | frozenset(NotificationMethod)
