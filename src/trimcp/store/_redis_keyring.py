"""The key ring of sealed request states, shared through Redis.

A stateless-era input round (MRTR) hands the client a ``requestState`` sealed with an
HMAC key (``trimcp.server``'s ``RequestStateSealer``); the retry that carries it back
may land on any process behind the balancer, which must hold the same key. A server
given no keys of its own (``Server(request_state=None)``, the default) therefore takes
its keys from the shared store: one ring per prefix, ``<p>statekeys``, a list of
``<key id>|<created, Unix ms>|<key, base64url>``, newest first.

* **Creation and rotation** are one atomic script: the first process to ask creates the
  first key; whoever asks once the newest key is older than ``rotate_after`` (a day)
  pushes a new one, and the ring keeps the two newest. A state lives ``ttl`` (600 s),
  far less than a rotation period, so the previous key outlives every state sealed with
  it.
* **No process seals with a key another may not know yet.** Processes read the ring
  every ``refresh`` seconds (60); a new key seals only once it is ``ripe_after`` old
  (twice that), so every live process has read it by then. Before that the previous
  key seals (a brand new ring has one key, and every process reads it before serving).
* The ring expires when no process has read it for two rotation periods.

The keys are as secret as the sessions next to them: whoever can read this Redis can
seal states, as whoever can write it can take over sessions. A deployment that keeps
its keys elsewhere passes them (``RequestStateSealer(keys=...)``), and the ring is not
used.
"""

from __future__ import annotations

import base64
import secrets
from typing import TYPE_CHECKING, Final

from ._redis_link import text

if TYPE_CHECKING:
    from ._redis_link import RedisLink

__all__ = ["DEFAULT_RIPE_AFTER", "DEFAULT_ROTATE_AFTER", "KEYRING", "ring"]

DEFAULT_ROTATE_AFTER: Final = 86400.0
"""Seconds a key seals new states before a new one replaces it."""
DEFAULT_RIPE_AFTER: Final = 120.0
"""Seconds a new key waits before it seals (twice the servers' refresh period)."""

#: KEYS: the ring. ARGV: now (ms), rotate_after (ms), a new entry, the ring's TTL (ms).
KEYRING: Final = r"""
local head = redis.call('LINDEX', KEYS[1], 0)
local now, rotate = tonumber(ARGV[1]), tonumber(ARGV[2])
local created = head and tonumber(string.match(head, '^[^|]*|(%d+)|'))
if not created or created + rotate <= now then
  redis.call('LPUSH', KEYS[1], ARGV[3])
  redis.call('LTRIM', KEYS[1], 0, 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('LRANGE', KEYS[1], 0, -1)
"""


def _entry(now_ms: int) -> str:
    key_id = secrets.token_urlsafe(6)
    key = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return f"{key_id}|{now_ms}|{key}"


def _parse(raw: bytes | str) -> tuple[str, int, bytes]:
    key_id, created, key = text(raw).split("|")
    return key_id, int(created), base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))


async def ring(
    link: RedisLink,
    name: str,
    *,
    now: float,
    rotate_after: float = DEFAULT_ROTATE_AFTER,
    ripe_after: float = DEFAULT_RIPE_AFTER,
) -> list[tuple[str, bytes]]:
    """The ring at ``name`` (created or rotated as due, see the module doc) as
    ``(key id, key)`` pairs, the key that seals first: the newest one at least
    ``ripe_after`` old, else the oldest."""
    now_ms = int(now * 1000)
    rotate_ms = max(1, round(rotate_after * 1000))
    raw = await link.script(KEYRING, [name], [now_ms, rotate_ms, _entry(now_ms), 2 * rotate_ms])
    entries = [_parse(item) for item in raw]  # newest first
    ripe_ms = ripe_after * 1000
    sealing = next((e for e in entries if e[1] + ripe_ms <= now_ms), entries[-1])
    ordered = [sealing, *(e for e in entries if e is not sealing)]
    return [(key_id, key) for key_id, _, key in ordered]
