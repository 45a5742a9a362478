"""The resource-server side of MCP authorization (OAuth 2.1, RFC 9728, RFC 8707, RFC 9449).

Give a :class:`ResourceServer` to ``trimcp.Server(..., auth=...)``: every HTTP,
HTTP+SSE and WebSocket request is then authenticated, refused with the challenges the
MCP authorization spec defines, and served with its :class:`Principal` on the handler
context. Tokens are checked by a :class:`JwtVerifier` (signed JWTs against the issuer's
key set), an :class:`IntrospectionVerifier` (RFC 7662), or any :class:`TokenVerifier`;
DPoP-bound tokens by a :class:`DpopVerifier`.
"""

from ._dpop import DpopVerifier as DpopVerifier
from ._introspection import IntrospectionVerifier as IntrospectionVerifier
from ._jwks import JwksCache as JwksCache
from ._jwt import JwtVerifier as JwtVerifier
from ._principal import InvalidToken as InvalidToken
from ._principal import Principal as Principal
from ._principal import VerifierUnavailable as VerifierUnavailable
from ._resource import ResourceServer as ResourceServer
from ._resource import TokenVerifier as TokenVerifier

__all__ = [
    "DpopVerifier",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwksCache",
    "JwtVerifier",
    "Principal",
    "ResourceServer",
    "TokenVerifier",
    "VerifierUnavailable",
]
