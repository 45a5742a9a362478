"""One implementation in its own process, measuring on command.

``python -m trimcp.bench._worker IMPL`` prints one JSON line describing itself (or why it
is unavailable), then reads commands, one JSON object a line, from stdin::

    {"metric": "throughput", "transport": "memory", "workload": {...}, "params": {...}}

and answers each with one JSON line: ``{"ok": true, "sample": {...}}`` or
``{"ok": false, "error": "..."}``. Each command runs in a fresh event loop with a fresh
client/server pair. The protocol uses a private copy of stdout; anything the libraries
print goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import IO, Any

from ._core import Implementation, Workload
from ._era import unsupported_in
from ._gc import apply_from_env, describe
from ._metrics import METRICS
from ._ndjson import ServerGone
from ._registry import load

__all__ = ["main"]


def _protocol_stream() -> IO[str]:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _execute(impl: Implementation, command: dict[str, Any]) -> dict[str, Any]:
    metric = METRICS[command["metric"]]
    make_driver = impl.drivers.get(command["transport"])
    if make_driver is None:
        return {"ok": False, "error": f"{impl.name} has no {command['transport']} transport"}
    workload = Workload.from_json(command.get("workload", {}))
    driver = make_driver()

    async def main() -> dict[str, Any]:
        return await metric(impl, driver, workload, command["params"])

    try:
        sample = impl.runtime.run(main)
    except Exception as exc:
        # A driver that cannot do this at all (an era it does not speak) says so.
        unsupported = unsupported_in(exc)
        if unsupported is None:
            raise
        sample = {"unsupported": str(unsupported)}
    return {"ok": True, "sample": sample}


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _the_error(exc: BaseException) -> BaseException:
    """The one real error inside nested exception groups (cancellations aside), or
    *exc* itself when there are several."""
    real = [e for e in _leaves(exc) if type(e).__name__ != "Cancelled"]
    return real[0] if len(real) == 1 else exc


def _why_unavailable(exc: Exception) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        package = exc.name.split(".")[0]
        return (
            f"needs the Python package {package!r}: pip install 'trimcp[bench]' "
            f"(or pip install {package})"
        )
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str]) -> int:
    out = _protocol_stream()
    try:
        impl = load(argv[0])
    except Exception as exc:
        out.write(json.dumps({"available": False, "reason": _why_unavailable(exc)}))
        out.write("\n")
        return 0
    apply_from_env()  # after loading: the implementation's modules are frozen too
    hello = {
        "available": True,
        "name": impl.name,
        "description": impl.description,
        "runtime": impl.runtime.name,
        "transports": sorted(impl.drivers),
        "metrics": list(impl.metrics) if impl.metrics is not None else None,
        "absent": dict(impl.absent),
        "versions": dict(impl.versions),
        "python": sys.version.split()[0],
        "gc": describe(),
    }
    out.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = _execute(impl, json.loads(line))
        except BaseException as exc:  # report, keep serving
            error = _the_error(exc)
            if not isinstance(error, ServerGone | AssertionError):
                traceback.print_exc()  # unexpected: the traceback is the useful part
            answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
