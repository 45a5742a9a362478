"""The protocol era as a benchmark dimension (``--era``).

* the raw NDJSON client's stateless-era wire: no ``initialize``, every request valid
  against the 2026-07-28 schema (``_meta`` included), the fan-out's input rounds
  answered and retried, ``notifications/cancelled`` for a cancelled call (stdio);
* the HTTP headers of the raw h11 client, read back by trimcp's own decoder;
* each metric in the stateless era, run in-process (no worker) for trimcp on memory,
  stdio and HTTP and for the raw client on stdio and HTTP: calls counted, every
  parked handler observed its cancellation, no leak, the fan-out's reverse calls
  answered; the SDK's 2026-07-28 mode where it has one, and its fan-out reported
  unsupported with the reason;
* a tiny two-era run through the command line: every sample carries its era, and
  the tables, summary and ratios are per (transport, era).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from trimcp.bench._cli import build_parser, settings_of
from trimcp.bench._core import Implementation, Workload
from trimcp.bench._era import SAMPLING_ANSWER, http_headers, stamp
from trimcp.bench._metrics import METRICS
from trimcp.bench._ndjson import LineClient
from trimcp.bench._registry import load
from trimcp.transports.http import decode_header_value

from ..stateless._support import check

STATELESS = Workload(payload_bytes=8, era="stateless")
QUICK: dict[str, dict[str, Any]] = {
    "throughput": {"concurrency": 10, "warmup": 0.05, "duration": 0.2},
    "parked": {"parked": 20, "timeout": 10.0, "task_slack": 16},
    "fanout": {"fanout": 5, "rounds": 2},
}


def test_era_option_defaults_to_handshake_and_takes_a_list() -> None:
    parser = build_parser()
    assert settings_of(parser.parse_args([])).eras == ("handshake",)
    settings = settings_of(parser.parse_args(["--era", "handshake,stateless"]))
    assert settings.eras == ("handshake", "stateless")
    assert settings.command("memory", "throughput", 10, "stateless")["workload"]["era"] == (
        "stateless"
    )
    with pytest.raises(SystemExit):
        settings_of(parser.parse_args(["--era", "modern"]))


async def test_raw_line_client_speaks_the_stateless_era() -> None:
    """What the raw client writes, answered by a scripted server: an input round, then
    the result; then a call that is cancelled."""
    sent: list[dict[str, Any]] = []
    client: LineClient

    async def send(line: str) -> None:
        message = json.loads(line)
        sent.append(message)
        if "id" not in message:
            return
        params = message["params"]
        if params["name"] == "park":
            return  # never answered: the caller is cancelled
        if params["name"] == "echo":
            text = params["arguments"]["text"]
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        elif "inputResponses" in params:
            result = {"content": [{"type": "text", "text": "2"}]}
        else:
            asked = {"messages": [], "maxTokens": 1}
            sample = {"method": "sampling/createMessage", "params": asked}
            result = {
                "resultType": "input_required",
                "inputRequests": {"a": sample, "b": sample},
                "requestState": "opaque",
            }
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        answers.send_nowait(json.dumps(answer))

    async def lines() -> Any:
        async for line in answered:
            yield line

    answers, answered = trio.open_memory_channel[str](16)
    client = LineClient(send, "stateless")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.read, lines())
        target = await client.target(Workload(), ours=True)
        assert target.fanout is not None
        await target.fanout(2)
        with trio.move_on_after(0) as scope:  # a cancelled call: deadline already passed
            assert target.park is not None
            await target.park()
        assert scope.cancelled_caught
        nursery.cancel_scope.cancel()
    methods = [m.get("method") for m in sent]
    assert "initialize" not in methods
    assert methods.count("notifications/cancelled") == 1
    requests = [m for m in sent if "id" in m]
    assert len(requests) == 4  # the echo, the fan-out's two rounds, the parked call
    for request in requests:
        check("CallToolRequest", request)
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"sampling": {}}
    assert "inputResponses" not in requests[1]["params"]
    retry = requests[2]["params"]
    assert retry["requestState"] == "opaque"
    assert retry["inputResponses"] == {"a": SAMPLING_ANSWER, "b": SAMPLING_ANSWER}
    check("CreateMessageResult", SAMPLING_ANSWER)
    cancel = next(m for m in sent if m.get("method") == "notifications/cancelled")
    check("CancelledNotification", cancel)
    assert cancel["params"]["requestId"] == requests[-1]["id"]


def test_raw_http_headers_match_the_body() -> None:
    params = stamp({"name": "échø tool", "arguments": {}})
    headers = dict(http_headers("tools/call", params))
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"].startswith("=?base64?")
    assert decode_header_value(headers["mcp-name"]) == "échø tool"
    assert dict(http_headers("tools/call", stamp({"name": "echo"})))["mcp-name"] == "echo"
    assert "mcp-name" not in dict(http_headers("tools/list", stamp({})))


def _measure(impl: Implementation, transport: str, metric: str) -> dict[str, Any]:
    driver = impl.drivers[transport]()

    async def main() -> dict[str, Any]:
        return await METRICS[metric](impl, driver, STATELESS, dict(QUICK[metric]))

    return impl.runtime.run(main)


def _check_real(metric: str, sample: dict[str, Any]) -> None:
    assert "unsupported" not in sample, sample
    if metric == "throughput":
        assert sample["calls"] > 0
        assert sample["calls_per_s"] > 0
    elif metric == "parked":
        assert sample["parked"] == sample["observed"] == 20
        assert sample["all_observed"], sample
        assert sample["leak_free"], sample
    else:
        assert sample["n"] == 5
        assert sample["one_s"] > 0
        assert sample["fanout_s"] > 0


@pytest.mark.parametrize(
    ("name", "transport"),
    [
        ("trimcp", "memory"),
        ("trimcp", "stdio"),
        ("trimcp", "http"),
        ("raw-trimcp", "stdio"),
        ("raw-trimcp", "http"),
    ],
)
def test_stateless_metrics_are_real(name: str, transport: str) -> None:
    impl = load(name)
    for metric in ("throughput", "parked", "fanout"):
        _check_real(metric, _measure(impl, transport, metric))


def test_trimcp_fanout_beyond_one_input_round_is_measured() -> None:
    # 100 concurrent reverse calls exceed what one input round carries: the server
    # spreads them over several rounds and the fan-out completes.
    impl = load("trimcp")
    driver = impl.drivers["memory"]()

    async def main() -> dict[str, Any]:
        return await METRICS["fanout"](impl, driver, STATELESS, {"fanout": 100, "rounds": 1})

    sample = trio.run(main)
    assert "unsupported" not in sample, sample
    assert sample["n"] == 100
    assert sample["fanout_s"] > sample["one_s"] > 0


def test_sdk_modern_mode_in_memory() -> None:
    pytest.importorskip("mcp")
    impl = load("sdk")
    _check_real("throughput", _measure(impl, "memory", "throughput"))
    _check_real("parked", _measure(impl, "memory", "parked"))
    fanout = _measure(impl, "memory", "fanout")
    assert "NoBackChannelError" in fanout["unsupported"]


def test_two_era_run_records_the_era_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    command = [
        sys.executable, "-m", "trimcp.bench", "--transport", "memory", "--impl", "trimcp,floor",
        "--era", "handshake,stateless", "--metric", "throughput", "--concurrency", "10",
        "--repeats", "1", "--warmup", "0.05", "--duration", "0.2", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["settings"]["eras"] == ["handshake", "stateless"]
    seen = {(r["implementation"], r["era"]) for r in data["samples"]}
    assert seen == {(n, e) for n in ("trimcp", "floor") for e in ("handshake", "stateless")}
    for record in data["samples"]:
        assert record["sample"]["calls"] > 0
        assert record.get("era_free", False) == (record["implementation"] == "floor")
    summary = data["summary"]
    assert set(summary) == {"memory handshake", "memory stateless"}
    for block in summary.values():
        assert block["throughput"]["calls/s"]["10"]["trimcp/floor"] > 0
    assert "memory stateless / throughput: calls/s" in done.stdout
    assert "no MCP, no era" in done.stdout
