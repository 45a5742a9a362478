"""``Server``: the registration API and the handshake-era method table.

A :class:`Server` is a description (tools, identity, limits, middleware) that any number
of sessions serve at once; each transport's ``serve_*`` function runs one session per
connection over it. The method registry is built once and shared by all sessions:
handlers find their session through their context, so nothing is copied per session.
``await server.shutdown()`` ends all of them gracefully (:mod:`._shutdown`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Unpack, cast, final, overload

import trio

from trimcp.binding import unstructure
from trimcp.dispatch import McpError, Middlewares, Registry, RequestHandler
from trimcp.nursery import (
    HandlerContext,
    MessageChannel,
    Role,
    Session,
    SessionLimits,
    SessionState,
    open_session,
)
from trimcp.protocol import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    CompleteParams,
    GetPromptParams,
    Icon,
    Implementation,
    InitializeParams,
    InitializeResult,
    PromptsCapability,
    ServerCapabilities,
    SetLevelParams,
    ToolsCapability,
    negotiate_version,
)
from trimcp.store import Store, is_shared, open_store
from trimcp.transports import memory_channel_pair
from trimcp.transports.http import HttpSessionChannel
from trimcp.wire import METHOD_NOT_FOUND

from ._apps import AppRoutes, tool_ui_meta
from ._auth import AuthGate, ScopeTable, guard, principal_identity
from ._completion import CompletionRegistry
from ._context import ToolContext
from ._downgrade import fit_initialize_result
from ._lifespan import Lifespan, Serving, in_serving, run_lifespan
from ._log_bridge import log_routed
from ._pagination import DEFAULT_PAGE_SIZE, page_result, paginate
from ._prompt_routes import PromptRoutes
from ._prompts import PromptRegistry
from ._request_state import RequestStateSealer
from ._resource_routes import ResourceRoutes
from ._resources import ResourceRegistry
from ._shared import SharedServer, shared_channel
from ._shared_tasks import SharedTasks
from ._shutdown import DEFAULT_ABANDON_AFTER, DEFAULT_SHUTDOWN_GRACE, ShutdownControl
from ._skill_routes import SkillRoutes
from ._skills import SkillRegistry
from ._stateless import CachePolicy, EraFront
from ._subscriptions import DEFAULT_MAX_LISTENERS, SubscriptionHub
from ._task_host import TaskHost
from ._task_store import TaskStore
from ._tasks import TaskRunner
from ._tools import RegistrationOptions, ToolOptions, ToolRegistry
from ._workers import DEFAULT_WORKER_THREADS, WorkerThreads

if TYPE_CHECKING:
    from trimcp.auth import ResourceServer

__all__ = ["Server"]

logger = logging.getLogger("trimcp.server")

F = TypeVar("F", bound=Callable[..., Any])


@final
class Server(ResourceRoutes, PromptRoutes, SkillRoutes, AppRoutes):
    """An MCP server.

    Args:
      name: ``serverInfo.name``.
      version: ``serverInfo.version``.
      title: optional display name (2025-06-18+).
      instructions: optional text telling the model how to use this server.
      limits: bounds of each session (see :class:`~trimcp.nursery.SessionLimits`).
      page_size: items per page of every list.
      declare_tools: declare the ``tools`` capability even while no tool is registered
        (for servers that add tools at run time).
      declare_resources: likewise for ``resources`` (see ``ResourceRoutes``).
      declare_prompts: likewise for ``prompts``.
      supported_versions: the protocol revisions served, of both eras (default: all of
        them). ``initialize`` negotiates among the handshake-era ones; a stateless-era
        request naming another version gets ``-32022``.
      request_state: seals the ``requestState`` of stateless-era input rounds (MRTR).
        The default has a random per-process key, replaced by the key ring of a shared
        ``store`` when there is one; servers behind a load balancer without one share
        :class:`RequestStateSealer` keys.
      cache: the ``ttlMs``/``cacheScope`` hints of stateless-era list and read results.
      max_subscriptions: bound on concurrent ``subscriptions/listen`` streams.
      tasks: the task table of tools registered with ``task_support`` (bounds, TTL,
        poll interval, owner binding; see :class:`TaskStore`).
      auth: the OAuth resource server (:class:`trimcp.auth.ResourceServer`, from the
        ``auth`` extra) that authenticates every HTTP and WebSocket request; handlers
        find the verified principal at ``ctx.principal``. Tools, prompts and resources
        may then declare the ``scopes`` they need. Sessions, tasks and sealed input-round
        state belong to the principal that created them (see :mod:`._auth`).
      lifespan: ``lifespan(server)``, an async context manager entered once per serving;
        what it yields is ``ctx.lifespan_state`` in every handler (see
        :mod:`trimcp.server._lifespan`).
      worker_threads: plain-``def`` tools, resources and prompts of this server running
        at once, each in a worker thread (see :mod:`trimcp.server._workers`).
      store: where sessions, SSE events, tasks and subscriptions live: ``"memory"``
        (the default: this process) or a shared store, ``trimcp.store.RedisStore``
        or its ``"redis://..."`` URL (the ``redis`` extra), with which N processes
        behind a load balancer serve the same sessions (:mod:`trimcp.store`), and seal
        request states with its key ring unless ``request_state`` has keys.

    Example::

        server = trimcp.Server("demo", version="1.0")

        @server.tool()
        async def add(a: int, b: int) -> int:
            return a + b
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        limits: SessionLimits | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        declare_tools: bool = False,
        declare_resources: bool = False,
        declare_prompts: bool = False,
        supported_versions: tuple[str, ...] = ALL_VERSIONS,
        request_state: RequestStateSealer | None = None,
        cache: CachePolicy | None = None,
        max_subscriptions: int = DEFAULT_MAX_LISTENERS,
        tasks: TaskStore | None = None,
        auth: ResourceServer | None = None,
        lifespan: Lifespan | None = None,
        worker_threads: int = DEFAULT_WORKER_THREADS,
        store: Store | str | None = None,
    ) -> None:
        self.info = Implementation(
            name=name, version=version, title=title, website_url=website_url, icons=icons
        )
        self.instructions = instructions
        self.limits = limits or SessionLimits()
        self.middlewares = Middlewares()
        self.page_size = page_size
        self.declare_tools = declare_tools
        self.supported_versions = supported_versions
        self.lifespan = lifespan
        self.workers = WorkerThreads(worker_threads)
        self.tools = ToolRegistry(partial(self._list_changed, "tools"), self.workers)
        self.declare_resources = declare_resources
        self.resources = ResourceRegistry(partial(self._list_changed, "resources"), self.workers)
        self.skills = SkillRegistry(partial(self._list_changed, "resources"))
        self.app_views: set[str] = set()
        self.declare_prompts = declare_prompts
        self.prompts = PromptRegistry(partial(self._list_changed, "prompts"), self.workers)
        self.completions = CompletionRegistry(self.prompts)
        self.subscriptions = SubscriptionHub(max_subscriptions)
        self.tasks = tasks if tasks is not None else TaskStore()
        self.auth = auth
        #: The scopes tools, prompts and resources declared (``scopes=`` at registration).
        self.declared_scopes = ScopeTable(self.resources)
        #: What the transports call to authenticate and authorize (``None``: no auth).
        self.auth_gate = AuthGate(auth, self.declared_scopes) if auth is not None else None
        if auth is not None and self.tasks.owner is None:
            self.tasks.owner = principal_identity  # a task is its creator's alone
        #: The task host of each session's serving (where its requests' tasks run).
        self._task_hosts: dict[Session, TaskHost] = {}
        self.task_runner = TaskRunner(
            self.tools,
            self.tasks,
            self.subscriptions.publish,
            self._task_host_of,
            lambda: self.page_size,
        )
        self.era = EraFront(self, request_state or RequestStateSealer(), cache or CachePolicy())
        self._sessions: set[Session] = set()
        self._registry: Registry | None = None
        self.shutdown_control = ShutdownControl(self._sessions, self.subscriptions)
        self.store: Store = open_store(None)
        #: The server's side of a shared store (``None``: state lives here alone).
        self.shared: SharedServer | None = None
        if store is not None:
            self.use_store(store)

    def use_store(self, store: Store | str) -> Store:
        """Keep this server's state in ``store`` (see ``store=``); before it serves."""
        opened = open_store(store)
        if opened is self.store:
            return opened
        if self.shared is not None or self._sessions:
            raise RuntimeError("a server's store is chosen before it serves anything")
        self.store = opened
        if is_shared(opened):
            self.shared = SharedServer(self, opened)
            SharedTasks(opened, self.tasks)  # the task table, mirrored there
            self.task_runner.core.notify_elsewhere = self.shared.notify_session
            self.subscriptions.relay = self.shared.publish
        return opened

    # ------------------------------------------------------------------ registration
    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...
    def tool(  # type: ignore[misc]  # mypy: an F only in the second overload's return
        self, fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
    ) -> Any:
        """Register a function as a tool (decorator, with or without options: see
        :class:`~trimcp.server._tools.ToolOptions`).

        The function is an ``async def``, or a plain ``def`` that runs in a worker thread
        (``worker_threads``). The name defaults to the function's, the description to
        its docstring; the input schema comes from its annotations (every parameter is
        one argument, under its Python name), the output schema from a structured return
        annotation. A parameter annotated :class:`ToolContext` receives the request's
        context. ``task_support`` (``"optional"``/``"required"``) lets it run as a task: a
        2025-11-25 core task when a handshake-era client asks for one
        (:mod:`trimcp.server._core_tasks`), or a task of the stateless-era tasks
        extension, from its start or from ``ctx.begin_task()`` (``task_handoff``;
        :mod:`trimcp.server._tasks`). With authorization, ``scopes`` are the OAuth
        scopes a call needs (403 ``insufficient_scope`` naming them otherwise). ``ui``
        names the tool's MCP Apps view (a ``ui://`` resource registered with
        :meth:`app`) and ``visibility`` who may call it (``"model"``, ``"app"``); see
        :mod:`trimcp.server._apps`.
        """
        support = options.pop("task_support", "forbidden")
        handoff = options.pop("task_handoff", "start")
        scopes = options.pop("scopes", None)
        ui = options.pop("ui", None)
        visibility = options.pop("visibility", None)
        registration = cast("RegistrationOptions", options)  # the server's options are out
        registration["meta"] = tool_ui_meta(registration.get("meta"), ui, visibility)

        def register(func: F) -> F:
            registered = self.tools.add(func, **registration)
            self.task_runner.set_support(registered.tool.name, support, handoff)
            self.declared_scopes.declare("tool", registered.tool.name, scopes)
            return func

        return register(fn) if fn is not None else register

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; live sessions get ``notifications/tools/list_changed``."""
        self.tools.remove(name)

    def capabilities(self, version: str | None = None) -> ServerCapabilities:
        """The capabilities this server declares in an ``initialize`` of ``version``
        (``tasks`` only where that revision has core tasks)."""
        tools = (
            ToolsCapability(list_changed=True) if (len(self.tools) or self.declare_tools) else None
        )
        has_prompts = bool(len(self.prompts) or self.declare_prompts)
        prompts = PromptsCapability(list_changed=True) if has_prompts else None
        completions: dict[str, Any] | None = {} if (has_prompts or len(self.completions)) else None
        return ServerCapabilities(
            tools=tools,
            resources=self.resources_capability(),
            logging={},
            prompts=prompts,
            completions=completions,
            tasks=None if version is None else self.task_runner.core_capability(version),
            extensions={
                **(self.skills_capability() or {}),
                **self.apps_capability(self.tools.ordered()),
            }
            or None,
        )

    def _list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Tell every initialized session that declared ``kind``, and every listen
        subscribed to it, that the list of ``kind`` changed."""
        method = f"notifications/{kind}/list_changed"
        if self.shared is not None:
            self.shared.notify_sessions(method)  # every session once, wherever it is
            self.subscriptions.publish(method)
            return
        for session in list(self._sessions):
            state = session.state
            if state.initialized and getattr(state.server_capabilities, kind) is not None:
                session.notify_soon(method)
        self.subscriptions.publish(method)

    # ------------------------------------------------------------------ method table
    @property
    def registry(self) -> Registry:
        """The method table every session of this server dispatches through."""
        if self._registry is None:
            self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> Registry:
        registry = Registry()
        era = self.era
        initialize = era.wrap("initialize", self._initialize, InitializeParams)
        registry.add_request(
            "initialize", self._guarded("initialize", initialize), cancellable=False
        )
        routes: dict[str, tuple[RequestHandler, type[Any] | None]] = {
            "ping": (_ping, None),
            "server/discover": (self._discover, None),
            "subscriptions/listen": (self._listen, None),
            "tools/list": (self._list_tools, None),
            "tools/call": (self._call_tool, None),
            **self.resource_routes(),
            **self.skill_routes(),
            **self.task_runner.routes(),
            "prompts/list": (self._list_prompts, None),
            "prompts/get": (self._get_prompt, GetPromptParams),
            "completion/complete": (self._complete, CompleteParams),
            "logging/setLevel": (self._set_level, SetLevelParams),
        }
        for method, (handler, params_type) in routes.items():
            route = log_routed(era.wrap(method, handler, params_type))
            registry.add_request(method, self._guarded(method, route))
        registry.add_notification("notifications/initialized", self._initialized)
        return registry

    def _guarded(self, method: str, route: RequestHandler) -> RequestHandler:
        """``route`` behind the authorization guard (principal, scopes), when there is one."""
        return route if self.auth is None else guard(method, route, self.declared_scopes)

    async def _initialize(self, ctx: HandlerContext, params: InitializeParams) -> dict[str, Any]:
        state = ctx.session
        handshake = tuple(v for v in self.supported_versions if v in HANDSHAKE_VERSIONS)
        version = negotiate_version(params.protocol_version, handshake)
        state.protocol_version = version
        state.client_info = params.client_info
        state.client_capabilities = params.capabilities
        state.server_info = self.info
        state.server_capabilities = self.capabilities(version)
        state.instructions = self.instructions
        # The session moves to "initialized" once this answer is written (its lifecycle
        # table; nothing read after initialize is judged before that).
        ctx.session_object.channel.negotiated(version)
        if self.shared is not None:  # on record before the client learns of the session
            await self.shared.remember(ctx.session_object, self.shared.initialize_fields(state))
        result = InitializeResult(
            protocol_version=version,
            capabilities=state.server_capabilities,
            server_info=self.info,
            instructions=self.instructions,
        )
        return fit_initialize_result(version, unstructure(result))

    async def _discover(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.task_runner.advertise(
                unstructure(ctx.session.server_capabilities)
            ),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    async def _listen(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        params = await self.task_runner.listen_params(
            ctx, params if isinstance(params, dict) else {}
        )
        return await self.subscriptions.listen(ctx, params)

    async def _list_tools(self, ctx: HandlerContext, params: Any) -> dict[str, Any]:
        if ctx.session.server_capabilities.tools is None:
            raise McpError(METHOD_NOT_FOUND, "Method not found: tools/list")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        extensions = ctx.session.client_capabilities.extensions
        listed = self.tools_for(extensions, self.tools.ordered())
        page, next_cursor = paginate("tools", listed, cursor, self.page_size)
        version = ctx.session.protocol_version or HANDSHAKE_VERSIONS[-1]
        wire = [
            self.task_runner.listed(
                tool.tool.name, self.tool_wire_for(extensions, tool.to_wire(version)), version
            )
            for tool in page
        ]
        return page_result("tools", wire, next_cursor)

    def _call_tool(self, ctx: HandlerContext, params: Any) -> Awaitable[dict[str, Any]]:
        # A plain function handing back the call's awaitable: no frame of its own while
        # the tool runs.
        if self.task_runner.handles(params):
            return self.task_runner.call_tool(ctx, params)
        return self.tools.call(ToolContext(ctx), params)

    # ------------------------------------------------------------------ serving
    def serving(self) -> AbstractAsyncContextManager[Serving]:
        """One serving lifetime: enters the server's ``lifespan`` (if any) and yields the
        :class:`~trimcp.server._lifespan.Serving` to pass to :meth:`serve_channel`. Every
        ``serve_*`` function does this; a custom transport does it around its sessions."""
        return run_lifespan(self.lifespan, self)

    async def serve_channel(
        self,
        channel: MessageChannel,
        *,
        tasks: TaskHost | None = None,
        serving: Serving | None = None,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one session over ``channel`` until the peer goes away or :meth:`shutdown`.

        ``tasks`` is the task host of the serving this session belongs to (made by
        ``server.tasks.host()`` and run beside its sessions): the tasks its requests
        create run there. Without one they go to ``server.tasks.run``
        (:mod:`trimcp.server._task_host`). Its handlers see ``serving``'s lifespan state
        (:meth:`serving`)."""
        state = SessionState(server_info=self.info)
        replica = shared_channel(channel)
        first_id = 0
        if replica is not None and self.shared is not None:
            self.shared.restore(state, replica)  # a session begun elsewhere goes on here
            first_id = self.shared.first_request_id(replica)
        async with (
            in_serving(serving),
            open_session(
                channel,
                role=Role.SERVER,
                registry=self.registry,
                middlewares=self.middlewares,
                limits=self.limits,
                state=state,
                exempt=partial(self.era.exempt, channel),
                first_request_id=first_id,
            ) as session,
        ):
            self._sessions.add(session)
            if isinstance(channel, HttpSessionChannel):  # lent again only when idle
                channel.session_busy = lambda: session.background_tasks > 0
            if tasks is not None:
                self._task_hosts[session] = tasks
            try:
                self.shutdown_control.admit(session)
                task_status.started(session)
                # A started task status still holds the temporary nursery trio.start
                # made (a cancel scope and its sets): let it go for the session's life.
                del task_status
                await session.wait_closed()
            finally:
                self._sessions.discard(session)
                self._task_hosts.pop(session, None)
                if replica is None:  # a replica ending ends nothing but itself
                    self.tasks.session_ended(session)

    async def _set_level(self, ctx: HandlerContext, params: SetLevelParams) -> dict[str, Any]:
        ctx.session.log_level = params.level.value
        if self.shared is not None:
            await self.shared.remember(ctx.session_object, {"logLevel": params.level.value})
        return {}

    async def _initialized(self, session: Session, _params: Any) -> None:
        """``notifications/initialized`` (the session's lifecycle took note of it): a
        session of a shared store keeps it on record for its other replicas."""
        if self.shared is not None:
            try:
                await self.shared.remember(session, {"ready": "1"})
            except McpError as exc:  # a notification has nobody to tell: noted, not fatal
                logger.warning("session state not saved: %s", exc.message)

    def _task_host_of(self, session: Session) -> TaskHost | None:
        host = self._task_hosts.get(session)
        return host if host is not None else self.tasks.default_host()

    async def shutdown(
        self, *, grace: float = DEFAULT_SHUTDOWN_GRACE, abandon_after: float = DEFAULT_ABANDON_AFTER
    ) -> None:
        """End every ``serve_*`` of this server gracefully: refuse new requests, end the
        listens, give running requests ``grace`` seconds, cancel the rest, close the
        sessions. Returns within ``grace + abandon_after`` (see
        :mod:`trimcp.server._shutdown`)."""
        await self.shutdown_control.shutdown(grace, abandon_after)

    @property
    def sessions(self) -> frozenset[Session]:
        """The sessions being served right now."""
        return frozenset(self._sessions)

    def in_memory(self) -> InMemoryTransport:
        """A client transport that serves this server in-process over a memory pair."""
        return InMemoryTransport(self)


@final
class InMemoryTransport:
    """Connects a client to a :class:`Server` in the same Trio run (no encoding)."""

    def __init__(self, server: Server) -> None:
        self.server = server

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[MessageChannel]:
        client_end, server_end = memory_channel_pair()
        server = self.server
        host = server.tasks.host()  # this connection's serving: its tasks end with it
        async with server.serving() as serving, trio.open_nursery() as nursery:
            await nursery.start(host.run)
            await nursery.start(
                partial(server.serve_channel, tasks=host, serving=serving), server_end
            )
            try:
                yield client_end
            finally:
                nursery.cancel_scope.cancel()


async def _ping(_ctx: HandlerContext, _params: Any) -> dict[str, Any]:
    return {}
