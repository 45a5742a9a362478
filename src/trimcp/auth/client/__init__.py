"""The client side of MCP authorization (OAuth 2.1 as the MCP authorization spec
defines it): ``streamable_http(url, auth=OAuth(...))``. See ``_oauth`` for how it
works, ``_discovery``, ``_authcode``, ``_grants`` and ``_token_endpoint`` for the
steps."""

from trimcp.transports.http import AuthorizationError as AuthorizationError

from ._authcode import AuthorizationCode as AuthorizationCode
from ._authcode import RedirectHandler as RedirectHandler
from ._grants import ClientCredentials as ClientCredentials
from ._grants import EnterpriseManaged as EnterpriseManaged
from ._grants import Grant as Grant
from ._grants import GrantContext as GrantContext
from ._grants import JwtBearer as JwtBearer
from ._loopback import LoopbackRedirect as LoopbackRedirect
from ._oauth import OAuth as OAuth
from ._redirect import fetch_redirect as fetch_redirect
from ._session import OAuthSession as OAuthSession
from ._tokens import ClientInfo as ClientInfo
from ._tokens import MemoryTokenStorage as MemoryTokenStorage
from ._tokens import Tokens as Tokens
from ._tokens import TokenStorage as TokenStorage
from ._urls import is_allowed_url as is_allowed_url

__all__ = [
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
    "OAuthSession",
    "RedirectHandler",
    "TokenStorage",
    "Tokens",
    "fetch_redirect",
    "is_allowed_url",
]
