"""The garbage collector of every process a benchmark starts.

``trimcp bench --gc tuned`` (the default) runs every implementation's processes, its
worker (the client, and the server in memory) and the server children, under
:func:`trimcp.tune_gc`, as ``trimcp serve`` runs a server; ``--gc default`` keeps
CPython's settings everywhere. Either way all implementations, the floors included,
run alike: the setting travels in :data:`ENV`, which the runner sets for each worker
and each child inherits (the SDK's stdio child is handed it explicitly, since the
SDK's client starts servers with a minimal environment). Each worker reports what it
ran with (:func:`describe`), and the report names it next to the ratios.

A baseline tree older than this module ignores :data:`ENV`: its processes keep
CPython's settings, and its workers report nothing.
"""

from __future__ import annotations

import gc
import os
from typing import Final

from trimcp.nursery import tune_gc

__all__ = ["ENV", "MODES", "apply_from_env", "describe", "passed_on"]

ENV: Final = "TRIMCP_BENCH_GC"
MODES: Final = ("tuned", "default")


def apply_from_env() -> None:
    """Set this process's collector as :data:`ENV` says (unset: CPython's defaults)."""
    mode = os.environ.get(ENV, "default")
    if mode not in MODES:
        raise SystemExit(f"{ENV}={mode!r}: expected one of {', '.join(MODES)}")
    if mode == "tuned":
        tune_gc()


def describe() -> str:
    """What this process's collector runs with, for the report."""
    thresholds = "/".join(str(n) for n in gc.get_threshold())
    frozen = gc.get_freeze_count()
    mode = os.environ.get(ENV, "default")
    return f"{mode} (thresholds {thresholds}, {frozen} objects frozen)"


def passed_on() -> dict[str, str]:
    """The part of this process's environment a child with a minimal one still needs."""
    mode = os.environ.get(ENV)
    return {ENV: mode} if mode is not None else {}
