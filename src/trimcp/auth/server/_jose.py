"""What the JOSE checks of this package share: which algorithms and keys are never
acceptable from the outside."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["asymmetric_algorithms", "has_private_members"]

#: JWK members that only a private (or symmetric) key has.
_PRIVATE: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def asymmetric_algorithms(algorithms: Iterable[str], what: str) -> tuple[str, ...]:
    """``algorithms``, refusing ``none`` and the symmetric ``HS*`` family (``ValueError``):
    a token checked with a public key must never be accepted under an algorithm that
    turns that key into a shared secret, or needs none."""
    chosen = tuple(algorithms)
    bad = {a for a in chosen if a.lower() == "none" or a.upper().startswith("HS")}
    if bad:
        raise ValueError(f"{what} are signed asymmetrically, not with {sorted(bad)}")
    return chosen


def has_private_members(key: Mapping[str, object]) -> bool:
    """Whether a JWK holds private or symmetric key material (never taken from a public
    document or a proof)."""
    return not _PRIVATE.isdisjoint(key.keys())
