"""Verifying JWT access tokens (RFC 9068) against the issuer's key set.

:class:`JwtVerifier` takes a token apart only with joserfc: the header is read to pick
the key (``kid``) and refuse what is never acceptable before any signature work: an
algorithm outside ``algorithms`` (``none`` and the symmetric ``HS*`` family are never
in it by default), a ``typ`` that is not an access token's (a DPoP proof, an ID token
typed otherwise). Then the signature is checked with the key of :class:`JwksCache`, and
the claims: ``iss`` equals the issuer, ``exp`` is required and in the future, ``nbf``
and ``iat`` are not in the future, each within ``leeway`` seconds of clock skew, and
``aud`` is present. Whether ``aud`` names this resource is the
:class:`~._resource.ResourceServer`'s check, the same for every verifier (RFC 8707: a
token issued for another resource is refused, so no token meant to be passed on is
ever accepted).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, final

from joserfc import jws, jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)

from ._jose import asymmetric_algorithms
from ._jwks import JwksCache
from ._principal import InvalidToken, Principal, parse_scopes

__all__ = [
    "DEFAULT_ALGORITHMS",
    "DEFAULT_LEEWAY",
    "JwtVerifier",
    "audiences",
    "principal_from_claims",
]

logger = logging.getLogger("trimcp.auth")

DEFAULT_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "ES256", "ES384", "EdDSA")
"""Asymmetric signature algorithms accepted by default (never ``none``, never ``HS*``)."""
DEFAULT_LEEWAY: Final = 60
"""Seconds of clock skew tolerated on ``exp``, ``nbf`` and ``iat``."""
_ACCESS_TOKEN_TYPES: Final = frozenset({"at+jwt", "application/at+jwt", "jwt"})


@final
class JwtVerifier:
    """Verifies JWT access tokens; see the module doc.

    Args:
      issuer: the authorization server's issuer identifier (``iss`` must equal it).
      jwks_url: its ``jwks_uri`` (or pass a ready ``jwks`` cache with its own bounds).
      algorithms: the signature algorithms accepted.
      leeway: seconds of clock skew tolerated.
      clock: Unix seconds (tests pass a fake one).
    """

    def __init__(
        self,
        *,
        issuer: str,
        jwks_url: str | None = None,
        jwks: JwksCache | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: int = DEFAULT_LEEWAY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if jwks is None:
            if jwks_url is None:
                raise ValueError("a JwtVerifier needs jwks_url or jwks")
            jwks = JwksCache(jwks_url)
        self.issuer = issuer
        self.jwks = jwks
        self.algorithms = asymmetric_algorithms(algorithms, "access tokens")
        self.leeway = leeway
        self.clock = clock

    async def verify(self, token: str) -> Principal:
        """The principal of ``token`` if it is a valid access token of the issuer;
        :class:`InvalidToken` otherwise (``VerifierUnavailable`` without keys)."""
        header = _header(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken("the token's signing algorithm is not accepted")
        typ = header.get("typ")
        if typ is not None and (not isinstance(typ, str) or typ.lower() not in _ACCESS_TOKEN_TYPES):
            raise InvalidToken("the token is not an access token")
        kid = header.get("kid")
        key = await self.jwks.key(kid if isinstance(kid, str) else None)
        try:
            claims: dict[str, Any] = jwt.decode(token, key, algorithms=[alg]).claims
        except BadSignatureError:
            raise InvalidToken("the token's signature does not verify") from None
        except (JoseError, ValueError, TypeError):
            raise InvalidToken("the token is malformed") from None
        self._check_claims(claims)
        return principal_from_claims(claims, audiences(claims.get("aud")))

    def _check_claims(self, claims: dict[str, Any]) -> None:
        registry = jwt.JWTClaimsRegistry(
            now=int(self.clock()),
            leeway=self.leeway,
            iss={"essential": True, "value": self.issuer},
            exp={"essential": True},
            aud={"essential": True},
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            raise InvalidToken("the token has expired") from None
        except MissingClaimError as exc:
            raise InvalidToken(f"the token lacks the {exc.claim!r} claim") from None
        except InvalidClaimError as exc:
            raise InvalidToken(f"the token's {exc.claim!r} claim is not acceptable") from None
        except (JoseError, ValueError, TypeError):
            raise InvalidToken("the token's claims are not acceptable") from None


def _header(token: str) -> dict[str, Any]:
    """The protected header of a compact JWS, or :class:`InvalidToken`."""
    if token.count(".") != 2:
        raise InvalidToken("the token is not a signed JWT")
    try:
        header: Any = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("the token is malformed") from None
    if not isinstance(header, dict):
        raise InvalidToken("the token is malformed")
    return header


def audiences(value: object) -> tuple[str, ...]:
    """The audiences of an ``aud`` claim (a string or a list of strings)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def principal_from_claims(claims: dict[str, Any], audience: tuple[str, ...]) -> Principal:
    """The principal a verified token's claims (or an introspection answer) describe."""
    sub = claims.get("sub")
    client_id = claims.get("client_id", claims.get("azp"))
    iss = claims.get("iss")
    exp = claims.get("exp")
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    scopes = parse_scopes(claims["scope"] if "scope" in claims else claims.get("scp"))
    return Principal(
        subject=sub if isinstance(sub, str) else None,
        client_id=client_id if isinstance(client_id, str) else None,
        scopes=scopes,
        issuer=iss if isinstance(iss, str) else None,
        audience=audience,
        expires_at=float(exp)
        if isinstance(exp, int | float) and not isinstance(exp, bool)
        else None,
        jkt=jkt if isinstance(jkt, str) else None,
        claims=claims,
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
