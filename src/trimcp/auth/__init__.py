"""MCP authorization: OAuth 2.1 as the MCP authorization spec defines it.

Needs the ``auth`` extra (``pip install 'trimcp[auth]'``: joserfc for JOSE).
"""

# -- client side (trimcp.auth.client) ----------------------------------------------------
from .client import AuthorizationCode as AuthorizationCode
from .client import AuthorizationError as AuthorizationError
from .client import ClientCredentials as ClientCredentials
from .client import ClientInfo as ClientInfo
from .client import EnterpriseManaged as EnterpriseManaged
from .client import Grant as Grant
from .client import GrantContext as GrantContext
from .client import JwtBearer as JwtBearer
from .client import LoopbackRedirect as LoopbackRedirect
from .client import MemoryTokenStorage as MemoryTokenStorage
from .client import OAuth as OAuth
from .client import RedirectHandler as RedirectHandler
from .client import Tokens as Tokens
from .client import TokenStorage as TokenStorage
from .client import fetch_redirect as fetch_redirect

# -- resource server (trimcp.auth.server) ------------------------------------------------
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
    # client side
    "AuthorizationCode",
    "AuthorizationError",
    "ClientCredentials",
    "ClientInfo",
    # resource server
    "DpopVerifier",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwksCache",
    "JwtBearer",
    "JwtVerifier",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "OAuth",
    "Principal",
    "RedirectHandler",
    "ResourceServer",
    "TokenStorage",
    "TokenVerifier",
    "Tokens",
    "VerifierUnavailable",
    "fetch_redirect",
]
