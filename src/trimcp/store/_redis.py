"""``RedisStore``: sessions, events, relays and leases of N processes in one Redis.

:meth:`RedisStore.run` connects (coredis), takes a *process number* (``INCR`` of
``<p>procs``, then a lease ``<p>proc:<n>`` that lives ``lease_ttl`` seconds and is
renewed every third of it), subscribes to this process's relay channel
``<p>to:<n>`` and to ``<p>all``, and runs the background queue (:meth:`later`).

What is stored (``<p>`` is ``prefix``, default ``trimcp:``), each key with a TTL:

=========================  =============================================  ==============
key                        holds                                          lives (idle)
=========================  =============================================  ==============
``<p>proc:<n>``            the lease of process ``n``                     ``lease_ttl``
``<p>{<sid>}:s``           the session record and its event sequence      session idle
``<p>{<sid>}:e:<stream>``  a stream's events (``replay_events``/``bytes``)  session idle
``<p>{<sid>}:m:<stream>``  its writer, holder, requests, completion       session idle
``<p>{<sid>}:st``          the session's request streams                  session idle
``<p>sessions``            live session ids by expiry (notices to all)    pruned by score
=========================  =============================================  ==============

"Session idle" is ``session_idle_timeout`` of the HTTP server, renewed by every use
of the session on any process.

Task mirrors add ``<p>t:<id>`` (living as long as the task) and their listings
``<p>ti:<index>``; resource subscriptions ``<p>rsub:<uri>`` (session idle).

Each operation a request may make is one round trip: one command, or one script
where it used to take several, so a crash or another process never sees half of one
(a key without its TTL, a session unlisted, a notice before the change it announces).
Not a ``MULTI``: a transaction holds a connection of its own for its round trip, which
lets a later write of the same key, sent on another connection, land first (a task
mirror's older state over its newer one, seen in tests); for the same reason Redis
loads every script when the store starts, not at a script's first use (``NOSCRIPT``,
load, run again).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

import trio
from coredis.retry import NoRetryPolicy
from coredis.tokens import PureToken

from trimcp.transports.http import (
    Envelope,
    HttpServerLimits,
    SessionRecord,
    StoreUnavailable,
)

from ._redis_events import RedisEvents
from ._redis_keyring import KEYRING, ring
from ._redis_link import STORE_ERRORS, RedisLink, without_store_errors
from ._redis_link import text as _text
from ._redis_scripts import (
    CREATE_SESSION,
    END_SESSION,
    LEASE,
    SAVE_SESSION,
    SAVE_TASK,
    SCRIPTS,
    SESSIONS_LIVE,
    SUBSCRIBE,
    TASK_INDEX,
    TOUCH,
)

__all__ = ["DEFAULT_LEASE_TTL", "DEFAULT_OP_TIMEOUT", "LATER_QUEUE", "RedisStore"]

logger = logging.getLogger("trimcp.store")

DEFAULT_LEASE_TTL: Final = 5.0
"""Seconds a process's lease lives unless renewed (it is renewed every third of it):
how long a killed process's requests wait, at most, before they fail elsewhere."""
DEFAULT_OP_TIMEOUT: Final = 2.0
"""Seconds one Redis operation may take before the store counts as unreachable."""
LATER_QUEUE: Final = 1024
"""Background store operations waiting at once (beyond it they are dropped)."""

_RESERVED: Final = frozenset({"ow", "v", "seq", "c"})


def _pairs(fields: Mapping[str, str]) -> list[str]:
    """A hash's fields as a script's arguments: field, value, field, value..."""
    return [item for pair in fields.items() for item in pair]


@final
class RedisStore:
    """A store shared by every process that serves one MCP server (module doc).

    Args:
      url: ``redis://host:port/db`` (or ``rediss://``, ``unix://``).
      prefix: the prefix of every key and channel.
      lease_ttl: seconds a process's lease lives (:data:`DEFAULT_LEASE_TTL`).
      op_timeout: bound on one Redis operation (:data:`DEFAULT_OP_TIMEOUT`).
      retry_after: the ``Retry-After`` of a 503 while Redis is unreachable.
    """

    shared: Final = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "trimcp:",
        lease_ttl: float = DEFAULT_LEASE_TTL,
        op_timeout: float = DEFAULT_OP_TIMEOUT,
        retry_after: int = 1,
    ) -> None:
        if lease_ttl <= 0 or op_timeout <= 0:
            raise ValueError("lease_ttl and op_timeout must be positive")
        self.url = url
        self.prefix = prefix
        self.lease_ttl = lease_ttl
        self.retry_after = retry_after
        self.link = RedisLink(url, op_timeout=op_timeout)
        self.limits = HttpServerLimits()
        self.process = 0
        self.channel_prefix = f"{prefix}to:"
        self._handlers: list[Callable[[Envelope], None]] = []
        self._later_send, self._later = trio.open_memory_channel[Callable[[], Awaitable[None]]](
            LATER_QUEUE
        )
        #: Background operations dropped (queue full or store failing).
        self.dropped = 0
        self._running = False
        #: What this process's lease holds: unique to it (host, pid, random).
        self._lease = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

    # ------------------------------------------------------------------ configuration
    @property
    def available(self) -> bool:
        return self.link.available and self._running

    @property
    def running(self) -> bool:
        return self._running

    @property
    def lease_ms(self) -> int:
        return max(1, round(self.lease_ttl * 1000))

    @property
    def ttl_ms(self) -> int:
        return max(1, round(self.limits.session_idle_timeout * 1000))

    def configure(self, limits: HttpServerLimits) -> None:
        """Take the bounds and idle timeout of the HTTP server using the store."""
        self.limits = limits

    def session_prefix(self, session_id: str) -> str:
        return f"{self.prefix}{{{session_id}}}:"

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    # ------------------------------------------------------------------ running
    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Connect, take a process number and a lease, and relay until cancelled.

        Started once Redis has answered: until then it retries every second (a server
        using the store does not listen before)."""
        if self._running:
            raise RuntimeError("this RedisStore is already running")
        async with self.link.client:
            while True:  # a store that is not up yet: wait for it, saying so
                try:
                    self.process = await self._acquire()
                    await self._load_scripts()
                    break
                except StoreUnavailable as exc:
                    logger.warning("waiting for Redis at %s: %s", self.url, exc)
                    await trio.sleep(1.0)
            async with trio.open_nursery() as nursery:
                await nursery.start(self._subscribe)
                nursery.start_soon(self._keep_lease)
                nursery.start_soon(self._work)
                self._running = True
                try:
                    task_status.started()
                    await trio.sleep_forever()
                finally:
                    self._running = False
                    nursery.cancel_scope.cancel()
                    await self._release_lease()

    async def _release_lease(self) -> None:
        """Give the lease back on the way out, so that the other processes need not
        wait for it to run out. The client's connections are being cancelled with the
        store, so a short-lived one does it, shielded and bounded."""
        with (
            trio.move_on_after(self.link.op_timeout, shield=True),
            contextlib.suppress(*STORE_ERRORS),
        ):
            last = RedisLink(self.url, op_timeout=self.link.op_timeout, max_connections=1)
            async with last.client:
                await last.client.delete([self._lease_key()])

    async def _load_scripts(self) -> None:
        """Have Redis know every script before any request runs one. A script Redis
        does not know costs a retry (``NOSCRIPT``, load, run again), and two writes of
        one key retried so could land out of order (a task mirror's older state over
        its newer one)."""

        async def load(c: Any) -> None:
            for source in (KEYRING, *SCRIPTS):
                await c.script_load(source)

        await self.link.call(load)

    def _counter_ttl(self) -> int:
        """The process counter's TTL: twice the session idle timeout (module doc)."""
        return 2 * self.ttl_ms + self.lease_ms

    def _lease_key(self, process: int | None = None) -> str:
        return self.key(f"proc:{self.process if process is None else process}")

    async def _acquire(self) -> int:
        px = self.lease_ms
        counter = self.key("procs")

        async def count(c: Any) -> int:
            async with c.pipeline(transaction=True) as p:  # never a counter without TTL
                number = p.incr(counter)
                p.pexpire(counter, self._counter_ttl())
            return int(await number)

        while True:
            process = await self.link.call(count)
            if process >= 1 << 21:  # ids must stay exact in JSON: start again
                await self.link.call(lambda c: c.delete([self.key("procs")]))
                continue
            key = self._lease_key(process)
            value = self._lease

            async def take(c: Any, key: str = key, value: str = value) -> bool:
                return bool(await c.set(key, value, condition=PureToken.NX, px=px))

            taken = await self.link.call(take)
            if taken:
                logger.info("process %d of the store at %s", process, self.url)
                return int(process)

    async def _keep_lease(self) -> None:
        """Renew the lease every third of its life (every half second while Redis is
        unreachable: the renewal is also the probe that notices it is back)."""
        px = self.lease_ms
        keys = [self._lease_key(), self.key("procs")]
        while True:
            await trio.sleep(self.lease_ttl / 3 if self.link.available else 0.5)
            try:
                kept = await self.link.script(
                    LEASE, keys, [self._lease, px, self.process, self._counter_ttl()]
                )
            except StoreUnavailable:
                continue
            if not kept:
                logger.error("process number %d was taken by another process", self.process)

    async def _subscribe(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Receive this process's relays until cancelled. A subscription that drops is
        made again at once (after a failed attempt, every half second), and the
        processes are told to recover what it may have missed (``resync``). Only a
        failed attempt counts as Redis being unreachable."""
        channels = [f"{self.channel_prefix}{self.process}", self.key("all")]
        first = True
        while True:
            subscribed = False
            try:
                pubsub = self.link.client.pubsub(
                    channels=channels, retry_policy=NoRetryPolicy(), ignore_subscribe_messages=True
                )
                async with pubsub:
                    subscribed = True
                    if first:
                        task_status.started()
                        first = False
                    else:
                        self._dispatch(Envelope("resync", ""))
                    async for message in pubsub:
                        data = message["data"]
                        if isinstance(data, bytes):
                            envelope = Envelope.decode(data)
                            if envelope is not None:
                                self._dispatch(envelope)
            except BaseException as exc:
                rest = without_store_errors(exc)
                if rest is exc:
                    raise
                if rest is not None:  # cancelled as the connection closed: cancelled
                    raise rest from None
                if not subscribed:
                    self.link.failed(exc)
                logger.info("relay subscription of process %d lost: %s", self.process, exc)
            if not subscribed:
                await trio.sleep(0.5)

    def _dispatch(self, envelope: Envelope) -> None:
        for handler in self._handlers:
            try:
                handler(envelope)
            except Exception:
                logger.exception("a relay handler failed on a %r envelope", envelope.kind)

    async def _work(self) -> None:
        async for work in self._later:
            try:
                await work()
            except StoreUnavailable:
                self.dropped += 1

    # ------------------------------------------------------------------ SharedSessions
    def on_envelope(self, handler: Callable[[Envelope], None]) -> None:
        self._handlers.append(handler)

    def later(self, work: Callable[[], Awaitable[None]]) -> None:
        try:
            self._later_send.send_nowait(work)
        except trio.WouldBlock:
            self.dropped += 1

    async def send(self, envelope: Envelope, *, to: int | None) -> None:
        channel = self.key("all") if to is None else f"{self.channel_prefix}{to}"
        data = envelope.encode()
        await self.link.call(lambda c: c.publish(channel, data))

    async def alive(self, processes: set[int]) -> set[int]:
        """The processes of ``processes`` whose lease holds: one round trip."""
        numbers = sorted(processes)
        keys = [self._lease_key(process) for process in numbers]

        if not keys:
            return set()
        held = await self.link.call(lambda c: c.mget(keys))
        return {n for n, lease in zip(numbers, held, strict=True) if lease is not None}

    def events(self, session_id: str) -> RedisEvents:
        return RedisEvents(self, session_id)

    async def create_session(self, session_id: str, owner: str | None) -> None:
        """One round trip, one script: no process ever sees the record without its
        TTL or the record unlisted (a crash leaves all of it or nothing)."""
        record = self.session_prefix(session_id) + "s"
        fields = {"c": str(time.time()), "seq": "0", **({"ow": owner} if owner else {})}
        ttl = self.ttl_ms
        await self.link.script(
            CREATE_SESSION,
            [record, self.key("sessions")],
            [ttl, session_id, time.time() * 1000 + ttl, *_pairs(fields)],
        )

    async def load_session(self, session_id: str) -> SessionRecord | None:
        record = self.session_prefix(session_id) + "s"
        raw = await self.link.call(lambda c: c.hgetall(record))
        if not raw:
            return None
        values = {_text(k): _text(v) for k, v in raw.items()}
        return SessionRecord(
            session_id,
            owner=values.get("ow"),
            protocol_version=values.get("v"),
            fields={k: v for k, v in values.items() if k not in _RESERVED},
        )

    async def save_session(self, session_id: str, fields: Mapping[str, str]) -> None:
        """One round trip, one script: the change, then the notice of it (a process
        told of it finds it stored). A record that expired meanwhile is written again
        with the session's TTL, never without one."""
        record = self.session_prefix(session_id) + "s"
        stored = {("v" if k == "protocolVersion" else k): v for k, v in fields.items()}
        note = Envelope("upd", session_id, payload=json.dumps(dict(fields)).encode())
        await self.link.script(
            SAVE_SESSION, [record], [self.ttl_ms, self.key("all"), note.encode(), *_pairs(stored)]
        )

    async def request_state_keys(self, *, now: float | None = None) -> list[tuple[str, bytes]]:
        """The shared key ring of sealed request states (:mod:`._redis_keyring`), as of
        ``now`` (Unix seconds; default: this machine's clock)."""
        when = time.time() if now is None else now
        return await ring(self.link, self.key("statekeys"), now=when)

    async def touch_session(self, session_id: str) -> None:
        """One round trip (a script: the session's keys and its listing in
        ``<p>sessions`` renewed together, and only while the session lives)."""
        prefix = self.session_prefix(session_id)
        ttl = self.ttl_ms
        await self.link.script(
            TOUCH,
            [f"{prefix}s", f"{prefix}st", self.key("sessions")],
            [ttl, prefix, session_id, time.time() * 1000 + ttl],
        )

    async def end_session(self, session_id: str) -> None:
        """One round trip (a script): the session's keys go, it is unlisted, and
        every process is told (``bye``) once it is gone."""
        prefix = self.session_prefix(session_id)
        await self.link.script(
            END_SESSION,
            [f"{prefix}s", f"{prefix}st", self.key("sessions")],
            [prefix, session_id, self.key("all"), Envelope("bye", session_id).encode()],
        )

    async def live_sessions(self) -> list[str]:
        """The ids of the sessions not yet expired (for notices to every session)."""
        now = time.time() * 1000
        key = self.key("sessions")

        return [_text(s) for s in await self.link.script(SESSIONS_LIVE, [key], [now])]

    async def subscribe_uri(self, session_id: str, uri: str, subscribed: bool) -> None:
        """Add (or remove) ``session_id`` to the subscribers of resource ``uri``."""
        key = self.key(f"rsub:{uri}")
        ttl = self.ttl_ms

        if subscribed:
            await self.link.script(SUBSCRIBE, [key], [ttl, session_id])
        else:
            await self.link.call(lambda c: c.srem(key, [session_id]))

    async def uri_subscribers(self, uri: str) -> list[str]:
        """The sessions subscribed to resource ``uri`` (some may have ended since)."""
        key = self.key(f"rsub:{uri}")
        return sorted(_text(s) for s in await self.link.call(lambda c: c.smembers(key)))

    # ------------------------------------------------------------------ task mirrors
    async def save_task(self, task_id: str, doc: bytes, ttl_ms: int, index: str | None) -> None:
        """Mirror one task (``<p>t:<id>``, living as long as the task) and list it
        under ``index`` (``<p>ti:<index>``); tell every process it changed. One round
        trip, one script: the listing never lacks its TTL, a process told of the
        change finds it stored."""
        keys = [self.key(f"t:{task_id}")] + ([] if index is None else [self.key(f"ti:{index}")])
        note = Envelope("tch", "", task_id).encode()
        await self.link.script(
            SAVE_TASK, keys, [doc, ttl_ms, self.key("all"), note, task_id, time.time()]
        )

    async def load_task(self, task_id: str) -> bytes | None:
        key = self.key(f"t:{task_id}")
        doc = await self.link.call(lambda c: c.get(key))
        return doc if isinstance(doc, bytes) else None

    async def task_index(self, index: str) -> list[bytes]:
        """The mirrors listed under ``index``, oldest first (expired ones are dropped
        from the listing). One round trip: a script reads the listing and every
        mirror and prunes the expired at once."""
        docs = await self.link.script(TASK_INDEX, [self.key(f"ti:{index}")], [self.key("t:")])
        return [bytes(doc) for doc in docs]
