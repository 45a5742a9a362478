"""A stdio MCP server that exits on a string request id, or a line that is not JSON.

A realistic defect (servers that assume integer ids), and one the machine meets at once:
its pings use string ids. Used by the CLI tests.

Otherwise it answers ``initialize``, ``ping`` and ``tools/list`` and refuses the rest
with -32601, which is enough to pass every other check the machine makes.
"""

from __future__ import annotations

import json
import sys


def reply(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            sys.exit(3)  # the defect: bad input kills the server
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            if isinstance(message, dict) and "method" in message:
                continue  # a notification
            if isinstance(message, dict) and ("result" in message or "error" in message):
                continue
            error = {"code": -32600, "message": "invalid request"}
            reply({"jsonrpc": "2.0", "id": None, "error": error})
            continue
        request_id, method = message["id"], message["method"]
        if isinstance(request_id, str):
            sys.exit(4)  # the defect: only integer ids were expected
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad id"}})
        elif method == "initialize":
            params = message.get("params") or {}
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {},
                "serverInfo": {"name": "broken-stdio", "version": "0"},
            }
            reply({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "ping":
            reply({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            reply({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
