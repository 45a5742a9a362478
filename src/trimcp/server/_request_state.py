"""Sealing the ``requestState`` of stateless-era input rounds (MRTR, 2026-07-28).

The server keeps no memory between the rounds of a multi round-trip request: what it
learnt so far (the input responses already given, the keys it asked for) travels to the
client in ``requestState`` and comes back on the retry. The client must not be able to
forge that state, replay it onto another call, or keep it forever, so the token is:

``v1.<key id>.<expiry>.<payload>.<mac>`` (each part base64url without padding), where
``mac = HMAC-SHA256(key, "v1" | key id | expiry | binding | payload)``.

* **Integrity**: any change to any part fails the MAC (compared in constant time, in
  its canonical text form, so that no second spelling of a token opens).
* **Binding**: the MAC covers a *binding* the caller supplies (the method, the target
  tool / prompt / resource, a digest of the arguments) that is never sent; a state
  opened under another binding fails the MAC like a forgery does.
* **Expiry**: the expiry (Unix seconds) is inside the MAC; a state past it is refused.
* **Key rotation**: tokens are sealed with the first key and opened with any key whose
  id they name, so a fleet can add a new key first, then retire the old one once no
  state sealed with it can still be live (after ``ttl``).

The payload is not encrypted: it holds the client's own answers, which the client
already knows. A server that must hide something from its clients keeps it out of the
state. Servers behind a load balancer share the keys: given
(``RequestStateSealer(keys=...)``), or, by default, the ring of the shared store they
use (``trimcp.store``'s ``RedisStore``); without either, the key is random per process.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, final

__all__ = [
    "DEFAULT_MAX_STATE_BYTES",
    "DEFAULT_STATE_TTL",
    "RequestStateError",
    "RequestStateSealer",
]

DEFAULT_STATE_TTL: Final = 600.0
"""Seconds a sealed state stays valid (a round trip through a person can take minutes)."""

DEFAULT_MAX_STATE_BYTES: Final = 256 * 1024
"""Bound on a token's length, sealed or received (answers of several rounds fit)."""

_VERSION: Final = "v1"
_MIN_KEY_BYTES: Final = 16


class RequestStateError(Exception):
    """A ``requestState`` that was not sealed by this server for this call, or expired.

    The message says which check failed (for logs); clients get one generic error.
    """


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text or any(c not in _B64_CHARS for c in text):
        raise RequestStateError("malformed state")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise RequestStateError("malformed state") from exc


_B64_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@final
class RequestStateSealer:
    """Seals and opens ``requestState`` tokens.

    Args:
      keys: secret keys, newest first, as ``(key id, key)`` pairs or bare keys (a bare
        key's id is derived from it). The first seals; all open. Each key has at least
        16 bytes. Default: one random 32-byte key for this process.
      ttl: seconds a sealed state stays valid (default :data:`DEFAULT_STATE_TTL`).
      max_bytes: bound on a token's length (default :data:`DEFAULT_MAX_STATE_BYTES`);
        sealing more raises ``ValueError``, opening more is refused.
      clock: the time source in Unix seconds (tests pass a fake one).
    """

    def __init__(
        self,
        keys: Sequence[bytes | tuple[str, bytes]] | None = None,
        *,
        ttl: float = DEFAULT_STATE_TTL,
        max_bytes: int = DEFAULT_MAX_STATE_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        #: Whether the keys were given (else they are this process's own random key,
        #: which a shared store replaces with its ring: ``trimcp.store``).
        self.explicit = keys is not None
        self._keys: dict[str, bytes] = {}
        self._current = ""
        self.use_keys([secrets.token_bytes(32)] if keys is None else keys)
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._clock = clock

    def use_keys(self, keys: Sequence[bytes | tuple[str, bytes]]) -> None:
        """Seal with the first of ``keys`` from now on and open with any of them (the
        keys held before are dropped: states sealed with them no longer open)."""
        if not keys:
            raise ValueError("at least one key is needed")
        ring: dict[str, bytes] = {}
        for entry in keys:
            key_id, key = entry if isinstance(entry, tuple) else (self.key_id(entry), entry)
            if len(key) < _MIN_KEY_BYTES:
                raise ValueError(f"a key needs at least {_MIN_KEY_BYTES} bytes")
            if not key_id or any(c not in _B64_CHARS for c in key_id):
                raise ValueError("a key id is a non-empty base64url string")
            if key_id in ring:
                raise ValueError(f"duplicate key id {key_id!r}")
            ring[key_id] = key
        self._keys = ring
        self._current = next(iter(ring))

    @staticmethod
    def key_id(key: bytes) -> str:
        """The id a bare key gets: a short digest of it (it reveals nothing usable)."""
        return _b64(hashlib.sha256(b"trimcp request-state key id\0" + key).digest()[:6])

    def _mac(self, key: bytes, key_id: str, expiry: str, binding: Any, payload: str) -> bytes:
        message = b"\0".join(
            (_VERSION.encode(), key_id.encode(), expiry.encode(), _canonical(binding))
        )
        return hmac.new(key, message + b"\0" + payload.encode(), hashlib.sha256).digest()

    def seal(self, binding: Any, data: Any) -> str:
        """A token carrying ``data`` (JSON-able), valid for ``binding`` until the TTL ends."""
        expiry = str(int(self._clock() + self.ttl))
        payload = _b64(_canonical(data))
        key_id = self._current
        mac = self._mac(self._keys[key_id], key_id, expiry, binding, payload)
        token = ".".join((_VERSION, key_id, expiry, payload, _b64(mac)))
        if len(token) > self.max_bytes:
            raise ValueError(f"the sealed state has {len(token)} bytes, over {self.max_bytes}")
        return token

    def open(self, binding: Any, token: object) -> Any:
        """The data sealed in ``token`` for ``binding``; :class:`RequestStateError` if the
        token is malformed, forged, sealed for another binding, or expired."""
        if not isinstance(token, str):
            raise RequestStateError("the state is not a string")
        if len(token) > self.max_bytes:
            raise RequestStateError("the state is too large")
        parts = token.split(".")
        if len(parts) != 5 or parts[0] != _VERSION:
            raise RequestStateError("malformed state")
        _, key_id, expiry, payload, mac_text = parts
        key = self._keys.get(key_id)
        if key is None:
            raise RequestStateError("the state was sealed with an unknown key")
        _unb64(payload)
        # Compared as text, not as decoded bytes: base64 without padding has several
        # spellings of the same bytes (the spare bits of the last character), and a
        # token the server did not write must never open.
        expected = _b64(self._mac(key, key_id, expiry, binding, payload))
        if not hmac.compare_digest(mac_text.encode("ascii", "replace"), expected.encode()):
            raise RequestStateError("the state does not match this request")
        if not expiry.isdigit() or int(expiry) < self._clock():
            raise RequestStateError("the state has expired")
        try:
            return json.loads(_unb64(payload))
        except ValueError as exc:  # sealed by us, so unreachable short of a key leak
            raise RequestStateError("malformed state payload") from exc
