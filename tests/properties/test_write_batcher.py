"""Property: coalesced writes keep every sender's promise (``WriteBatcher``).

Random scripts start senders, cancel some of them (before, while or after their bytes
are taken), and let each write in the pipe finish or fail. Whatever the interleaving:
writes never overlap; each message goes out at most once, in submit order; a sender
that raised ``Cancelled`` never had its bytes written; one that returned normally had
them taken into a write, and that write succeeded unless the sender was cancelled once
they were on their way; one whose write failed raises ``BrokenResourceError``; once
the pipe drains nobody is left waiting. The same holds with a writer task writing the
batches (``start_writer``), which the scripts may stop at any point (its senders then
write their batches themselves): bytes ``put`` without waiting go out once, in order,
unless the pipe broke or the writer stopped first, and bytes refused (``WouldBlock``,
past the bound of unwritten bytes, or with no writer) or withdrawn never go out. And a
batch's senders are woken together: a hundred senders queued behind a write return
within a few scheduler passes once it ends, where a lock handed from sender to sender
took a pass each.
"""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.transports._batch import WriteBatcher

EXAMPLES = int(os.environ.get("TRIMCP_PROPERTY_EXAMPLES", "60"))

OPS = ["send", "send", "send", "cancel", "finish", "finish", "fail"]
steps = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 15)), min_size=1, max_size=40)
WRITER_OPS = [*OPS, "put", "put", "put", "withdraw", "stop"]
writer_steps = st.lists(
    st.tuples(st.sampled_from(WRITER_OPS), st.integers(0, 15)), min_size=1, max_size=40
)
#: A small bound on unwritten bytes, so that scripts meet refusals.
MAX_UNWRITTEN = 9


class Pipe:
    """A write that waits in the pipe until the script finishes or fails it; shielded,
    as the NDJSON stream's is (a write cut short would leave half a line)."""

    def __init__(self) -> None:
        self.writing = 0
        self.gate = trio.Event()
        self.fail_next = False
        self.failed = False
        #: (bytes, succeeded) of every write that started.
        self.writes: list[tuple[bytes, bool]] = []

    async def write(self, batch: bytes) -> None:
        assert self.writing == 0, "two writes at once"
        self.writing += 1
        index = len(self.writes)
        self.writes.append((batch, False))
        try:
            with trio.CancelScope(shield=True):
                await self.gate.wait()
            if self.fail_next:
                self.fail_next = False
                self.failed = True
                raise trio.BrokenResourceError("the pipe broke")
            self.writes[index] = (batch, True)
        finally:
            self.writing -= 1
            self.gate = trio.Event()

    def check(self) -> None:
        if self.failed:
            raise trio.BrokenResourceError("an earlier write failed")


async def _host(*, task_status: trio.TaskStatus[tuple[trio.Nursery, trio.CancelScope]]) -> None:
    """A nursery for the writer task, and the scope that stops it."""
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            task_status.started((nursery, scope))
            await trio.sleep_forever()


def _nowait(
    op: str,
    k: int,
    batcher: WriteBatcher,
    n: int,
    keys: dict[int, int],
    outcome: dict[int, str],
    scopes: dict[int, trio.CancelScope],
) -> int:
    """Put message ``n`` (1: a message more), or withdraw one put before (0)."""
    if op == "withdraw":
        if keys:
            put = sorted(keys)[k % len(keys)]
            if batcher.withdraw(keys.pop(put)):
                outcome[put] = "withdrawn"
        return 0
    scopes[n] = trio.CancelScope()  # never cancelled: a put does not wait
    try:
        keys[n] = batcher.put(b"%d;" % n)
    except trio.WouldBlock:
        outcome[n] = "refused"
    else:
        outcome[n] = "put"
    return 1


async def _play(script: list[tuple[str, int]], writer: bool = False) -> dict[int, str]:
    pipe = Pipe()
    batcher = WriteBatcher(pipe.write, pipe.check, max_unwritten=MAX_UNWRITTEN)
    outcome: dict[int, str] = {}
    scopes: dict[int, trio.CancelScope] = {}
    keys: dict[int, int] = {}

    async def sender(n: int, scope: trio.CancelScope) -> None:
        with scope:
            try:
                await batcher.submit(b"%d;" % n)
            except trio.BrokenResourceError:
                outcome[n] = "broken"
                return
            outcome[n] = "returned"
        if scope.cancelled_caught:
            outcome[n] = "cancelled"

    stopped = False
    async with trio.open_nursery() as nursery:
        host, stop = await nursery.start(_host)
        if writer:
            assert batcher.start_writer(host.start_soon)
        sent = 0
        for op, k in script:
            if op == "send":
                scopes[sent] = trio.CancelScope()
                nursery.start_soon(sender, sent, scopes[sent])
                sent += 1
            elif op in ("put", "withdraw"):
                sent += _nowait(op, k, batcher, sent, keys, outcome, scopes)
            elif op == "stop":
                stopped = stopped or batcher.writer
                stop.cancel()
            elif op == "cancel" and scopes:
                scopes[k % len(scopes)].cancel()
            elif op in ("finish", "fail"):
                pipe.fail_next = op == "fail"
                pipe.gate.set()
            await trio.testing.wait_all_tasks_blocked()
        while pipe.writing:  # drain: every write still in the pipe succeeds
            pipe.fail_next = False
            pipe.gate.set()
            await trio.testing.wait_all_tasks_blocked()
        stopped = stopped or batcher.writer
        stop.cancel()

    assert sorted(outcome) == list(range(sent)), "a sender never returned"
    _check(pipe, outcome, scopes, stopped)
    return outcome


def _check(
    pipe: Pipe, outcome: dict[int, str], scopes: dict[int, trio.CancelScope], stopped: bool
) -> None:
    written = [(int(m), ok) for batch, ok in pipe.writes for m in batch.split(b";")[:-1]]
    numbers = [n for n, _ok in written]
    assert numbers == sorted(set(numbers)), "a message went out twice or out of order"
    succeeded = {n for n, ok in written if ok}
    taken = set(numbers)
    for n, how in outcome.items():
        cancelled = scopes[n].cancel_called
        if how in ("refused", "withdrawn"):
            assert n not in taken, f"put {n} was {how} but its bytes were written"
            continue
        if how == "put":
            # Dropped only when the writer stopped (or the pipe broke) before taking it.
            assert n in succeeded or pipe.failed or stopped, f"put {n} never went out"
            continue
        if how == "cancelled":
            assert n not in taken, f"sender {n} raised Cancelled but its bytes were written"
        elif how == "returned":
            assert n in taken
            assert n in succeeded or cancelled, f"sender {n} returned but its write failed"
        else:
            assert n not in succeeded
        if not cancelled and not pipe.failed:
            assert how == "returned"
            assert n in succeeded


@settings(max_examples=EXAMPLES, deadline=None)
@given(steps)
def test_coalesced_writes_keep_every_senders_promise(script: list[tuple[str, int]]) -> None:
    trio.run(_play, script)


@settings(max_examples=EXAMPLES, deadline=None)
@given(writer_steps)
def test_a_writer_task_keeps_every_senders_promise(script: list[tuple[str, int]]) -> None:
    trio.run(_play, script, True)


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(writer_steps)
def test_without_a_writer_task_nothing_is_put(script: list[tuple[str, int]]) -> None:
    # No writer: every put is refused (the caller then submits and waits).
    outcome = trio.run(_play, [(op, k) for op, k in script if op != "stop"], False)
    assert "put" not in outcome.values()


class _Passes(trio.abc.Instrument):
    def __init__(self) -> None:
        self.passes = 0

    def before_io_wait(self, timeout: float) -> None:
        self.passes += 1


@pytest.mark.trio
async def test_a_batch_of_senders_is_woken_at_once() -> None:
    pipe = Pipe()
    batcher = WriteBatcher(pipe.write, pipe.check)
    done: list[int] = []

    async def sender(n: int) -> None:
        await batcher.submit(b"%d;" % n)
        done.append(n)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sender, 0)  # in the pipe
        await trio.testing.wait_all_tasks_blocked()
        for n in range(1, 101):
            nursery.start_soon(sender, n)  # queued behind it: one batch
        await trio.testing.wait_all_tasks_blocked()
        passes = _Passes()
        trio.lowlevel.add_instrument(passes)
        pipe.gate.set()  # line 0 written; the batch of 100 is written next
        while len(done) < 1:
            await trio.lowlevel.checkpoint()
        pipe.gate.set()
        while len(done) < 101:
            await trio.lowlevel.checkpoint()
        trio.lowlevel.remove_instrument(passes)
    assert [len(b.split(b";")) - 1 for b, _ok in pipe.writes] == [1, 100]
    assert passes.passes <= 6


class _Instant:
    """A write that completes without a scheduler round; records each batch."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def write(self, batch: bytes) -> None:
        self.writes.append(batch)

    def check(self) -> None:
        pass


@pytest.mark.trio
async def test_a_lone_message_goes_at_once() -> None:
    # The last write carried one message: no load, so no round is spent waiting for
    # company (the task started first has not run when submit returns).
    pipe = _Instant()
    batcher = WriteBatcher(pipe.write, pipe.check)
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    async with trio.open_nursery() as nursery:
        for n in range(3):
            nursery.start_soon(other)
            await batcher.submit(b"%d;" % n)
            assert ran == [] if n == 0 else ran == ["other"] * n
            await trio.testing.wait_all_tasks_blocked()
    assert pipe.writes == [b"0;", b"1;", b"2;"]


@pytest.mark.trio
async def test_under_load_the_senders_of_a_round_share_one_write() -> None:
    pipe = Pipe()
    batcher = WriteBatcher(pipe.write, pipe.check)

    async def sender(n: int) -> None:
        await batcher.submit(b"%d;" % n)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sender, 0)  # in the pipe
        await trio.testing.wait_all_tasks_blocked()
        for n in (1, 2):
            nursery.start_soon(sender, n)  # queued behind it: a write of two
        await trio.testing.wait_all_tasks_blocked()
        pipe.gate.set()
        await trio.testing.wait_all_tasks_blocked()
        pipe.gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert not pipe.writing
        # Nothing is being written, but the last write carried two: the first of the
        # next round waits that round out, and the three go in one write.
        for n in (3, 4, 5):
            nursery.start_soon(sender, n)
        await trio.testing.wait_all_tasks_blocked()
        while pipe.writing:
            pipe.gate.set()
            await trio.testing.wait_all_tasks_blocked()
    batches = [sorted(b.split(b";")[:-1]) for b, _ok in pipe.writes]
    assert batches == [[b"0"], [b"1", b"2"], [b"3", b"4", b"5"]]
