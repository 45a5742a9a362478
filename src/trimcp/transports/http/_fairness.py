"""Who a request counts against: the key of per-client budgets.

Budgets per client (sessions, connections) need a name for "the same client". It is the
authenticated caller's ``identity`` when the app has an authorization layer, else the
client's address: an IPv4 address as is, an IPv6 address by its /64 network (one host
usually owns a whole /64, so counting single addresses would let it spread over 2**64
budgets).

Behind a reverse proxy every unauthenticated request comes from the proxy's address;
then authenticate callers (or raise the per-client budgets), or all clients share one
budget.
"""

from __future__ import annotations

import functools
import ipaddress
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, MutableMapping, Sequence
from typing import Any, TypeVar

__all__ = ["address_key", "client_key", "oldest_of_heaviest"]

_T = TypeVar("_T")


@functools.lru_cache(maxsize=1024)
def address_key(host: str) -> str:
    """The budget key of a peer address: itself, or its /64 for IPv6. Every request
    asks for it: the last 1024 addresses' keys are kept (parsing an address is not
    free)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"address:{host}"
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped
        if mapped is not None:
            return f"address:{mapped}"
        network = ipaddress.IPv6Network((address, 64), strict=False)
        return f"address:{network}"
    return f"address:{address}"


def client_key(scope: MutableMapping[str, Any], principal: str | None = None) -> str | None:
    """The per-client budget key of an ASGI request sent by ``principal`` (an
    authenticated caller's identity; ``None``: not authenticated), or ``None`` when
    neither it nor the client's address is known."""
    if principal:
        return f"principal:{principal}"
    client = scope.get("client")
    if not client:
        return None
    return address_key(str(client[0]))


def oldest_of_heaviest(entries: Iterable[_T], key: Callable[[_T], Hashable]) -> _T | None:
    """Whom to shed when a table is full: the oldest of ``entries`` (given oldest
    first) whose client, ``key(entry)``, holds the most of them; ``None`` when there
    are none. Shedding the heaviest client's first makes one client's flood cost that
    client, not the others."""
    ordered: Sequence[_T] = entries if isinstance(entries, Sequence) else list(entries)
    if not ordered:
        return None
    counts = Counter(key(entry) for entry in ordered)
    heaviest = max(counts, key=counts.__getitem__)
    return next(entry for entry in ordered if key(entry) == heaviest)
