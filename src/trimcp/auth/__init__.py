"""MCP authorization: OAuth 2.1 as the MCP authorization spec defines it.

Needs the ``auth`` extra (``pip install trimcp[auth]``: joserfc for JOSE).
"""

# -- resource server (trimcp.auth.server) -------------------------------------------------
from .server import DpopVerifier as DpopVerifier
from .server import IntrospectionVerifier as IntrospectionVerifier
from .server import InvalidToken as InvalidToken
from .server import JwksCache as JwksCache
from .server import JwtVerifier as JwtVerifier
from .server import Principal as Principal
from .server import ResourceServer as ResourceServer
from .server import TokenVerifier as TokenVerifier
from .server import VerifierUnavailable as VerifierUnavailable

__all__ = [
    # resource server
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
