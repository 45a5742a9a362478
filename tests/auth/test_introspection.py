"""Opaque tokens checked by introspection (RFC 7662)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any
from urllib.parse import parse_qs

import pytest
import trio
import trio.testing

from trimcp.auth import IntrospectionVerifier, InvalidToken, VerifierUnavailable
from trimcp.transports.http import FetchedResponse, FetchError

from ._issuer import ISSUER, RESOURCE


class Endpoint:
    """A fake introspection endpoint: answers by token."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.calls: list[tuple[dict[str, list[str]], dict[str, str]]] = []
        self.status = 200
        self.down = False

    async def post(self, url: str, body: bytes, headers: list[tuple[str, str]]) -> FetchedResponse:
        if self.down:
            raise FetchError("cannot connect to as.example")
        form = parse_qs(body.decode())
        self.calls.append((form, dict(headers)))
        answer = self.answers.get(form["token"][0], {"active": False})
        data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        return FetchedResponse(self.status, (("content-type", "application/json"),), data)


def active(**extra: Any) -> dict[str, Any]:
    return {
        "active": True,
        "sub": "carol",
        "client_id": "c-9",
        "scope": "mcp:tools",
        "aud": RESOURCE,
        "iss": ISSUER,
        "exp": int(time.time()) + 600,
        **extra,
    }


def verifier(endpoint: Endpoint, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(
        "https://as.example/introspect",
        client_id="rs",
        client_secret="s3cret",
        issuer=ISSUER,
        poster=endpoint.post,
        **options,
    )


async def test_an_active_token_gives_its_principal_and_authenticates_the_call() -> None:
    endpoint = Endpoint()
    endpoint.answers["tok"] = active()
    principal = await verifier(endpoint).verify("tok")
    assert (principal.subject, principal.client_id, principal.scopes) == (
        "carol",
        "c-9",
        {"mcp:tools"},
    )
    form, headers = endpoint.calls[0]
    assert form == {"token": ["tok"], "token_type_hint": ["access_token"]}
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"rs:s3cret").decode()


async def test_answers_are_cached_by_digest_within_the_ttl(
    clock: trio.testing.MockClock,
) -> None:
    endpoint = Endpoint()
    endpoint.answers["tok"] = active()
    check = verifier(endpoint, cache_ttl=30)
    for _ in range(5):
        await check.verify("tok")
    assert len(endpoint.calls) == 1
    assert all("tok" not in key for key in check._cache)
    clock.jump(31)
    await check.verify("tok")
    assert len(endpoint.calls) == 2


async def test_the_cache_is_bounded() -> None:
    endpoint = Endpoint()
    check = verifier(endpoint, cache_size=3)
    for n in range(10):
        endpoint.answers[f"t{n}"] = active()
        await check.verify(f"t{n}")
    assert len(check._cache) == 3


@pytest.mark.parametrize(
    "answer",
    [
        {"active": False},
        {"active": "true"},
        active(iss="https://evil.example"),
        active(exp=int(time.time()) - 3600),
    ],
)
async def test_inactive_or_foreign_tokens_are_invalid(answer: dict[str, Any]) -> None:
    endpoint = Endpoint()
    endpoint.answers["tok"] = answer
    with pytest.raises(InvalidToken):
        await verifier(endpoint).verify("tok")


async def test_an_answer_without_audience_names_none_unless_assumed() -> None:
    endpoint = Endpoint()
    endpoint.answers["tok"] = active(aud=None)
    assert (await verifier(endpoint).verify("tok")).audience == ()
    assumed = await verifier(endpoint, assume_audience=RESOURCE).verify("tok")
    assert assumed.audience == (RESOURCE,)


@pytest.mark.parametrize("problem", ["down", "500", "not json", "a list"])
async def test_a_failing_endpoint_is_unavailable(problem: str) -> None:
    endpoint = Endpoint()
    endpoint.answers["tok"] = {
        "down": active(),
        "500": active(),
        "not json": b"<html>",
        "a list": [],
    }[problem]
    endpoint.down = problem == "down"
    endpoint.status = 500 if problem == "500" else 200
    with pytest.raises(VerifierUnavailable):
        await verifier(endpoint).verify("tok")


async def test_a_hanging_endpoint_is_bounded(clock: trio.testing.MockClock) -> None:
    async def hang(url: str, body: bytes, headers: list[tuple[str, str]]) -> FetchedResponse:
        await trio.sleep_forever()
        raise AssertionError

    check = IntrospectionVerifier("https://as.example/i", poster=hang, timeout=3)
    with pytest.raises(VerifierUnavailable):
        await check.verify("tok")
    assert trio.current_time() == pytest.approx(3)
