"""Benchmark scripts: each measures throughput and writes JSON through :class:`hashlib_core.results.ResultsStore`.

Run them as modules, e.g. ``python -m hashlib_core.benchmarks.hashing --quick``. Speed is measured here, never
asserted in tests.
"""
from __future__ import annotations

import time
from typing import Any, Callable

__all__ = ["best_time"]


def best_time(fn: Callable[[], Any], repeats: int) -> float:
    """The shortest of ``repeats`` timed calls of ``fn`` (after one untimed warm-up call), in seconds."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
