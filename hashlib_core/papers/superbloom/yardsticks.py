"""What the id sets hold, without training (experiment ``yardsticks``): two rankings to read every model's recall
against, on each dataset's own test segments.

* **Popularity** (:func:`~hashlib_core.papers.superbloom.training.popularity_recall`): every id ranked by how many
  training pages hold it, whatever the segment holds. A model below it has learned nothing the segment tells it.
* **Co-occurrence counts** (:func:`cooccurrence_recall`): every id ``j`` scored by ``Σ_i c(i, j) / f(i)`` over the
  segment's unmasked ids ``i``, where ``c(i, j)`` counts the training pages holding both and ``f(i)`` those holding
  ``i`` (a sum of estimated ``P(j | i)``); the segment's own ids are excluded (a set never repeats an id), ties go
  to the more popular id, then the smaller. No parameter is fitted: it is a count table of the training pages, as
  large as the number of co-occurring pairs, so it says how much of the target the context predicts at this data
  size, a level the chapter's neural models (a few hundred thousand to a few million parameters, two CPU cores) can
  be read against. Neither the paper nor the chapter proposes it as a model.

Cost: building the pair counts is linear in the number of (page, id, id) triples of the training pages; scoring is
done in chunks of ``chunk`` segments, each a sparse product and a dense ``chunk x N`` score matrix.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["COOCCURRENCE", "pair_counts", "target_ranks", "cooccurrence_recall", "yardstick_rows"]

#: the name of the count ranking's rows
COOCCURRENCE = "co-occurrence counts (no training)"


def pair_counts(sets: Sequence[np.ndarray], num_ids: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """``(C, f)``: ``C[i, j]`` the number of ``sets`` holding both ``i`` and ``j`` (zero diagonal), ``f[i]`` the
    number holding ``i``. Ids must lie in ``0 .. num_ids - 1``; a set's repeated id counts once."""
    if num_ids < 1:
        raise ValueError(f"num_ids must be at least 1, got {num_ids}")
    rows = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    cols = np.concatenate([np.asarray(s, dtype=np.int64) for s in sets] or [np.zeros(0, dtype=np.int64)])
    if len(cols) and (cols.min() < 0 or cols.max() >= num_ids):
        raise ValueError(f"ids must lie in 0 .. {num_ids - 1}, got {cols.min()} .. {cols.max()}")
    x = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(sets), num_ids))
    x.data[:] = 1.0                                                   # duplicates summed by csr: count once
    c = (x.T @ x).tocsr()
    c.setdiag(0)
    c.eliminate_zeros()
    return c, np.asarray(x.sum(axis=0)).ravel()


def target_ranks(segments: Sequence[np.ndarray], targets: np.ndarray, positions: np.ndarray, c: sp.csr_matrix,
                 f: np.ndarray, chunk: int = 256) -> np.ndarray:
    """The 0-based rank of each segment's target (its id at ``positions``) under the co-occurrence score of the
    segment's other ids (module docstring): ids scored higher, or as high and more popular, or as high, as popular
    and smaller, come before it."""
    n_ids = c.shape[0]
    weight = np.where(f > 0, 1.0 / np.maximum(f, 1), 0.0)
    ranks = np.empty(len(segments), dtype=np.int64)
    idx = np.arange(n_ids)
    for start in range(0, len(segments), chunk):
        part = range(start, min(start + chunk, len(segments)))
        rows, cols = [], []
        for r, s in enumerate(part):
            context = np.delete(np.asarray(segments[s]), positions[s])
            rows.append(np.full(len(context), r))
            cols.append(context)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        q = sp.csr_matrix((weight[cols], (rows, cols)), shape=(len(part), n_ids))
        scores = (q @ c).toarray()
        scores[rows, cols] = -np.inf                                  # the segment's own ids
        t = np.asarray(targets[start:start + len(part)])
        st, ft = scores[np.arange(len(part)), t][:, None], f[t][:, None]
        before = (scores > st) | ((scores == st) & ((f > ft) | ((f == ft) & (idx < t[:, None]))))
        ranks[start:start + len(part)] = before.sum(axis=1)
    return ranks


def cooccurrence_recall(res: Any, ks: Sequence[int]) -> dict[str, Any]:
    """Recall@k (%) of the co-occurrence ranking on ``res``'s test segments, its counts from ``res``'s training
    pages."""
    sets = res.sets
    c, f = pair_counts([sets.sets[p] for p in res.pages[0]], sets.num_ids)
    test = res.test
    ranks = target_ranks(test.segments, test.targets, test.positions, c, f)
    return {"name": COOCCURRENCE, **{f"rec@{k}": 100.0 * float((ranks < k).mean()) for k in ks},
            "segments": len(ranks), "pairs": int(c.nnz // 2)}


def yardstick_rows(datasets: Sequence[str], resources, ks: Sequence[int]) -> pd.DataFrame:
    """Both rankings on each of ``datasets`` (``resources(name)``: that dataset's
    :class:`~hashlib_core.papers.superbloom.training.Resources`), one row per dataset and ranking."""
    from hashlib_core.papers.superbloom.training import popularity_recall

    rows = []
    for name in datasets:
        res = resources(name)
        head = {"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0])}
        rows += [{**head, **popularity_recall(res, ks)}, {**head, **cooccurrence_recall(res, ks)}]
    return pd.DataFrame(rows)
