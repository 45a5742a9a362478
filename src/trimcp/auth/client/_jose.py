"""The client's JOSE: DPoP proofs (RFC 9449) and client assertions (RFC 7523), signed
with joserfc (no hand-rolled crypto; hashlib only for the ``ath`` digest RFC 9449 §4.2
defines).

A :class:`DpopKey` is an ES256 key pair made for the client; its public JWK goes in
every proof's header and its thumbprint is what the authorization server binds tokens
to. Each proof has a fresh random ``jti`` and the current ``iat``; one sent with an
access token carries ``ath``, the token's SHA-256. Server nonces (RFC 9449 §8, §9) are
kept per origin by :class:`NonceBook`, for at most ``max_origins`` origins.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections import OrderedDict
from typing import Any, Final, final

try:
    from joserfc import jwt
    from joserfc.jwk import ECKey, OKPKey, RSAKey
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "trimcp.auth needs joserfc: install the extra, pip install 'trimcp[auth]'"
    ) from exc

from ._urls import origin_of, without_query

__all__ = ["DpopKey", "NonceBook", "SigningKey", "client_assertion", "load_signing_key"]

SigningKey = ECKey | RSAKey | OKPKey
DPOP_ALG: Final = "ES256"
_ASSERTION_LIFETIME: Final = 300


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@final
class DpopKey:
    """An ES256 DPoP key pair (see the module doc)."""

    def __init__(self, key: ECKey | None = None) -> None:
        self._key = key if key is not None else ECKey.generate_key("P-256", private=True)
        self.public_jwk: dict[str, Any] = dict(self._key.as_dict(private=False))
        self.thumbprint: str = self._key.thumbprint()

    def __repr__(self) -> str:
        return f"DpopKey(thumbprint={self.thumbprint!r})"

    def proof(
        self,
        method: str,
        url: str,
        *,
        now: float,
        access_token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A fresh proof for ``method`` ``url`` (see the module doc)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(18),
            "htm": method,
            "htu": without_query(url),
            "iat": int(now),
        }
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": DPOP_ALG, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key)


@final
class NonceBook:
    """The last DPoP nonce each origin sent (bounded; see the module doc)."""

    def __init__(self, max_origins: int = 16) -> None:
        self._nonces: OrderedDict[str, str] = OrderedDict()
        self._max = max_origins

    def get(self, url: str) -> str | None:
        return self._nonces.get(origin_of(url))

    def put(self, url: str, nonce: str | None) -> bool:
        """Remember ``nonce`` for ``url``'s origin; True if it is new."""
        if not nonce or len(nonce) > 1024 or not nonce.isprintable():
            return False
        origin = origin_of(url)
        new = self._nonces.get(origin) != nonce
        self._nonces[origin] = nonce
        self._nonces.move_to_end(origin)
        while len(self._nonces) > self._max:
            self._nonces.popitem(last=False)
        return new


def load_signing_key(key: str | bytes | SigningKey) -> SigningKey:
    """A private key from PEM text, or as given."""
    if isinstance(key, ECKey | RSAKey | OKPKey):
        return key
    data = key.encode("ascii") if isinstance(key, str) else key
    for kind in (ECKey, RSAKey, OKPKey):
        try:
            loaded: SigningKey = kind.import_key(data)
        except Exception:
            continue
        if loaded.is_private:
            return loaded
    raise ValueError("a private EC, RSA or OKP key (PEM) is needed to sign client assertions")


def client_assertion(
    client_id: str, audience: str, key: SigningKey, algorithm: str, *, now: float
) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 §3) for ``audience``."""
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": int(now),
        "exp": int(now) + _ASSERTION_LIFETIME,
        "jti": secrets.token_urlsafe(18),
    }
    return jwt.encode({"alg": algorithm, "typ": "JWT"}, claims, key, algorithms=[algorithm])
