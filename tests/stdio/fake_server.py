"""Misbehaving stdio servers, chosen by ``argv[1]``; they speak just enough MCP.

* ``exit-mid-reply``: initializes, then answers ``tools/call`` with half a line and exits.
* ``noise``: writes non-JSON lines on stdout around every reply; ``tools/call`` answers
  with the number of error responses it received (the client's answers to the noise).
* ``ignore-sigterm``: initializes, writes its pid to ``argv[2]``, ignores SIGTERM and
  stdin EOF, and sleeps.
* ``close-stdin``: initializes, closes its stdin when a ``ping`` comes, answers it and
  waits for a signal (writing to it fails with ``EPIPE`` from then on).
* ``write-at-exit``: at stdin EOF writes 2 MiB of log notifications to stdout (more
  than a pipe holds, so they need a reader), then ``written`` or ``EPIPE`` to ``argv[2]``.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def noise(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def initialize_result(request_id: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"},
        },
    }


def answer(mode: str, message: dict[str, object], errors_seen: int) -> None:
    method = message.get("method")
    if method == "initialize":
        if mode == "noise":
            noise("{not json either")
        send(initialize_result(message["id"]))
        if mode == "ignore-sigterm":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open(sys.argv[2], "w") as f:
                f.write(str(os.getpid()))
    elif method == "tools/call":
        if mode == "exit-mid-reply":
            sys.stdout.write('{"jsonrpc": "2.0", "id": ' + str(message["id"]) + ', "result": {')
            sys.stdout.flush()
            os._exit(3)
        if mode == "noise":
            noise("DEBUG: handling tools/call")
        text = f"errors seen: {errors_seen}"
        result = {"content": [{"type": "text", "text": text}]}
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    elif method == "ping":
        if mode == "close-stdin":
            os.close(0)  # before the answer: the client's next write fails
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        if mode == "close-stdin":
            while True:
                signal.pause()  # until SIGTERM


def main() -> None:
    mode = sys.argv[1]
    errors_seen = 0
    if mode == "noise":
        noise("Starting fake server... (not JSON)")
    for line in sys.stdin:
        message = json.loads(line)
        if "error" in message and "method" not in message:
            errors_seen += 1
        else:
            answer(mode, message, errors_seen)
    if mode == "ignore-sigterm":
        while True:
            signal.pause()  # until SIGKILL
    if mode == "write-at-exit":
        write_at_exit(sys.argv[2])


def write_at_exit(report: str) -> None:
    line = {"jsonrpc": "2.0", "method": "notifications/message"}
    params = {"level": "info", "data": "shutting down " + "." * 1000}
    outcome = "written"
    try:
        for _ in range(2048):
            send({**line, "params": params})
    except BrokenPipeError:
        outcome = "EPIPE"
    with open(report, "w") as f:
        f.write(outcome)


if __name__ == "__main__":
    main()
