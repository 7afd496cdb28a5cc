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
* **Through the hash**: both rankings as Superbloom's decoding sees them
  (:mod:`~hashlib_core.papers.superbloom.yardsticks_hashed`).

:func:`shape_rows` says what a training step holds on each set: segments, items, and the items it predicts.

Cost: building the pair counts is linear in the number of (page, id, id) triples of the training pages; scoring is
done in chunks of ``chunk`` segments, each a sparse product and a few dense ``chunk x N`` matrices (the scores, their
image through the hash when asked, the comparisons that rank the target).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hashlib_core.papers.superbloom.data import expected_masked

__all__ = ["COOCCURRENCE", "pair_counts", "counts_of", "target_ranks", "rank_targets", "recall_row",
           "cooccurrence_recall", "yardstick_rows", "shape_rows"]

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
                 f: np.ndarray, chunk: int = 256, image: Callable[..., np.ndarray] | None = None) -> np.ndarray:
    """The 0-based rank of each segment's target (its id at ``positions``) under the co-occurrence score of the
    segment's other ids (module docstring): ids scored higher, or as high and more popular, or as high, as popular
    and smaller, come before it. The segment's own ids get no score and are never ranked (a set never repeats one).

    ``image``: a map of each chunk's ``(B, N)`` scores to the scores the ids are ranked by, called as
    ``image(scores, out=array)`` (for example their image through Superbloom's hash,
    :class:`~hashlib_core.papers.superbloom.yardsticks_hashed.HashImage`). The own ids still get no score, but are
    then ranked, as a trained model ranks every id."""
    n_ids = c.shape[0]
    weight = np.where(f > 0, 1.0 / np.maximum(f, 1), 0.0)
    ranks = np.empty(len(segments), dtype=np.int64)
    rows_held = min(chunk, len(segments))
    held = np.zeros((rows_held, n_ids)), (np.zeros((rows_held, n_ids)) if image is not None else None)
    for start in range(0, len(segments), chunk):
        part = range(start, min(start + chunk, len(segments)))
        rows, cols = [], []
        for r, s in enumerate(part):
            context = np.delete(np.asarray(segments[s]), positions[s])
            rows.append(np.full(len(context), r))
            cols.append(context)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        q = sp.csr_matrix((weight[cols], (rows, cols)), shape=(len(part), n_ids))
        scores = held[0][:len(part)]                                  # reused: arrays this size are slow to allocate
        scores.fill(0.0)
        (q @ c).toarray(out=scores)
        scores[rows, cols] = 0.0                                      # the segment's own ids: no score
        own = (rows, cols)
        if image is not None:
            scores, own = image(scores, out=held[1][:len(part)]), None
        ranks[start:start + len(part)] = rank_targets(scores, np.asarray(targets[start:start + len(part)]), f, own)
    return ranks


def rank_targets(scores: np.ndarray, targets: np.ndarray, f: np.ndarray,
                 own: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The 0-based rank of ``targets[b]`` in row ``b`` of ``scores``: ids scored higher, or as high and more popular
    (``f``), or as high, as popular and smaller, come before it; ``own`` (rows, ids) are never counted."""
    b = np.arange(len(targets))
    st, ft = scores[b, targets][:, None], f[targets][:, None]
    idx = np.arange(scores.shape[1])
    before = (scores > st) | ((scores == st) & ((f > ft) | ((f == ft) & (idx < targets[:, None]))))
    if own is not None:
        before[own] = False
    return before.sum(axis=1)


def recall_row(ranks: np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    """Recall@k (%) of 0-based target ``ranks`` at each of ``ks``."""
    return {f"rec@{k}": 100.0 * float((np.asarray(ranks) < k).mean()) for k in ks}


def counts_of(res: Any) -> tuple[sp.csr_matrix, np.ndarray]:
    """:func:`pair_counts` of ``res``'s training pages."""
    return pair_counts([res.sets.sets[p] for p in res.pages[0]], res.sets.num_ids)


def cooccurrence_recall(res: Any, ks: Sequence[int], counts: tuple[sp.csr_matrix, np.ndarray] | None = None
                        ) -> dict[str, Any]:
    """Recall@k (%) of the co-occurrence ranking on ``res``'s test segments, its counts (``counts``: :func:`counts_of`
    when already built) from ``res``'s training pages."""
    c, f = counts or counts_of(res)
    test = res.test
    ranks = target_ranks(test.segments, test.targets, test.positions, c, f)
    return {"name": COOCCURRENCE, **recall_row(ranks, ks), "segments": len(ranks), "pairs": int(c.nnz // 2)}


def yardstick_rows(datasets: Sequence[str], resources, ks: Sequence[int],
                   counts: Callable[[str], tuple[sp.csr_matrix, np.ndarray]] | None = None) -> pd.DataFrame:
    """Both rankings on each of ``datasets`` (``resources(name)``: that dataset's
    :class:`~hashlib_core.papers.superbloom.training.Resources`; ``counts(name)``: its :func:`counts_of`, built here
    when not given), one row per dataset and ranking."""
    from hashlib_core.papers.superbloom.training import popularity_recall

    rows = []
    for name in datasets:
        res = resources(name)
        head = {"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0])}
        built = counts(name) if counts is not None else counts_of(res)
        rows += [{**head, **popularity_recall(res, ks)}, {**head, **cooccurrence_recall(res, ks, built)}]
    return pd.DataFrame(rows)


def shape_rows(datasets: Sequence[str], resources, batch: int) -> pd.DataFrame:
    """What a training step holds on each of ``datasets`` (``resources(name)`` as for :func:`yardstick_rows`): its
    training segments, their mean items, the items the masking predicts per segment
    (:func:`~hashlib_core.papers.superbloom.data.expected_masked`) and per step of ``batch`` segments."""
    rows = []
    for name in datasets:
        res = resources(name)
        lengths = [len(s) for s in res.train_segments.segments]
        masked = expected_masked(lengths)
        rows.append({"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0]),
                     "train_segments": len(lengths), "items_per_segment": float(np.mean(lengths)),
                     "masked_per_segment": masked, "batch": batch, "masked_per_step": batch * masked})
    return pd.DataFrame(rows)
