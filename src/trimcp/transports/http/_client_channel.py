"""The Streamable HTTP client channel: one POST per message, answers from three places.

Theory of operation
-------------------
``send(message)`` POSTs the message as a task of the channel's nursery and returns once
the request is written (``nursery.start``), so a caller that gives up can still send
``notifications/cancelled``. A plain request goes through ``send_nowait`` instead: its
caller goes straight to waiting for the answer (one scheduler step less per call), a
failure to write it fails the call, and a ``notifications/cancelled`` for it while it is
not written yet only stops its POST (the server never saw it). The task then reads the
answer:

* ``202``: nothing to read. A 2xx for a notification or response is simply accepted.
* ``200 application/json``: the message(s) in the body go to ``receive()``.
* ``200 text/event-stream``: every SSE ``message`` event goes to ``receive()``, decoded
  by its own :class:`~trimcp.wire.SSEDecoder` (which tracks that stream's last event id
  and ``retry``). A stream that ends before the request's answer is resumed with
  ``GET`` + ``Last-Event-ID`` after ``retry`` ms (see ``_client_sse``); one that carried no
  event id cannot be, and its request fails.

The session id comes from ``Mcp-Session-Id`` on the ``initialize`` response and goes on
every later request, like ``MCP-Protocol-Version`` once :meth:`negotiated` was called.
Once ``notifications/initialized`` is accepted the standalone GET stream opens in the
background (not for stateless-era revisions, nor with ``listen=False``).

Failures, and who they reach:

* An HTTP error status on a request's POST fails exactly that request: its caller gets an
  :class:`~trimcp.McpError` with the server's JSON-RPC error when the body holds one,
  otherwise ``HTTP <status> <reason>``, with ``data={"httpStatus": status}``. On a
  notification or response it is logged (there is nobody to tell).
* ``401``/``403`` with an authorization layer configured (``auth``): the layer answers
  the challenge and the request is sent again with fresh credentials, at most
  ``max_auth_retries`` times; what it cannot cure fails the request (``_client_gate``).
* ``404`` while a session is open means the server ended the session. With
  ``reinitialize`` (the default) the channel starts a new session by itself and re-sends
  the request once; calls in flight on the old session fail with an
  :class:`~trimcp.McpError` saying it expired (see ``_client_reinit``). Otherwise, or
  past its bound, every waiting call fails at once with
  :class:`~trimcp.ConnectionClosedError` saying so, and the channel ends.
* A failure below HTTP (refused, reset, truncated, malformed) that resumption cannot cure
  breaks the transport: every waiting call fails at once, and the channel ends.

Every message read is queued for ``receive()`` in a bounded buffer (``max_queued``): when
it is full, the stream readers wait.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, final

import attrs
import h11
import trio

from trimcp.dispatch import connection_closed_error
from trimcp.protocol import HANDSHAKE_VERSIONS
from trimcp.wire import (
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    SSEDecoder,
    encode,
)

from ._client_answers import ERROR_BODY_LIMIT, Bounce, PostAnswers
from ._client_auth import HttpAuthSession
from ._client_calls import Breakable, Call, GivenUp, Started, cancelled_id, describe
from ._client_conn import (
    ConnectionPool,
    Headers,
    HttpTransportError,
    ResponseTooLarge,
)
from ._client_errors import session_id_in
from ._client_gate import RETRY, AuthGate
from ._client_hooks import HttpRequestInfo, extra_headers
from ._client_legacy import LegacySse, LegacySseError
from ._client_modern import modern_headers, post_headers, transport_headers
from ._client_params import ToolHeaderTable
from ._client_reinit import Renewal, session_expired_error
from ._client_sse import SseReader

if TYPE_CHECKING:
    from ._client import StreamableHttp

__all__ = ["HttpClientChannel"]

logger = logging.getLogger("trimcp.http.client")


@final
class HttpClientChannel(PostAnswers):
    """One client session over Streamable HTTP; a :class:`~trimcp.nursery.MessageChannel`.

    Made by :meth:`StreamableHttp.connect`; see the module doc.
    """

    def __init__(
        self, config: StreamableHttp, pool: ConnectionPool, auth: HttpAuthSession | None = None
    ) -> None:
        self.config = config
        self.pool = pool
        #: The authorization hooks (``None`` without ``auth``; see ``_client_gate``).
        self.gate = None if auth is None else AuthGate(auth, config.max_auth_retries)
        self._queue_in, self._queue_out = trio.open_memory_channel[Message](config.max_queued)
        self._nursery: trio.Nursery | None = None
        self._outstanding: dict[RequestId, Call] = {}
        #: The tasks waiting in ``send``, and what they wait on (see interrupt_send).
        self._sending: dict[trio.lowlevel.Task, Started | Breakable] = {}
        self._backlog: deque[Message] = deque()
        self._closed = False
        self._listening = False
        self._listen_scope: trio.CancelScope | None = None
        #: While the standalone GET stream opens (set, and dropped, once it is open or
        #: will not be): requests wait for it, so that what the server sends on it for
        #: them has somewhere to go.
        self._listen_ready: trio.Event | None = None
        #: The session id the server issued, if any.
        self.session_id: str | None = None
        #: The negotiated revision (sent as ``MCP-Protocol-Version``).
        self.protocol_version: str | None = None
        #: Why the channel broke (``None`` while it works).
        self.failure: str | None = None
        #: True once the server answered 404 for the session.
        self.session_expired = False
        self.sse = SseReader(self)
        self.renewal = Renewal(self)
        #: The 2024-11-05 HTTP+SSE mode, used once a server turns out to speak only it.
        self.legacy = LegacySse(self)
        self._refusal: ErrorObject | None = None
        #: ``x-mcp-header`` annotations of the listed tools, for ``Mcp-Param-*`` headers.
        self.tool_headers = ToolHeaderTable()

    # ------------------------------------------------------------------ lifecycle
    async def _run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the nursery of the channel's own tasks (POSTs, streams) until it ends.

        Its own, not the caller's: breaking the channel cancels these tasks only, and
        the session above learns of it from ``receive()`` (every waiting call fails
        with :class:`~trimcp.ConnectionClosedError`), so the code using the client is
        never cancelled from under it."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def _stop(self) -> None:
        self._closed = True
        self._queue_in.close()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    async def _terminate(self) -> None:
        """DELETE the session (the caller bounds the time); errors are only logged."""
        if self.session_id is None or self.session_expired:
            return
        try:
            async with self.pool.checkout() as conn:
                await conn.send_request(
                    "DELETE", self.pool.origin, await self.headers("DELETE"), None
                )
                response = await conn.receive_response()
                await conn.read_body(ERROR_BODY_LIMIT)
            logger.debug("DELETE of the session: HTTP %d", response.status_code)
        except (HttpTransportError, ResponseTooLarge, trio.ClosedResourceError, ValueError) as exc:
            logger.debug("DELETE of the session failed: %s", exc)

    # ------------------------------------------------------------------ MessageChannel
    async def send(self, message: Message, *, related: RequestId | None = None) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the HTTP channel is closed")
        if self.failure is not None:
            raise trio.BrokenResourceError(self.failure)
        assert self._nursery is not None
        # (The common request is told apart inline below: legacy.active, _await_listen,
        # cancelled_id and renewal.remember are called only where they can matter.)
        if self.legacy.endpoint is not None or self.config.legacy_sse == "always":
            await self._breakable(self._send_legacy(message))
            return
        call = None
        if message.__class__ is Request:
            if self._listen_ready is not None:
                await self._breakable(self._await_listen())
            if message.method == "initialize":
                self.renewal.remember(message)
        elif self._opens_listen(message):
            self._listen_ready = trio.Event()
        elif (request_id := cancelled_id(message)) is not None:
            call = self._outstanding.pop(request_id, None)
            if call is not None and call.stateless:
                # Stateless era: closing the request's stream *is* the cancellation;
                # there are no client notifications over HTTP.
                call.scope.cancel()
                return
        if call is not None:
            if not call.written:
                call.scope.cancel()  # never written: the server has nothing to cancel
                return
            # Stop reading the cancelled request's answer first: its connection goes
            # back to the pool for this notification. With every connection held by
            # requests being given up (a cancelled batch of parked calls), the
            # notifications would otherwise wait for connections that free up only
            # after them, until the bounded cancel send gives up.
            call.give_up(self.config.stream_linger)
        status = self._start_post(message)
        task = trio.lowlevel.current_task()
        self._sending[task] = status
        try:
            await status.wait(task)
        finally:
            del self._sending[task]

    def send_nowait(self, message: Message) -> None:
        """Start the POST of a plain request without waiting for it to be written (see
        :class:`~trimcp.nursery.MessageChannel`): its caller goes straight to waiting
        for the answer. Until it is written, a ``notifications/cancelled`` for it only
        stops it, and a failure to write it fails the call. What needs ``send``'s waits
        or ordering (``initialize``, a GET stream opening, header hooks, authorization,
        HTTP+SSE) raises :class:`trio.WouldBlock`, and so does any other message."""
        if self._closed:
            raise trio.ClosedResourceError("the HTTP channel is closed")
        if self.failure is not None:
            raise trio.BrokenResourceError(self.failure)
        if (
            message.__class__ is not Request
            or message.method == "initialize"
            or self._listen_ready is not None
            or self.hooked
            or self.legacy.endpoint is not None
            or self.config.legacy_sse == "always"
        ):
            raise trio.WouldBlock
        self._start_post(message, detached=True)

    def _start_post(self, message: Message, *, detached: bool = False) -> Started:
        """Start ``message``'s POST task; a request is outstanding from now on."""
        assert self._nursery is not None
        fresh = Call(stateless=modern_headers(message) is not None)
        if message.__class__ is Request:
            self._outstanding[message.id] = fresh
        status = Started(fresh, detached=detached)
        self._nursery.start_soon(self._post, message, fresh, status)
        return status

    def interrupt_send(self, task: trio.lowlevel.Task, error: BaseException) -> bool:
        """Make ``task``'s send raise ``error`` if its message is not written yet (see
        :class:`~trimcp.nursery.MessageChannel`): its POST is given up, or the other
        wait it is in is broken. ``False`` when it is not waiting in ``send``, or its
        POST was written already."""
        waiting = self._sending.get(task)
        return waiting is not None and waiting.interrupt(error)

    async def _breakable(self, wait: Awaitable[None]) -> None:
        """Await ``wait`` (part of ``send``) so that :meth:`interrupt_send` can break it."""
        task = trio.lowlevel.current_task()
        breakable = self._sending[task] = Breakable()
        try:
            with breakable.scope:
                await wait
        finally:
            del self._sending[task]
        if breakable.error is not None and breakable.scope.cancelled_caught:
            raise breakable.error  # (not when what it waited for ended first)

    async def _send_legacy(self, message: Message) -> None:
        if not self.legacy.active:
            try:
                await self.legacy.open()
            except (LegacySseError, HttpTransportError) as exc:
                self.break_channel(f"HTTP+SSE: {exc}")
                raise trio.BrokenResourceError(self.failure) from exc
        await self.legacy.send(message)

    def _opens_listen(self, message: Message) -> bool:
        version = self.protocol_version
        return (
            isinstance(message, Notification)
            and message.method == "notifications/initialized"
            and self.config.listen
            and not self._listening
            and (version is None or version in HANDSHAKE_VERSIONS)
        )

    async def _await_listen(self) -> None:
        ready = self._listen_ready  # dropped once set (listen_opened)
        if ready is not None:
            with trio.move_on_after(self.config.connect_timeout):
                await ready.wait()

    def listen_opened(self) -> None:
        """The standalone GET stream got its answer, or will not be opened."""
        ready, self._listen_ready = self._listen_ready, None  # nothing to wait for now
        if ready is not None:
            ready.set()

    def receive_nowait(self) -> Message:
        """A message already delivered, without a checkpoint (see
        :class:`~trimcp.nursery.MessageChannel`): the session takes the answers that
        arrived together in one scheduler step. At the end, :class:`trio.WouldBlock`:
        :meth:`receive` says how the channel ended."""
        try:
            return self._queue_out.receive_nowait()
        except trio.EndOfChannel:
            raise trio.WouldBlock from None

    async def receive(self) -> Message:
        try:
            return await self._queue_out.receive()
        except trio.EndOfChannel:
            pass
        if self._backlog:
            return self._backlog.popleft()
        if self.failure is not None:
            raise trio.BrokenResourceError(self.failure)
        raise trio.EndOfChannel

    async def aclose(self) -> None:
        self._closed = True
        self._queue_in.close()
        self._queue_out.close()

    def negotiated(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version

    async def authorization_settled(self) -> bool:
        """Whether authorization ran on this connection; waits while it runs (so a
        request that timed out during it is not taken for a server that is silent)."""
        return self.gate is not None and await self.gate.settled()

    # ------------------------------------------------------------------ delivery
    def waiting(self, request_id: RequestId) -> bool:
        """Whether ``request_id`` still waits for its answer."""
        return request_id in self._outstanding

    def carried_request(self, request_id: RequestId) -> None:
        """The stream of ``request_id`` brought a request of the server's."""
        if (call := self._outstanding.get(request_id)) is not None:
            call.carried = True

    async def deliver(self, message: Message | list[Message]) -> None:
        """Queue received message(s) for ``receive()`` (raises once the channel is closed)."""
        for one in message if isinstance(message, list) else [message]:
            if isinstance(one, Response | ErrorResponse) and one.id is not None:
                self._outstanding.pop(one.id, None)
            try:  # taken at once when there is room: no scheduler round
                self._queue_in.send_nowait(one)
            except trio.WouldBlock:
                await self._queue_in.send(one)

    async def fail(self, request_id: RequestId, error: ErrorObject) -> None:
        """Answer ``request_id`` locally with ``error`` (if it still waits)."""
        if self._outstanding.pop(request_id, None) is not None:
            await self._queue_in.send(ErrorResponse(id=request_id, error=error))

    def break_channel(self, reason: str) -> None:
        """Fail every waiting call with ``reason`` and end the channel (see the module doc)."""
        if self.failure is not None or self._closed:
            return
        logger.warning("Streamable HTTP channel broken: %s", reason)
        self.failure = reason
        for request_id in list(self._outstanding):
            error = connection_closed_error(reason)
            self._backlog.append(ErrorResponse(id=request_id, error=error))
        self._outstanding.clear()
        self._queue_in.close()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    def expire(self, session_id: str | None = None) -> None:
        """The server answered 404 for our session, and no new one is started."""
        self.session_expired = True
        self.break_channel(
            f"the server ended session {session_id or self.session_id} (HTTP 404); open a "
            "new client to start a new session"
        )

    def spawn(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        assert self._nursery is not None
        self._nursery.start_soon(fn, *args)

    async def start_task(self, fn: Callable[..., Awaitable[object]]) -> None:
        """Start ``fn`` in the channel's nursery (``nursery.start``)."""
        assert self._nursery is not None
        await self._nursery.start(fn)

    def expect(self, request_id: RequestId) -> None:
        """Record that ``request_id`` waits for an answer (HTTP+SSE sends)."""
        self._outstanding[request_id] = Call()

    async def forget_session(self, old: str) -> bool:
        """Drop session ``old`` (its GET stream; its calls in flight fail as expired);
        whether the GET stream was open (to be reopened on the new session)."""
        self.session_id = None
        reopen = self._listening
        self._listening = False
        if self._listen_scope is not None:
            self._listen_scope.cancel()
            self._listen_scope = None
        for request_id, call in list(self._outstanding.items()):
            if call.session == old:
                call.scope.cancel()
                await self.fail(request_id, session_expired_error(old))
        return reopen

    # ------------------------------------------------------------------ requests
    @property
    def hooked(self) -> bool:
        """Whether requests get headers from a hook or an authorization layer too."""
        return self.gate is not None or bool(self.config.headers)

    async def headers(
        self, method: str, message: Message | None = None, base: Headers = ()
    ) -> list[tuple[str, str]]:
        """The headers of one HTTP request: ``base``, session, version, then the hook's.

        A stateless-era request carries its own version (and ``Mcp-Method``/``Mcp-Name``)
        and no session id.
        """
        out = transport_headers(
            message, base, self.session_id, self.protocol_version, self.tool_headers
        )
        if not self.hooked:
            return out
        info = HttpRequestInfo(method, self.config.url, message)
        out.extend(await extra_headers(self.config.headers, info))
        return out if self.gate is None else await self.gate.headers(info, out)

    async def _post(self, message: Message, call: Call, status: Started) -> None:
        """POST ``message``; ``status`` hears once it is written (or why not); then
        read (and resume) its answer."""
        request_id = message.id if isinstance(message, Request) else None
        try:
            with call.scope:
                await self._exchange(message, status, call)
            if not self._listening:
                self.listen_opened()  # notifications/initialized refused: no GET stream
        except Exception as exc:
            if not status.done:
                status.failed(exc)
                if status.detached and request_id is not None:
                    why = f"the request could not be sent: {exc}"
                    await self.fail(request_id, connection_closed_error(why))
                return
            if not isinstance(exc, trio.ClosedResourceError | trio.BrokenResourceError):
                logger.exception("reading the answer to a POST failed")
                self.break_channel(f"unexpected error reading the server's answer: {exc!r}")
        finally:
            if not status.done:
                if request_id is not None:
                    self._outstanding.pop(request_id, None)
                if self.failure is not None:  # the channel broke first: say why
                    status.failed(trio.BrokenResourceError(self.failure))
                else:
                    status.failed(GivenUp("the POST was given up before it was sent"))

    async def _exchange(self, message: Message, status: Started, call: Call) -> None:
        request_id = message.id if isinstance(message, Request) else None
        for renewed in (False, True):
            await self.renewal.settled()
            sent = call.session = self.session_id
            answer = await self._post_once(message, status, sent, bounce=not renewed)
            if answer is Bounce.LEGACY:
                await self._fall_back(message)
                return
            if answer is Bounce.BOUNCED:
                assert sent is not None
                call.session = None
                if not await self.renewal.renew(sent) or request_id is None:
                    return  # a notification or response belonged to the old session
                continue
            if answer is not None and request_id is not None:
                await self.sse.resume(request_id, answer)
            return

    async def _fall_back(self, message: Message) -> None:
        """The server refused the first ``initialize`` as a 2024-11-05 one would: try
        its HTTP+SSE transport, and send the ``initialize`` there (``_client_legacy``)."""
        assert isinstance(message, Request)
        assert self._refusal is not None
        refusal, self._refusal = self._refusal, None
        try:
            await self.legacy.open()
        except (LegacySseError, HttpTransportError) as exc:
            why = f"{refusal.message}; no HTTP+SSE transport either ({exc})"
            await self.fail(message.id, attrs.evolve(refusal, message=why))
            return
        self._outstanding.pop(message.id, None)
        await self.legacy.send(message)

    async def _post_once(
        self, message: Message, status: Started, sent: str | None, *, bounce: bool
    ) -> SSEDecoder | Bounce | None:
        base = (
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        )
        gate = self.gate
        info = HttpRequestInfo("POST", self.config.url, message) if gate is not None else None
        pool = self.pool
        for retries_left in range(self.config.max_auth_retries, -1, -1):
            if self.hooked:
                headers: Headers = await self.headers("POST", message, base)
            else:  # the common case awaits nothing before the connection
                headers = post_headers(
                    message, base, self.session_id, self.protocol_version, self.tool_headers
                )
            for attempt in (0, 1):
                try:
                    # The checkout without its context manager (the hot path of every
                    # call); the connection goes back in the finally below.
                    conn = await pool.acquire(fresh=attempt > 0)
                    try:
                        # Encoded per attempt: a parked call's frame keeps no body.
                        await conn.send_request("POST", pool.origin, headers, encode(message))
                        status.started()
                        response = await conn.receive_response()
                        if gate is None or not gate.is_challenge(response):
                            if gate is not None and info is not None:
                                gate.observe(info, response)
                            answer = self._on_response(message, conn, response, sent, bounce)
                            del response  # unbound before the wait: a parked stream keeps no head
                            return await answer
                        challenge = await gate.read(conn, response)
                        break
                    finally:
                        await pool.release(conn)
                except HttpTransportError as exc:
                    if exc.stale and attempt == 0:
                        logger.debug("stale keep-alive connection, retrying: %s", exc)
                        continue
                    self.break_channel(f"lost the connection to the server: {exc}")
                    if not status.done:
                        raise trio.BrokenResourceError(self.failure) from exc
                    return None
            assert gate is not None
            assert info is not None
            verdict = await gate.answer(info, gate.sent(headers), challenge, retries_left)
            if verdict is RETRY:
                continue
            assert isinstance(verdict, ErrorObject)
            if isinstance(message, Request):
                await self.fail(message.id, verdict)
            else:
                logger.warning("%s refused: %s", describe(message), verdict.message)
            return None
        raise AssertionError("unreachable")  # pragma: no cover

    def take_session_id(self, response: h11.Response) -> None:
        self.session_id = session_id_in(response) or self.session_id

    def start_listening(self) -> None:
        version = self.protocol_version
        if self._listening or not self.config.listen or self._nursery is None:
            return
        if version is not None and version not in HANDSHAKE_VERSIONS:
            return  # the stateless era has no GET stream
        self._listening = True
        self._nursery.start_soon(self._listen)

    async def _listen(self) -> None:
        with trio.CancelScope() as scope:
            self._listen_scope = scope
            try:
                await self.sse.listen()
            finally:
                self.listen_opened()
        if self._listen_scope is scope:
            self._listen_scope = None
