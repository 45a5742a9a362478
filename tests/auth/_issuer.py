"""A test authorization server's signing side: keys, a key set, minted tokens."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

from joserfc import jwk, jwt

from trimcp.auth import JwksCache, JwtVerifier, ResourceServer
from trimcp.transports.http import FetchError

ISSUER = "https://as.example"
JWKS_URL = "https://as.example/jwks"
#: The resource the test app serves: its endpoint on the local address the ASGI
#: helper's requests arrive on.
RESOURCE = "http://127.0.0.1:8000/mcp"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """Signing keys (ES256) and tokens for them; ``fetch`` serves the key set."""

    def __init__(self, kid: str = "k1") -> None:
        self.keys: dict[str, jwk.ECKey] = {}
        self.add_key(kid)
        self.current = kid
        self.fetched = 0
        self.down = False
        #: What the key set document is replaced with, when set (bad documents).
        self.document: bytes | None = None

    def add_key(self, kid: str) -> jwk.ECKey:
        key = jwk.ECKey.generate_key("P-256", private=True, parameters={"kid": kid})
        self.keys[kid] = key
        return key

    def rotate(self, kid: str) -> None:
        """A new current key; the old ones leave the set."""
        key = self.add_key(kid)
        self.keys = {kid: key}
        self.current = kid

    def jwks(self) -> bytes:
        keys = [key.as_dict(private=False) for key in self.keys.values()]
        return json.dumps({"keys": keys}).encode()

    async def fetch(self, url: str) -> bytes:
        self.fetched += 1
        if self.down:
            raise FetchError("cannot connect to as.example")
        return self.document if self.document is not None else self.jwks()

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "sub": "alice",
            "client_id": "client-1",
            "aud": RESOURCE,
            "iat": now,
            "exp": now + 600,
            "scope": "mcp:tools",
            "jti": secrets.token_hex(8),
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(
        self,
        *,
        key: jwk.ECKey | None = None,
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        key = key or self.keys[self.current]
        head = {"alg": "ES256", "typ": "at+jwt", "kid": key.kid, **(header or {})}
        return jwt.encode(head, self.claims(**claims), key)

    def verifier(self, **options: Any) -> JwtVerifier:
        return JwtVerifier(issuer=ISSUER, jwks=JwksCache(JWKS_URL, fetcher=self.fetch), **options)

    def resource_server(self, **options: Any) -> ResourceServer:
        options.setdefault("authorization_servers", [ISSUER])
        return ResourceServer(self.verifier(), **options)


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A JWT put together by hand (for forgeries no library would sign)."""
    parts = [json.dumps(header).encode(), json.dumps(claims).encode()]
    return ".".join([b64(p) for p in parts] + [b64(signature)])


def ath(token: str) -> str:
    return b64(hashlib.sha256(token.encode()).digest())


class DpopKey:
    """A client's DPoP key and the proofs it signs."""

    def __init__(self) -> None:
        self.key = jwk.ECKey.generate_key("P-256", private=True)
        self.jkt = self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        token: str | None,
        *,
        header: dict[str, Any] | None = None,
        key: jwk.ECKey | None = None,
        **claims: Any,
    ) -> str:
        signer = key or self.key
        head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": signer.as_dict(private=False)}
        head.update(header or {})
        body: dict[str, Any] = {
            "jti": secrets.token_hex(12),
            "htm": method,
            "htu": url,
            "iat": int(time.time()),
        }
        if token is not None:
            body["ath"] = ath(token)
        body.update(claims)
        return jwt.encode(head, {k: v for k, v in body.items() if v is not None}, signer)
