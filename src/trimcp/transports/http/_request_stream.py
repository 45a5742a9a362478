"""The stream of one POST to a Streamable HTTP session (:mod:`._sessions`): the requests
it carried, who sent them, and where their output goes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import final

from trimcp.nursery import Caller
from trimcp.wire import ErrorObject, ErrorResponse, RequestId, encode

from ._guards import SERVER_ERROR, Headers
from ._sse_stream import Outbox

__all__ = ["RequestStream", "over_budget"]


@final
class RequestStream:
    """The stream of one POST: the requests it carried, who sent them (the caller its
    credentials named, with authorization) and where their output goes."""

    __slots__ = (
        "batch",
        "caller",
        "collected",
        "headers",
        "ids",
        "mode",
        "outbox",
        "pending",
        "reverse",
        "stream_id",
    )

    def __init__(
        self,
        stream_id: str,
        request_ids: Iterable[RequestId],
        batch: bool,
        caller: Caller | None = None,
        headers: Headers | None = None,
    ) -> None:
        self.stream_id = stream_id
        self.caller = caller
        #: The POST's request headers, for the handlers of its requests.
        self.headers = headers
        self.ids = tuple(request_ids)
        self.pending: set[RequestId] = set(self.ids)
        self.batch = batch
        #: ``"pending"`` (undecided), ``"json"`` or ``"sse"``.
        self.mode = "pending"
        #: Responses of a batch, held until all arrived (JSON mode only).
        self.collected: list[bytes] = []
        self.outbox: Outbox | None = None
        #: Ids of the requests the server made on this stream, not yet answered or
        #: cancelled: the stream stays open for them (made with the first one: most
        #: streams carry none, and an empty set is 216 bytes a parked stream keeps).
        self.reverse: set[RequestId] | None = None

    @property
    def done(self) -> bool:
        return not self.pending

    @property
    def over(self) -> bool:
        """Nothing more can go on it: its requests and its reverse calls have ended."""
        return not self.pending and not self.reverse

    def add_reverse(self, request_id: RequestId) -> None:
        """The server made request ``request_id`` on this stream."""
        if self.reverse is None:
            self.reverse = set()
        self.reverse.add(request_id)

    def end_reverse(self, request_id: RequestId) -> None:
        """Reverse request ``request_id`` was answered or cancelled."""
        if self.reverse is not None:
            self.reverse.discard(request_id)


def over_budget(stream: RequestStream, wire_ids: Mapping[RequestId, RequestId]) -> bytes:
    """The error body that replaces a JSON answer the output budget refused (each
    request named by the id its client gave it: ``wire_ids``, see
    :attr:`~._sessions.HttpSessionChannel.wire_ids`)."""
    error = ErrorObject(
        code=SERVER_ERROR, message="Server busy: the answer exceeds the output budget"
    )
    answers = [
        encode(ErrorResponse(id=wire_ids.get(request_id, request_id), error=error))
        for request_id in stream.ids
    ]
    return answers[0] if not stream.batch else b"[" + b",".join(answers) + b"]"
