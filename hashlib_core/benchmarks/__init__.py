"""Benchmark scripts: each measures throughput and writes JSON through :class:`hashlib_core.results.ResultsStore`.

Run them as modules, e.g. ``python -m hashlib_core.benchmarks.hashing --quick``. Speed is measured here, never
asserted in tests.
"""
