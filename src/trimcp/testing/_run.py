"""Run the conformance machine with a budget; report, write and replay failures.

:func:`run_conformance` runs the machine in batches of examples until the example
budget or the time budget is spent, or a property fails (Hypothesis has then shrunk
it). Each :class:`Failure` can be written as a replay file (JSON: the property, the
message and the actions) and re-run with :func:`replay`, without Hypothesis, against
the same or another target.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import trio
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import HypothesisException
from hypothesis.stateful import run_state_machine_as_test

from ._actions import perform
from ._inbox import Target
from ._loop import LoopThread
from ._machine import Failure, OutOfTime, Recorder, machine_for
from ._schemas import HANDSHAKE_REVISIONS
from ._session import Options, Session
from ._violations import Violation

__all__ = ["REPLAY_FORMAT", "Report", "load_replay", "replay", "run_conformance", "write_replay"]

#: The ``format`` member of replay files this version writes and reads.
REPLAY_FORMAT = "trimcp-conform/1"
_BATCH = 10


@attrs.define
class Report:
    """What a run did: examples run, seconds spent, and the failures found."""

    target: str
    examples: int
    seconds: float
    failures: list[Failure]

    @property
    def ok(self) -> bool:
        return not self.failures


def run_conformance(
    target: Target,
    *,
    max_examples: int = 50,
    max_seconds: float | None = None,
    steps: int = 20,
    options: Options | None = None,
    versions: Sequence[str] = HANDSHAKE_REVISIONS,
    shrink: bool = True,
    shrink_seconds: float = 120.0,
    on_example: Callable[[int], None] | None = None,
) -> Report:
    """Run the machine against ``target``; stop at the first failing batch.

    ``max_seconds`` bounds the whole run (shrinking included); ``shrink_seconds`` the
    time spent shrinking after the first failure. When time runs out, failures are
    reported with the smallest steps found so far.
    """
    options = options or Options()
    started = time.monotonic()
    recorder = Recorder(
        on_example=on_example,
        deadline=None if max_seconds is None else started + max_seconds,
        shrink_seconds=shrink_seconds,
    )
    machine = machine_for(target, options, recorder, tuple(versions))
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    error: BaseException | None = None
    while recorder.examples < max_examples:
        if max_seconds is not None and time.monotonic() - started >= max_seconds:
            break
        batch = min(_BATCH, max_examples - recorder.examples)
        config = settings(
            max_examples=batch,
            stateful_step_count=steps,
            deadline=None,
            database=None,
            phases=phases,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=True,
            # The report is the Recorder's: Hypothesis' own lines (a seed to reproduce
            # the time budget running out, the steps before it) would only mislead.
            verbosity=Verbosity.quiet,
        )
        try:
            run_state_machine_as_test(machine, settings=config)
        except OutOfTime:
            break
        except (AssertionError, HypothesisException, BaseExceptionGroup) as exc:
            error = exc
            break
    failures = list(recorder.failures.values())
    if error is not None and not failures:
        failures = [Failure("harness", f"{type(error).__name__}: {error}", [])]
    return Report(target.describe(), recorder.examples, time.monotonic() - started, failures)


def write_replay(failure: Failure, path: Path, target: str, options: Options) -> Path:
    """Write ``failure`` as a replay file at ``path`` (directories are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "format": REPLAY_FORMAT,
        "property": failure.property,
        "detail": failure.detail,
        "target": target,
        "response_timeout": options.response_timeout,
        "tool_timeouts": dict(options.tool_timeouts),
        "steps": failure.steps,
    }
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_replay(path: Path) -> dict[str, Any]:
    """Read a replay file (checks its format)."""
    body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if body.get("format") != REPLAY_FORMAT or not isinstance(body.get("steps"), list):
        raise ValueError(f"{path} is not a {REPLAY_FORMAT} replay file")
    return body


def replay(
    target: Target, steps: Sequence[dict[str, Any]], options: Options | None = None
) -> Violation | None:
    """Perform ``steps`` against ``target``; the violation they cause, or ``None``."""
    options = options or Options()
    loop = LoopThread(target.clock)
    session = Session(target, loop.nursery, options)
    limit = options.step_limit
    try:
        for action in steps:
            loop.call(perform, session, action, limit=limit)
        if session.connection is not None:
            loop.call(perform, session, {"op": "close"}, limit=limit)
    except Violation as exc:
        return exc
    finally:
        with contextlib.suppress(Exception, trio.Cancelled):  # a crashed run: nothing to end
            loop.call(session.abort, limit=30)
        loop.stop()
        session.kill_children()
    return None
