"""The JSON answers of an HTTP session's request streams (part of
:class:`~._sessions.HttpSessionChannel`; its module doc tells the whole story).

A request stream whose first message is its own answer (every answer, for a batch)
is answered with one JSON body: :meth:`JsonAnswers.send_nowait` puts the common case
(one request, nothing else sent on its stream) at once, without a coroutine, so the
session hands it over as it does on memory pairs; everything else goes through
``send``, which ends such a stream the same way.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import attrs
import trio

from trimcp.wire import ErrorResponse, Message, RequestId, Response, encode

from ._request_stream import RequestStream, over_budget

__all__ = ["JsonAnswers"]

logger = logging.getLogger("trimcp.http.server")


class JsonAnswers:
    """The JSON-answer half of :class:`~._sessions.HttpSessionChannel` (a mixin)."""

    # Provided by HttpSessionChannel.
    session_id: str | None
    dropped: int
    wire_ids: dict[RequestId, RequestId]
    _closed: bool
    _by_request: dict[RequestId, RequestStream]
    _swallow: dict[RequestId, trio.Event]

    if TYPE_CHECKING:

        def _end_stream(self, stream: RequestStream, *, stored: bool = False) -> None: ...

    def send_nowait(self, message: Message) -> None:
        """:meth:`send` for the answer that completes its POST's JSON body (the
        common case: nothing else was sent on its stream), which never waits;
        :class:`trio.WouldBlock` for anything else, which :meth:`send` routes."""
        if self._closed or not isinstance(message, Response | ErrorResponse):
            raise trio.WouldBlock
        response_id = message.id
        stream = None if response_id is None else self._by_request.get(response_id)
        if (
            stream is None
            or stream.mode != "pending"
            or stream.batch
            or response_id in self._swallow
        ):
            raise trio.WouldBlock
        self._answer_json(stream, self._encode_answer(stream, message, response_id))

    def _answer_json(self, stream: RequestStream, data: bytes) -> None:
        """``data``, the last answer of ``stream`` while it is still pending, ends it as
        its JSON body."""
        stream.collected.append(data)
        self._finish_json(stream)  # it may still need the client's ids
        if self.wire_ids:
            self._forget_wire_ids(stream)

    def _encode_answer(
        self, stream: RequestStream, message: Message, response_id: RequestId | None
    ) -> bytes:
        """``message`` encoded; an answer (``response_id``) carries its client's id and
        ends its request on ``stream``."""
        if response_id is None:
            return encode(message)
        if self.wire_ids:
            assert isinstance(message, Response | ErrorResponse)
            message = attrs.evolve(message, id=self.wire_ids.get(response_id, response_id))
        stream.pending.discard(response_id)
        del self._by_request[response_id]
        return encode(message)

    def _forget_wire_ids(self, stream: RequestStream) -> None:
        """Drop the client's ids of ``stream``'s requests, all answered now."""
        if self.wire_ids:
            for request_id in stream.ids:
                self.wire_ids.pop(request_id, None)

    def _finish_json(self, stream: RequestStream) -> None:
        stream.mode = "json"
        body = (
            stream.collected[0] if not stream.batch else b"[" + b",".join(stream.collected) + b"]"
        )
        stream.collected = []
        outbox = stream.outbox
        if outbox is not None:
            outbox.json = True
            if not outbox.put(body, whole=True):
                logger.warning(
                    "session %s: a %d-byte answer exceeds the output budget; answered with "
                    "an error instead",
                    self.session_id,
                    len(body),
                )
                outbox.put(over_budget(stream, self.wire_ids), whole=True, force=True)
            outbox.close()
            stream.outbox = None  # closed: ending the stream below need not close it again
        else:
            self.dropped += 1
            logger.debug("session %s: client left before its JSON response", self.session_id)
        self._end_stream(stream)
