"""The client's capabilities as declared to a server, fitted to the revision it asks for.

A client that asks for an older revision does not declare what that revision lacks:
``elicitation`` before 2025-06-18, its ``url`` mode (and the explicit ``form``) before
2025-11-25, and ``sampling.tools`` / ``sampling.context`` before 2025-11-25. The
handlers stay installed; a conforming server on that revision never calls them.
"""

from __future__ import annotations

import attrs

from trimcp.protocol import (
    ClientCapabilities,
    ElicitationCapability,
    Feature,
    SamplingCapability,
    supports,
)

__all__ = ["fit_client_capabilities"]


def _elicitation(
    version: str, capability: ElicitationCapability | None
) -> ElicitationCapability | None:
    if capability is None or not supports(version, Feature.ELICITATION):
        return None
    if supports(version, Feature.URL_ELICITATION):
        return capability
    if capability.url is not None and capability.form is None:
        return None  # URL mode only, and the revision has no URL mode
    return ElicitationCapability()


def _sampling(version: str, capability: SamplingCapability | None) -> SamplingCapability | None:
    if capability is None or supports(version, Feature.SAMPLING_TOOLS):
        return capability
    return SamplingCapability()


def fit_client_capabilities(version: str, capabilities: ClientCapabilities) -> ClientCapabilities:
    """``capabilities`` without what ``version`` lacks (see the module doc)."""
    return attrs.evolve(
        capabilities,
        elicitation=_elicitation(version, capabilities.elicitation),
        sampling=_sampling(version, capabilities.sampling),
    )
