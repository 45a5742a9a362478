"""The DNS-rebinding guard: strict Host/Origin parsing, loopback and non-loopback arrivals,
``allowed_hosts`` on every entry point (B31-B33)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

import trimcp
from trimcp.cli import build_parser
from trimcp.server import host_policy_for
from trimcp.transports.http import HostPolicy
from trimcp.transports.http._guards import Headers, HttpError
from trimcp.transports.http._hosts import check_host_and_origin, parse_authority, parse_origin

from ._asgi import BASE, INIT_PARAMS, rpc, running
from ._fixture import make_server

INIT = rpc(1, "initialize", INIT_PARAMS)
LOOPBACK = {"server": ("127.0.0.1", 8000)}
FAR = {"server": ("10.0.0.5", 8000)}


def judge(scope: dict[str, Any], policy: HostPolicy | None = None, **headers: str) -> int:
    """The status the guard gives (200: accepted)."""
    raw = [(k.replace("_", "-").encode(), v.encode("latin-1")) for k, v in headers.items()]
    try:
        check_host_and_origin(policy or HostPolicy(), scope, Headers(raw))
    except HttpError as exc:
        return exc.status
    return 200


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("localhost:8000@evil.example", 400),
        ("localhost@evil.example", 400),
        ("user@localhost", 400),
        ("localhost:8000/evil.example", 400),
        ("localhost:abc", 400),
        ("localhost:99999", 400),
        ("localhost:80:80", 400),
        ("[::1", 400),
        ("[::1]x", 400),
        ("local host", 400),
        ("localhost%2eevil.example", 400),
        ("evil.example#localhost", 400),
        ("", 400),
        ("localhost.evil", 403),
        ("127.0.0.1.evil.example", 403),
        ("evil.example", 403),
        ("10.0.0.5:8000", 403),
        ("LOCALHOST:8000", 200),
        ("localhost.", 200),
        ("127.0.0.1:80", 200),
        ("[0:0:0:0:0:0:0:1]:8000", 200),
    ],
)
def test_host_is_parsed_strictly_on_loopback(host: str, status: int) -> None:
    assert judge(LOOPBACK, host=host) == status


def test_two_host_headers_are_refused() -> None:
    raw = [(b"host", b"localhost"), (b"host", b"evil.example")]
    with pytest.raises(HttpError) as caught:
        check_host_and_origin(HostPolicy(), LOOPBACK, Headers(raw))
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://localhost:8000", 200),
        ("https://[::1]", 200),
        ("http://localhost:80@evil.example", 403),
        ("http://user@localhost", 403),
        ("http://localhost/", 403),
        ("http://localhost:8000/path", 403),
        ("http://localhost?x", 403),
        ("http://localhost.evil.example", 403),
        ("ws://localhost", 403),
        ("null", 403),
        ("", 403),
    ],
)
def test_origin_is_parsed_strictly(origin: str, status: int) -> None:
    assert judge(LOOPBACK, host="localhost:8000", origin=origin) == status


def test_non_loopback_arrivals_accept_ip_literals_and_allowed_names_only() -> None:
    assert judge(FAR, host="attacker.example") == 403
    assert judge(FAR, host="attacker.example:8000", origin="http://attacker.example:8000") == 403
    assert judge(FAR, host="10.0.0.5:8000") == 200
    assert judge(FAR, host="[2001:db8::1]:8000") == 200
    assert judge(FAR, host="10.0.0.5:8000", origin="http://10.0.0.5:8000") == 200
    assert judge(FAR, host="10.0.0.5:8000", origin="http://10.0.0.5:9000") == 403
    assert judge(FAR, host="10.0.0.5:8000", origin="http://attacker.example") == 403
    named = HostPolicy(allowed_hosts={"MCP.example.com"})
    assert judge(FAR, named, host="mcp.example.com:443") == 200
    assert judge(FAR, named, host="mcp.example.com", origin="https://mcp.example.com") == 200
    assert judge(FAR, named, host="10.0.0.5", origin="https://mcp.example.com") == 200
    assert judge(FAR, named, host="attacker.example") == 403
    anything = HostPolicy(allowed_hosts={"*"})
    assert judge(FAR, anything, host="attacker.example") == 200
    assert judge(FAR, anything, host="a.example", origin="http://b.example") == 403
    # A server that says it is bound to loopback holds every request to loopback names.
    assert judge(FAR, HostPolicy(loopback=True), host="10.0.0.5") == 403


@given(st.text(max_size=20), st.text(max_size=20))
def test_a_host_naming_the_attacker_never_passes(prefix: str, suffix: str) -> None:
    value = prefix + "evil.example" + suffix
    try:
        encoded = value.encode("latin-1").decode("latin-1")
    except UnicodeEncodeError:
        return
    assert judge(LOOPBACK, host=encoded) in (400, 403)
    assert judge(FAR, host=encoded) in (400, 403)
    assert judge(LOOPBACK, host="localhost", origin="http://" + encoded) == 403


@given(st.text(max_size=40))
def test_parsing_accepts_only_what_it_can_name(value: str) -> None:
    parsed = parse_authority(value)
    if parsed is not None:
        host, port = parsed
        assert host == host.lower()
        assert not host.endswith(".")
        assert "@" not in host
        assert "/" not in host
        assert " " not in host
        assert port is None or 0 <= port <= 65535
    origin = parse_origin(value)
    if origin is not None:
        assert origin[0] in ("http", "https")


async def test_asgi_app_refuses_unknown_hosts_on_other_addresses() -> None:
    far = ("10.0.0.5", 8000)
    async with running(make_server()) as client:
        base = dict(BASE)
        evil = await client.request("POST", INIT, {**base, "host": "attacker.example"}, server=far)
        assert evil.status == 403
        assert evil.json["id"] is None
        assert len(client.app.manager) == 0
        ip = await client.request("POST", INIT, {**base, "host": "10.0.0.5:8000"}, server=far)
        assert ip.status == 200
    async with running(make_server(), allowed_hosts=["mcp.example.com"]) as client:
        named = {**dict(BASE), "host": "mcp.example.com", "origin": "https://mcp.example.com"}
        assert (await client.request("POST", INIT, named, server=far)).status == 200
        mixed = {**named, "host": "mcp.example.com:8000@evil.example"}
        assert (await client.request("POST", INIT, mixed, server=far)).status == 400


def test_allowed_hosts_or_a_policy_not_both(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ValueError, match="not both"):
        trimcp.asgi_app(make_server(), allowed_hosts=["a"], host_policy=HostPolicy())
    with caplog.at_level(logging.WARNING, logger="trimcp.server"):
        policy = host_policy_for("0.0.0.0", None, None)
    assert policy.loopback is None
    assert not policy.allowed_hosts
    assert "IP literal" in caplog.text
    assert host_policy_for("127.0.0.1", None, ["a.example"]).loopback is True
    assert host_policy_for("::1", None, None).loopback is True


def test_cli_takes_allowed_hosts() -> None:
    args = build_parser().parse_args(
        ["serve", "x.py", "--http", "0.0.0.0:0", "--allow-host", "a.example", "--allow-host", "*"]
    )
    assert args.allowed_hosts == ["a.example", "*"]
    assert build_parser().parse_args(["serve", "x.py"]).allowed_hosts is None


async def test_serve_http_refuses_a_smuggled_host(engine: str) -> None:
    server = make_server()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: trimcp.serve_http(
                server, port=0, engine=engine, task_status=task_status
            )
        )
        for host, status in ((f"localhost:{port}@evil.example", b"400"), ("localhost", b"200")):
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nContent-Length: {len(INIT)}\r\n"
                "Connection: close\r\n\r\n"
            )
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(head.encode() + INIT)
                reply = b""
                with trio.fail_after(10):
                    while chunk := await stream.receive_some(65536):
                        reply += chunk
            assert reply.startswith(b"HTTP/1.1 " + status), reply[:100]
        nursery.cancel_scope.cancel()
