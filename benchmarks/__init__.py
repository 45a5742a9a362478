"""Developer entry points around :mod:`trimcp.bench`, which holds the benchmarks.

``python -m benchmarks`` is ``trimcp bench``; ``python -m benchmarks.hotpath``
profiles trimcp's hot path (:mod:`benchmarks.attribution` folds the samples).
"""
