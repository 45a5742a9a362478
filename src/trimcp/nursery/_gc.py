"""CPython's garbage collector, set for a process that serves many requests at once.

CPython collects its youngest generation each time 700 more container objects were
allocated than freed (2000 from 3.13). A session with thousands of requests in flight
holds far more such objects than that for a moment (each request's tasks, coroutines,
scopes, dicts and lists), so the count is crossed again and again although next to
nothing is garbage: each collection walks every young object still alive, promotes the
survivors, and the older generations are walked in turn. Measured with ``trimcp
bench`` (memory transport, same machine, one run apart), 10 000 calls in flight went
from about 12 000 to 17 000 calls/s with :func:`tune_gc`, and 100 in flight about 10 %
faster; an HTTP server at 100 in flight spends only about 1 % of its CPU collecting, so
it gains little.

:func:`tune_gc` raises that threshold (the objects a request holds now die before a
collection comes) and, by default, freezes what is alive when it is called (the
modules, classes and the server built at startup), so that the rare full collections
do not walk them. Garbage in reference cycles is still collected, later: at the next
young collection, once ``young`` more objects were allocated than freed.

The collector is the process's, not a library's: trimcp's serving functions never
touch it. The ``trimcp serve`` command calls :func:`tune_gc` once the server is loaded
(``--gc default`` keeps CPython's settings); an application embedding trimcp calls it
itself, once its startup is done, if it wants the same.
"""

from __future__ import annotations

import gc

__all__ = ["DEFAULT_YOUNG_THRESHOLD", "tune_gc"]

#: Young objects (allocations net of frees) between two collections of the youngest
#: generation after :func:`tune_gc`; CPython's own default is 700 (2000 from 3.13).
DEFAULT_YOUNG_THRESHOLD = 20_000


def tune_gc(young: int = DEFAULT_YOUNG_THRESHOLD, *, freeze: bool = True) -> tuple[int, ...]:
    """Set the collector for serving many requests at once (see the module doc).

    Args:
      young: collect the youngest generation each time this many more tracked objects
        were allocated than freed (the first of :func:`gc.set_threshold`'s thresholds;
        the others are kept). At least 1.
      freeze: first collect everything, then move every object still alive to the
        permanent generation (:func:`gc.freeze`), which collections never walk. Call it
        once startup is done: an object frozen is never collected, even once garbage.

    Returns:
      The thresholds it replaced: ``gc.set_threshold(*previous)`` restores them, and
      :func:`gc.unfreeze` undoes the freeze.

    Raises:
      ValueError: ``young`` is below 1 (0 would turn automatic collection off).
    """
    if young < 1:
        raise ValueError(f"young must be at least 1, not {young}")
    previous = gc.get_threshold()
    gc.set_threshold(young, *previous[1:])
    if freeze:
        gc.collect()
        gc.freeze()
    return previous
