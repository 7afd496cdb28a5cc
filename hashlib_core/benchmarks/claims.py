"""How long recomputing the book's verdicts takes: every committed claims table, and the vectorised two-level bootstrap
against a loop over resamples that draws the same items and seeds.

Usage::

    python -m hashlib_core.benchmarks.claims            # every committed claims table, and the engine comparison
    python -m hashlib_core.benchmarks.claims --loop-resamples 200

Part one evaluates every chapter's :class:`~hashlib_core.claims.ClaimSet` on each of its committed profiles in one
process (what ``test_committed_verdicts_are_what_the_claims_compute_today`` does), timing each; the total is what the
whole scorecard costs to recompute. Part two times one GLUE comparison (HashFormers' headline, LSH-Proj against
BERT-MLM on the committed profile's tasks that learn) two ways on the same resamples: the claims layer's
:func:`~hashlib_core.claims.glue.compare` (item counts, metrics on counts, every resample at once) and a loop that
takes each resample's drawn item indices and seed indices and recomputes each run's metric on them, as the layer did
before it was vectorised; the loop's time is scaled from ``--loop-resamples`` to the layer's resamples
(:data:`~hashlib_core.claims.bootstrap.DEFAULT_RESAMPLES`), and the two paths' statistics on the shared resamples must
agree. The result goes to ``results/benchmarks/quick/claims.json``.
"""
from __future__ import annotations

import argparse
import importlib
import time
from typing import Any, Sequence

import numpy as np

from hashlib_core.results import ResultsStore

__all__ = ["committed_tables", "engine_comparison", "main"]


def committed_tables() -> list[dict[str, Any]]:
    """Every committed claims table evaluated afresh, with its time (seconds) and whether it matches the CSV."""
    import io

    import pandas as pd

    from hashlib_core.chapter import COMMITTED_ORDER, Shown
    from hashlib_core.papers import CHAPTERS, chapter

    rows = []
    for slug in CHAPTERS:
        ch = chapter(slug)
        claims = importlib.import_module(f"hashlib_core.papers.{slug}.claims").CLAIMS
        for name in COMMITTED_ORDER:
            store = ch.store(name)
            if not store.exists("claims"):
                continue
            start = time.perf_counter()
            table = claims.evaluate(Shown(ch.profiles.get(name), store, "committed", ""))
            seconds = time.perf_counter() - start
            today = pd.read_csv(io.StringIO(table.to_csv(index=False)))
            try:
                pd.testing.assert_frame_equal(store.read_table("claims"), today, check_dtype=False)
                same = True
            except AssertionError:
                same = False
            rows.append({"chapter": slug, "profile": name, "claims": len(table), "seconds": seconds,
                         "matches_committed": same})
    return rows


def _loop(preds: Any, groups: dict[str, list[str]], tasks: Sequence[str], resamples: int, seed: int) -> np.ndarray:
    """The statistic (group a minus group b, mean over tasks) on the first ``resamples`` resamples, one at a time:
    each resample's item indices and seed indices drawn by the layer's generators, each run's metric recomputed on
    the drawn items."""
    import zlib

    from hashlib_core.claims.glue import task_metric

    units = np.random.default_rng([seed, 1])
    per_task = []
    for task in tasks:
        gold = preds.labels[task]
        n = len(gold)
        items = np.random.default_rng([seed, zlib.crc32(task.encode())]).integers(0, n, (resamples, n))
        scores = {}
        for group, members in groups.items():
            draws = [units.integers(0, len(preds.runs[(m, task)]), (resamples, len(preds.runs[(m, task)])))
                     for m in members]
            scores[group] = np.array([np.mean([np.mean([task_metric(task, preds.runs[(m, task)][k][items[r]],
                                                                    gold[items[r]]) for k in draw[r]])
                                               for m, draw in zip(members, draws)]) for r in range(resamples)])
        per_task.append(scores["a"] - scores["b"])
    return np.mean(per_task, axis=0)


def engine_comparison(loop_resamples: int) -> dict[str, Any]:
    """HashFormers' headline comparison, vectorised against the loop, on the richest committed profile."""
    from hashlib_core.chapter import Shown
    from hashlib_core.claims.glue import GluePredictions, compare, mean_difference
    from hashlib_core.claims.bootstrap import DEFAULT_RESAMPLES
    from hashlib_core.papers import chapter
    from hashlib_core.papers.hashformers.claims_glue import _TASK, learned_tasks

    ch = chapter("hashformers")
    profile, _ = ch.committed()
    if profile is None:
        return {"available": False, "reason": "no committed HashFormers results"}
    shown = Shown(profile, ch.store(profile.name), "committed", "")
    tasks = [_TASK[c] for c in learned_tasks(shown)[0]]
    preds = GluePredictions.from_records(shown.json("glue_predictions"))
    groups = {"a": ["LSH-Proj"], "b": ["BERT-MLM"]}
    from hashlib_core.claims import glue

    glue._COUNTS.clear(), glue._RANKS.clear(), glue._METRICS.clear()          # time it from cold
    start = time.perf_counter()
    iv = compare(preds, groups, tasks, mean_difference)
    vectorised = time.perf_counter() - start
    start = time.perf_counter()
    looped = _loop(preds, groups, tasks, loop_resamples, 0)
    loop_s = time.perf_counter() - start

    # the vectorised statistic on the loop's resamples (the same number of them: the runs' draws follow the items'),
    # for the agreement check
    captured = {}

    def keep(scores: dict[str, np.ndarray]) -> np.ndarray:
        values = mean_difference(scores)
        if values.size > 1:                                   # the resamples (the first call is the estimate)
            captured["v"] = values
        return values

    glue._COUNTS.clear(), glue._RANKS.clear(), glue._METRICS.clear()
    compare(preds, groups, tasks, keep, resamples=max(loop_resamples, 100))      # the same draws as the loop's
    agree = float(np.max(np.abs(captured["v"][:loop_resamples] - looped)))
    return {"available": True, "profile": profile.name, "tasks": tasks, "resamples": DEFAULT_RESAMPLES,
            "vectorised_s": vectorised, "loop_resamples": loop_resamples, "loop_s": loop_s,
            "loop_s_scaled": loop_s * DEFAULT_RESAMPLES / loop_resamples,
            "speedup": loop_s * DEFAULT_RESAMPLES / loop_resamples / vectorised,
            "max_abs_difference": agree, "interval": [iv.low, iv.high]}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loop-resamples", type=int, default=100,
                        help="resamples the loop computes, at least 100 (its time is scaled to the layer's own number)")
    args = parser.parse_args(argv)
    if args.loop_resamples < 100:
        parser.error("--loop-resamples must be >= 100 (the fewest resamples a percentile interval takes)")
    start = time.perf_counter()
    tables = committed_tables()
    total = sum(r["seconds"] for r in tables)
    engine = engine_comparison(args.loop_resamples)
    payload = {"tables": tables, "total_s": total, "engine": engine, "torch_threads": torch.get_num_threads()}
    path = ResultsStore("benchmarks", "quick").write_json("claims", payload, seed=0, device=torch.device("cpu"),
                                                          wall_time_s=time.perf_counter() - start, config=vars(args))
    for r in tables:
        print(f"{r['chapter']:<20} {r['profile']:<6} {r['claims']:>3} claims {r['seconds']:7.2f} s"
              f"{'' if r['matches_committed'] else '  (differs from the committed table)'}")
    print(f"every committed claims table: {total:.1f} s")
    if engine["available"]:
        print(f"HashFormers' headline ({engine['profile']}, {', '.join(engine['tasks'])}): vectorised "
              f"{engine['vectorised_s']:.2f} s, loop {engine['loop_s_scaled']:.1f} s for {engine['resamples']:,} "
              f"resamples (x{engine['speedup']:.0f}); largest difference on shared resamples "
              f"{engine['max_abs_difference']:.2e}")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
