"""MCP authorization (OAuth 2.1 as the MCP authorization spec defines it).

Needs the ``auth`` extra (``pip install 'trimcp[auth]'``, for joserfc).
"""

# -- client side (trimcp.auth.client) -------------------------------------------------
from trimcp.auth.client import AuthorizationCode as AuthorizationCode
from trimcp.auth.client import AuthorizationError as AuthorizationError
from trimcp.auth.client import ClientCredentials as ClientCredentials
from trimcp.auth.client import ClientInfo as ClientInfo
from trimcp.auth.client import EnterpriseManaged as EnterpriseManaged
from trimcp.auth.client import Grant as Grant
from trimcp.auth.client import GrantContext as GrantContext
from trimcp.auth.client import JwtBearer as JwtBearer
from trimcp.auth.client import LoopbackRedirect as LoopbackRedirect
from trimcp.auth.client import MemoryTokenStorage as MemoryTokenStorage
from trimcp.auth.client import OAuth as OAuth
from trimcp.auth.client import RedirectHandler as RedirectHandler
from trimcp.auth.client import Tokens as Tokens
from trimcp.auth.client import TokenStorage as TokenStorage
from trimcp.auth.client import fetch_redirect as fetch_redirect

_CLIENT = [
    "AuthorizationCode",
    "AuthorizationError",
    "ClientCredentials",
    "ClientInfo",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStorage",
    "OAuth",
    "RedirectHandler",
    "TokenStorage",
    "Tokens",
    "fetch_redirect",
]
# -------------------------------------------------------------------------------------

__all__ = [*_CLIENT]
