"""https through trio.SSLStream, against a self-signed certificate made with openssl."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import pytest
import trio
import trio.testing

import trimcp

from ._fake import mcp_app, start_server

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI")


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.02)


async def make_cert(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    await trio.run_process(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert),
        ],
        capture_stdout=True,
        capture_stderr=True,
    )  # fmt: skip
    return cert, key


async def test_https_with_a_trusted_self_signed_certificate(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    cert, key = await make_cert(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    client_context = ssl.create_default_context(cafile=str(cert))
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(), ssl_context=server_context)
        assert server.url.startswith("https://127.0.0.1:")
        with trio.fail_after(30):
            transport = trimcp.streamable_http(server.url, ssl_context=client_context, listen=False)
            async with trimcp.open_client(transport, era="handshake") as client:
                answer = await client.call_tool("add", {"a": 2, "b": 3})
                await client.ping()
        nursery.cancel_scope.cancel()
    assert answer.content[0].text == "sum=5"  # type: ignore[union-attr]
    assert len({r.connection for r in server.of("POST")}) == 1  # kept alive over TLS


async def test_https_refuses_an_untrusted_certificate(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    cert, key = await make_cert(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    async with trio.open_nursery() as nursery:
        server = await start_server(nursery, mcp_app(), ssl_context=server_context)
        with trio.fail_after(30), pytest.raises(trimcp.ConnectionClosedError) as failed:
            async with trimcp.open_client(trimcp.streamable_http(server.url), era="handshake"):
                pass
        nursery.cancel_scope.cancel()
    assert "TLS handshake" in str(failed.value.__cause__)
