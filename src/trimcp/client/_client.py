"""``Client`` and ``open_client``: the typed client API over any transport.

``open_client`` opens the transport, runs a session in its own nursery, performs the
``initialize`` handshake and yields a :class:`Client`. The client answers the server's
reverse calls with the handlers it was given, and declares exactly the capabilities
those handlers provide: no sampling handler, no ``sampling`` capability, and a
``sampling/createMessage`` from the server is answered ``-32601``.

Cancelling a call is cancelling the scope that awaits it: the session sends
``notifications/cancelled`` for it (shielded, time-bounded) before the scope exits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, final

import trio

from trimcp.binding import structure, structure_hook, unstructure
from trimcp.dispatch import McpError, Middlewares, ProgressCallback, Registry
from trimcp.nursery import (
    Event,
    HandlerContext,
    NoPublicConstructor,
    Role,
    Session,
    SessionLimits,
    SessionState,
    open_session,
    unwrap_single,
)
from trimcp.protocol import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    UI_EXTENSION,
    CallToolResult,
    ClientCapabilities,
    CompleteResult,
    Completion,
    CompletionReference,
    ElicitParams,
    ElicitResult,
    Feature,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListToolsResult,
    LoggingMessageParams,
    Prompt,
    Root,
    Tool,
    declares_tool_tasks,
    supports,
    tasks_required_by,
    ui_client_capability,
)
from trimcp.transports import ClientTransport, TransportKind, transport_kind
from trimcp.wire import INVALID_PARAMS, METHOD_NOT_FOUND, Message, Request

from ._apps import AppCalls
from ._capabilities import fit_client_capabilities
from ._core_tasks import CoreTaskCalls, TaskStatusWatch
from ._elicitation import Elicitation, install_elicitation
from ._era import DEFAULT_DISCOVER_TIMEOUT, EraChoice, EraState, client_middlewares, negotiate
from ._listen import LISTEN_METHOD, ListenCalls, Listeners
from ._mrtr import DEFAULT_MAX_INPUT_ROUNDS, InputRounds
from ._output import OutputSchemas, ToolsChangedHandler, add_tool_handlers
from ._pages import all_pages
from ._resources import (
    ResourceCalls,
    ResourcesChangedHandler,
    ResourceUpdatedHandler,
    add_resource_handlers,
)
from ._roots import RootList, RootsCalls, RootsHandler, install_roots, roots_capability
from ._sampling import Sampling, SamplingHandler, install_sampling
from ._skills import SkillCalls

__all__ = [
    "Client",
    "ElicitationHandler",
    "LoggingHandler",
    "RootsHandler",
    "SamplingHandler",
    "open_client",
]

ElicitationHandler = Callable[[HandlerContext, ElicitParams], Awaitable[ElicitResult]]
LoggingHandler = Callable[[LoggingMessageParams], Awaitable[None]]

#: The log level a client with ``on_log`` asks for until ``set_logging_level``: all.
DEFAULT_LOG_LEVEL = "debug"


@final
class Client(
    ResourceCalls, ListenCalls, RootsCalls, SkillCalls, AppCalls, metaclass=NoPublicConstructor
):
    """A connected, initialized MCP client.

    Made by :func:`open_client`; calling the class raises :class:`TypeError`.
    """

    __trimcp_factory__ = "trimcp.open_client()"

    def __init__(
        self,
        session: Session,
        output_schemas: OutputSchemas | None = None,
        *,
        era: EraState | None = None,
        listeners: Listeners | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        roots: RootList | None = None,
        elicitation: Elicitation | None = None,
        task_watch: TaskStatusWatch | None = None,
    ) -> None:
        self.session = session
        self.era = era or EraState(Implementation(name="", version=""), ClientCapabilities())
        #: 2025-11-25 core tasks: call a tool as a task, follow, fetch, list, cancel.
        self.tasks = CoreTaskCalls(
            session, task_watch or TaskStatusWatch(), stateless=self.era.stateless
        )
        self._listeners = listeners if listeners is not None else Listeners()
        self._rounds = InputRounds(session, max_input_rounds, stateless=self.era.stateless)
        #: What a tools/call or prompts/get is sent with: the session's own request in
        #: the handshake era, which has no input rounds (one layer less per call).
        self._round_trip = self._rounds.request if self.era.stateless else session.request
        if self.era.stateless and hasattr(session.channel, "tool_headers"):
            self._rounds.refresh = self.list_all_tools
        #: The roots this client serves (``None``: it declared no ``roots``).
        self.roots = roots
        #: The elicitation handlers, and the completed URL elicitations they heard of.
        self.elicitation = elicitation
        #: The tools' output schemas ``call_tool`` checks results against.
        self.output_schemas = OutputSchemas() if output_schemas is None else output_schemas
        # Every call_tool reads a CallToolResult: its hook, looked up once.
        self._read_result = structure_hook(CallToolResult)

    # -- what the handshake told us ------------------------------------------------
    @property
    def state(self) -> SessionState:
        return self.session.state

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol revision."""
        assert self.session.state.protocol_version is not None
        return self.session.state.protocol_version

    @property
    def transport_kind(self) -> TransportKind | None:
        """The transport in use: ``"streamable-http"``, ``"http+sse"`` (a 2024-11-05 server,
        by ``legacy_sse`` or the fallback), ``"stdio"``, ``"websocket"`` or ``"memory"``;
        ``None`` for a channel of a custom transport."""
        return transport_kind(self.session.channel)

    @property
    def server_info(self) -> Implementation | None:
        return self.session.state.server_info

    @property
    def instructions(self) -> str | None:
        return self.session.state.instructions

    def _require(self, capability: str) -> None:
        if getattr(self.session.state.server_capabilities, capability) is None:
            raise McpError(METHOD_NOT_FOUND, f"the server does not support {capability}")

    # -- raw ----------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send any request and return its raw result (the escape hatch)."""
        return await self.session.request(method, params, timeout=timeout, on_progress=on_progress)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send any notification."""
        await self.session.notify(method, params)

    async def ping(self) -> None:
        """Check the server is alive: ``ping``, or in the stateless era (which has no
        ``ping``) a ``server/discover`` round trip."""
        await self.session.request("server/discover" if self.era.stateless else "ping")

    # -- tools --------------------------------------------------------------------
    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools, starting at ``cursor``."""
        self._require("tools")
        params = {"cursor": cursor} if cursor is not None else None
        page = structure(await self.session.request("tools/list", params), ListToolsResult)
        page = self.era.accept_tools(self.session, page)
        self.output_schemas.remember(page.tools)
        return page

    async def list_all_tools(self) -> list[Tool]:
        """Every tool, following ``nextCursor`` across all pages."""
        tools = await all_pages("tools/list", self.list_tools, lambda page: page.tools)
        self.output_schemas.complete = True
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
        validate_output: bool = True,
    ) -> CallToolResult:
        """Call a tool. A failing tool is a result with ``is_error``; protocol errors raise.

        With ``validate_output`` (the default) a result is checked against the tool's
        ``outputSchema``; a mismatch raises :class:`~trimcp.client.OutputSchemaError`
        (see :mod:`trimcp.client._output`). A tool the server lists with
        ``execution.taskSupport: "required"`` (2025-11-25) is called as a task and
        followed to its end (:meth:`CoreTaskCalls.wait`, bounded by ``timeout``)."""
        # The common call tests synchronously what needs a wait: a listing to learn
        # task support (2025-11-25 servers declaring task-augmented calls) or an output
        # schema, so that it awaits nothing but the request itself. (Inline, without
        # _require and the properties: every call passes here.)
        capabilities = self.session.state.server_capabilities
        if capabilities.tools is None:
            self._require("tools")
        tasks = (
            capabilities.tasks is not None
            and self.era.version is None
            and declares_tool_tasks(capabilities.tasks)
        )
        if tasks and await self._task_required(name):
            task = await self.tasks.call_tool(name, arguments)
            result = await self.tasks.wait(task, timeout=timeout)
        else:
            params: dict[str, Any] = {"name": name}
            if arguments is not None:
                params["arguments"] = arguments
            try:
                raw = await self._round_trip(
                    "tools/call", params, timeout=timeout, on_progress=on_progress
                )
            except McpError as exc:
                if not (self.era.stateless and tasks_required_by(exc)):
                    raise
                result = await self._call_as_extension_task(name, arguments, timeout)
            else:
                result = self._read_result(raw)
        if validate_output and self.output_schemas.may_check(name, result):
            await self.output_schemas.verify(
                self.protocol_version, name, result, self.list_all_tools
            )
        return result

    async def _call_as_extension_task(
        self, name: str, arguments: dict[str, Any] | None, timeout: float | None
    ) -> CallToolResult:
        """Call ``name`` again declaring the tasks extension (the server said it needs
        it) and follow the task, answering its input with this client's handlers."""
        from ._tasks import TaskCalls, client_responder, stateless_requester

        calls = TaskCalls(stateless_requester(self), respond=client_responder(self))
        return await calls.call_tool_result(name, arguments, timeout=timeout)

    async def _task_required(self, name: str) -> bool:
        """Whether tool ``name`` must be called as a 2025-11-25 core task: the server
        declared task-augmented ``tools/call`` and lists the tool as ``required``
        (listing the tools first, once, when the tool is not known yet)."""
        if self.era.stateless or not declares_tool_tasks(self.state.server_capabilities.tasks):
            return False
        schemas = self.output_schemas
        if not schemas.known(name) and not schemas.complete:
            try:
                await self.list_all_tools()
            except McpError:
                schemas.complete = True  # no listing: the call goes as it is
        return schemas.task_support(name) == "required"

    # -- prompts and completion -----------------------------------------------------
    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of prompts, starting at ``cursor``."""
        self._require("prompts")
        params = {"cursor": cursor} if cursor is not None else None
        return structure(await self.session.request("prompts/list", params), ListPromptsResult)

    async def list_all_prompts(self) -> list[Prompt]:
        """Every prompt, following ``nextCursor`` across all pages."""
        return await all_pages("prompts/list", self.list_prompts, lambda page: page.prompts)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Render a prompt; an unknown prompt or a missing argument raises ``-32602``."""
        self._require("prompts")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return structure(await self._round_trip("prompts/get", params), GetPromptResult)

    async def complete(
        self,
        ref: CompletionReference,
        argument_name: str,
        value: str,
        context_arguments: dict[str, str] | None = None,
    ) -> Completion:
        """Ask for completions of ``argument_name`` of a prompt or resource template."""
        if supports(self.protocol_version, Feature.COMPLETIONS):
            # 2024-11-05 has the method but no capability announcing it.
            self._require("completions")
        params: dict[str, Any] = {
            "ref": unstructure(ref),
            "argument": {"name": argument_name, "value": value},
        }
        if context_arguments is not None:
            params["context"] = {"arguments": context_arguments}
        raw = await self.session.request("completion/complete", params)
        return structure(raw, CompleteResult).completion

    async def set_logging_level(self, level: str) -> None:
        """Ask the server to send log messages at ``level`` and above."""
        self._require("logging")
        if self.era.stateless:  # the level travels in each request's _meta
            self.era.log_level = level
            await trio.lowlevel.checkpoint()
            return
        await self.session.request("logging/setLevel", {"level": level})


def _client_registry(on_log: LoggingHandler | None) -> Registry:
    registry = Registry()

    async def ping(_ctx: HandlerContext, _params: Any) -> dict[str, Any]:
        return {}

    registry.add_request("ping", ping)
    if on_log is not None:
        log = on_log

        async def message(_session: Session, params: dict[str, Any] | None) -> None:
            await log(structure(params or {}, LoggingMessageParams))

        registry.add_notification("notifications/message", message)
    return registry


async def _initialize(
    session: Session, info: Implementation, capabilities: ClientCapabilities, version: str
) -> None:
    """The handshake; each step moves the session's lifecycle (``_lifecycle``)."""
    lifecycle = session.lifecycle
    lifecycle.handle(Event.INITIALIZE)
    try:
        raw = await session.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": unstructure(capabilities),
                "clientInfo": unstructure(info),
            },
        )
        result = structure(raw, InitializeResult)
        if result.protocol_version not in HANDSHAKE_VERSIONS:
            raise McpError(
                INVALID_PARAMS,
                f"the server chose protocol version {result.protocol_version!r}, "
                "which this client does not support",
            )
    except BaseException:
        lifecycle.handle(Event.INITIALIZE_FAILED)
        raise
    state = session.state
    state.protocol_version = result.protocol_version
    state.server_info = result.server_info
    state.server_capabilities = result.capabilities
    state.instructions = result.instructions
    lifecycle.handle(Event.INITIALIZE_ANSWERED)
    session.channel.negotiated(result.protocol_version)
    await session.notify("notifications/initialized")
    lifecycle.handle(Event.INITIALIZED)


@asynccontextmanager
async def open_client(
    transport: ClientTransport,
    *,
    name: str = "trimcp-client",
    version: str = "0.1.0",
    protocol_version: str = LATEST_HANDSHAKE_VERSION,
    sampling: SamplingHandler | Sampling | None = None,
    elicitation: ElicitationHandler | Elicitation | None = None,
    roots: RootsHandler | Sequence[Root] | None = None,
    on_log: LoggingHandler | None = None,
    on_resource_updated: ResourceUpdatedHandler | None = None,
    on_resources_list_changed: ResourcesChangedHandler | None = None,
    on_tools_list_changed: ToolsChangedHandler | None = None,
    middlewares: Middlewares | None = None,
    limits: SessionLimits | None = None,
    era: EraChoice = "auto",
    discover_timeout: float = DEFAULT_DISCOVER_TIMEOUT,
    max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
    apps: bool = False,
) -> AsyncIterator[Client]:
    """Connect, initialize, and yield a :class:`Client` for the ``async with`` block.

    Args:
      transport: where the server is (``trimcp.stdio_command(...)``,
        ``server.in_memory()``, ...).
      protocol_version: the revision to ask for; the server may choose an older one.
      sampling: answers the server's ``sampling/createMessage`` and declares the
        ``sampling`` capability; a handler, or a :class:`Sampling` (tools); see
        :mod:`trimcp.client._sampling`.
      elicitation: answers ``elicitation/create`` and declares ``elicitation``; a
        handler, or an :class:`Elicitation` (form and URL modes, defaults); see
        :mod:`trimcp.client._elicitation`.
      roots: answers ``roots/list`` and declares ``roots``; a handler or a list of
        roots; see :mod:`trimcp.client._roots`.
      on_log: receives the server's ``notifications/message``, at every level until
        :meth:`Client.set_logging_level` says otherwise, in either era (stateless-era
        requests then carry ``logLevel: "debug"``).
      on_resource_updated: receives the server's ``notifications/resources/updated``.
      on_resources_list_changed: receives ``notifications/resources/list_changed``.
      era: ``"auto"`` (the default: probe with ``server/discover``, fall back to
        ``initialize``, as the dual-era client of the 2026-07-28 versioning page does),
        ``"stateless"`` (no fallback) or ``"handshake"`` (``initialize`` at once). Pick
        ``"handshake"`` for what only sessions have: resource subscriptions,
        ``logging/setLevel``, notifications from work detached from its request, live
        reverse calls; see ``trimcp.client._era``.
      discover_timeout: seconds the ``server/discover`` probe waits for an answer.
      max_input_rounds: input rounds (MRTR) one call may take; see ``_mrtr``.
      on_tools_list_changed: receives ``notifications/tools/list_changed`` (the cached
        output schemas are forgotten first).
      apps: declare MCP Apps (``io.modelcontextprotocol/ui`` with the app MIME type):
        this client renders app views, so servers list their tools' UI metadata; see
        :mod:`trimcp.client._apps`.

    Callbacks (``on_log``, the ``on_*_changed`` and ``on_resource_updated`` handlers,
    elicitation's ``on_complete``, each call's ``on_progress``) run off the session's
    reader, in order per kind, so they may call back into this client and wait for
    answers (``on_tools_list_changed`` -> ``await client.list_all_tools()``); see
    :mod:`trimcp.nursery._callbacks` for their bounds and what happens at the end.
    """
    info = Implementation(name=name, version=version)
    registry = _client_registry(on_log)
    add_resource_handlers(registry, on_resource_updated, on_resources_list_changed)
    output_schemas = OutputSchemas()
    add_tool_handlers(registry, output_schemas, on_tools_list_changed)
    task_watch = TaskStatusWatch()
    task_watch.install(registry)
    elicit = install_elicitation(registry, elicitation)
    root_list = install_roots(registry, roots)
    capabilities = fit_client_capabilities(
        protocol_version,
        ClientCapabilities(
            sampling=install_sampling(registry, sampling),
            elicitation=elicit.capability() if elicit is not None else None,
            roots=roots_capability(root_list),
            extensions={UI_EXTENSION: ui_client_capability()} if apps else None,
        ),
    )
    era_state = EraState(info, capabilities)
    if on_log is not None:
        # The stateless era sends no log message to a request without a level; a client
        # that listens gets every level, as a handshake-era server sends by default.
        era_state.log_level = DEFAULT_LOG_LEVEL
    listeners = Listeners()
    stack = client_middlewares(middlewares)
    listeners.attach(stack.client_recv)

    def prepare(message: Message) -> Message:
        # Every message passes here: the common one (no listen request, handshake era)
        # is told apart inline, without a call to either.
        if message.__class__ is Request and message.method == LISTEN_METHOD:
            listeners.bind(message)
        return era_state.stamp(message) if era_state.version is not None else message

    with unwrap_single():
        async with (
            transport.connect() as channel,
            open_session(
                channel,
                role=Role.CLIENT,
                registry=registry,
                middlewares=stack,
                prepare=prepare,
                limits=limits,
                state=SessionState(client_info=info, client_capabilities=capabilities),
            ) as session,
        ):
            if not await negotiate(
                session,
                era_state,
                era,
                partial(_initialize, session, info, capabilities, protocol_version),
                timeout=discover_timeout,
            ):
                # The handshake era stamps nothing and has no listen requests: every
                # message may skip the hook from now on.
                session.set_prepare(None)
            yield Client._create(
                session,
                output_schemas,
                era=era_state,
                listeners=listeners,
                max_input_rounds=max_input_rounds,
                roots=root_list,
                elicitation=elicit,
                task_watch=task_watch,
            )
