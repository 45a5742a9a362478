"""DPoP proofs at a resource server (RFC 9449 §4.3, §7).

A DPoP-bound access token (``cnf.jkt``) comes with ``Authorization: DPoP <token>`` and
exactly one ``DPoP`` header: a JWT the client signed with the key the token is bound to.
:meth:`DpopVerifier.check` accepts it only when, all with joserfc:

* its header has ``typ: dpop+jwt``, an accepted asymmetric ``alg``, and a public
  ``jwk`` (no private members) that verifies the signature;
* that key's thumbprint (RFC 7638) equals the token's ``cnf.jkt``;
* ``htm`` is the request's method, ``htu`` its URL (without query and fragment);
* ``ath`` is the hash of the access token it travels with;
* ``iat`` is within ``max_age`` seconds in the past (``leeway`` either way);
* ``jti`` was not seen with that key within the window (replay);
* with ``require_nonce``, ``nonce`` is one this server issued recently
  (:meth:`DpopVerifier.nonce`): otherwise ``use_dpop_nonce`` and a fresh nonce.

The replay cache is bounded (``max_replay_entries``); entries leave when their window
ends. When it is full of live entries, proofs are refused as unavailable (503) rather
than forgetting one early, which would let it be replayed. Nonces are stateless: an HMAC
of the current time window under a per-process key (pass ``nonce_key`` to share one
across processes); the current and previous windows are accepted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, final

import trio
from joserfc import jwk, jws, jwt
from joserfc.errors import JoseError

from ._jose import asymmetric_algorithms, has_private_members
from ._principal import VerifierUnavailable
from ._urls import normalize_url

__all__ = [
    "DEFAULT_DPOP_ALGORITHMS",
    "DEFAULT_DPOP_MAX_AGE",
    "DEFAULT_MAX_PROOF_BYTES",
    "DEFAULT_MAX_REPLAY_ENTRIES",
    "DpopError",
    "DpopVerifier",
]

DEFAULT_DPOP_ALGORITHMS: Final = ("ES256", "ES384", "RS256", "PS256", "EdDSA")
DEFAULT_DPOP_MAX_AGE: Final = 300.0
"""Seconds a proof is accepted after its ``iat`` (plus leeway)."""
DEFAULT_MAX_PROOF_BYTES: Final = 8 * 1024
"""Bytes of one ``DPoP`` header at most."""
DEFAULT_MAX_REPLAY_ENTRIES: Final = 65536
"""Proof ids (``jti``) remembered at most for replay detection."""
DEFAULT_NONCE_LIFETIME: Final = 300.0
_MAX_JTI: Final = 256


class DpopError(Exception):
    """A proof that is not acceptable; ``use_nonce`` asks the client to retry with the
    nonce :meth:`DpopVerifier.nonce` gives (``error="use_dpop_nonce"``)."""

    def __init__(self, message: str, *, use_nonce: bool = False) -> None:
        super().__init__(message)
        self.use_nonce = use_nonce


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@final
class DpopVerifier:
    """Checks DPoP proofs; see the module doc."""

    def __init__(
        self,
        *,
        algorithms: Sequence[str] = DEFAULT_DPOP_ALGORITHMS,
        max_age: float = DEFAULT_DPOP_MAX_AGE,
        leeway: float = 60.0,
        max_proof_bytes: int = DEFAULT_MAX_PROOF_BYTES,
        max_replay_entries: int = DEFAULT_MAX_REPLAY_ENTRIES,
        require_nonce: bool = False,
        nonce_key: bytes | None = None,
        nonce_lifetime: float = DEFAULT_NONCE_LIFETIME,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_age <= 0 or max_replay_entries < 1 or nonce_lifetime <= 0:
            raise ValueError("the DPoP bounds must be positive")
        self.algorithms = asymmetric_algorithms(algorithms, "DPoP proofs")
        self.max_age = max_age
        self.leeway = leeway
        self.max_proof_bytes = max_proof_bytes
        self.max_replay_entries = max_replay_entries
        self.require_nonce = require_nonce
        self._nonce_key = nonce_key or secrets.token_bytes(32)
        self.nonce_lifetime = nonce_lifetime
        self.clock = clock
        #: (thumbprint, jti) digests -> when they may be forgotten (Trio clock).
        self._seen: OrderedDict[bytes, float] = OrderedDict()

    # ------------------------------------------------------------------ nonces
    def nonce(self) -> str:
        """A nonce for clients to put in their next proofs (``DPoP-Nonce``)."""
        return self._nonce_for(int(self.clock() // self.nonce_lifetime))

    def _nonce_for(self, window: int) -> str:
        packed = struct.pack(">q", window)
        mac = hmac.new(self._nonce_key, b"trimcp dpop nonce\0" + packed, hashlib.sha256)
        return _b64(packed + mac.digest()[:16])

    def _nonce_ok(self, value: object) -> bool:
        if not isinstance(value, str):
            return False
        window = int(self.clock() // self.nonce_lifetime)
        return any(hmac.compare_digest(value, self._nonce_for(w)) for w in (window, window - 1))

    # ------------------------------------------------------------------ proofs
    def check(self, proof: str, *, method: str, urls: Iterable[str], token: str, jkt: str) -> None:
        """Accept ``proof`` for this request and token, or raise :class:`DpopError`
        (:class:`VerifierUnavailable` when the replay cache is full)."""
        if len(proof) > self.max_proof_bytes or proof.count(".") != 2:
            raise DpopError("the DPoP proof is malformed")
        try:
            header: Any = jws.extract_compact(proof.encode("ascii")).headers()
        except (JoseError, ValueError, TypeError, UnicodeError):
            raise DpopError("the DPoP proof is malformed") from None
        alg, key_data = header.get("alg"), header.get("jwk")
        if header.get("typ") != "dpop+jwt":
            raise DpopError("the DPoP proof's typ must be dpop+jwt")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DpopError("the DPoP proof's algorithm is not accepted")
        if not isinstance(key_data, dict) or has_private_members(key_data):
            raise DpopError("the DPoP proof must carry a public jwk")
        try:
            key = jwk.import_key(key_data)
            claims: dict[str, Any] = jwt.decode(proof, key, algorithms=[alg]).claims
            thumbprint = key.thumbprint()
        except (JoseError, ValueError, TypeError):
            raise DpopError("the DPoP proof's signature does not verify") from None
        if not hmac.compare_digest(thumbprint, jkt):
            raise DpopError("the DPoP proof's key is not the one the token is bound to")
        self._check_claims(claims, method, urls, token)
        if self.require_nonce and not self._nonce_ok(claims.get("nonce")):
            raise DpopError("a DPoP nonce is required", use_nonce=True)
        self._remember(thumbprint, claims["jti"])

    def _check_claims(
        self, claims: dict[str, Any], method: str, urls: Iterable[str], token: str
    ) -> None:
        jti, htm, htu, iat = (claims.get(k) for k in ("jti", "htm", "htu", "iat"))
        if not isinstance(jti, str) or not jti or len(jti) > _MAX_JTI:
            raise DpopError("the DPoP proof needs a jti")
        if htm != method:
            raise DpopError("the DPoP proof's htm is not this request's method")
        wanted = {normalize_url(u) for u in urls}
        if not isinstance(htu, str) or normalize_url(htu.split("?")[0].split("#")[0]) not in wanted:
            raise DpopError("the DPoP proof's htu is not this request's URL")
        if not isinstance(iat, int | float) or isinstance(iat, bool):
            raise DpopError("the DPoP proof needs an iat")
        now = self.clock()
        if iat > now + self.leeway or iat < now - self.max_age - self.leeway:
            raise DpopError("the DPoP proof is too old or from the future")
        ath = _b64(hashlib.sha256(token.encode("ascii")).digest())
        if not isinstance(claims.get("ath"), str) or not hmac.compare_digest(claims["ath"], ath):
            raise DpopError("the DPoP proof's ath does not match the access token")

    def _remember(self, thumbprint: str, jti: str) -> None:
        now = trio.current_time()
        digest = hashlib.sha256(f"{thumbprint}\0{jti}".encode()).digest()
        while self._seen and next(iter(self._seen.values())) <= now:
            self._seen.popitem(last=False)
        if digest in self._seen:
            raise DpopError("the DPoP proof was already used")
        if len(self._seen) >= self.max_replay_entries:
            raise VerifierUnavailable("too many DPoP proofs in flight", retry_after=1)
        self._seen[digest] = now + self.max_age + 2 * self.leeway
