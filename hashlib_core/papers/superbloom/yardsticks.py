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
* **Through the hash** (:func:`hashed_rows`): both rankings as Superbloom's decoding sees them. Each hash ``k``'s
  distribution is the exact image of the ranking's scores (a token gets the summed score of the ids it holds) and id
  ``j`` is scored by ``Σ_k log Q_k(h_k(j))``, Algorithm 1's score, with the maps of a model at ``alpha`` ids per
  token. What a Superbloom model would reach if it predicted each hash's distribution exactly as the counts (or
  popularity) do: the hash's own cost, apart from anything learned.

:func:`shape_rows` says what a training step holds on each set: segments, items, and the items it predicts.

Cost: building the pair counts is linear in the number of (page, id, id) triples of the training pages; scoring is
done in chunks of ``chunk`` segments, each a sparse product and a dense ``chunk x N`` score matrix.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hashlib_core.hashing.bloom import BloomHashMaps

__all__ = ["COOCCURRENCE", "COOCCURRENCE_HASHED", "POPULARITY_HASHED", "pair_counts", "target_ranks", "through_hash",
           "hashed_popularity_ranks", "cooccurrence_recall", "hashed_rows", "yardstick_rows", "shape_rows"]

#: the name of the count ranking's rows
COOCCURRENCE = "co-occurrence counts (no training)"
#: the names of the rankings' rows through a Superbloom model's hash maps
COOCCURRENCE_HASHED = "co-occurrence counts through the hash (no training)"
POPULARITY_HASHED = "popularity through the hash (no model)"


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
                 f: np.ndarray, chunk: int = 256, table: np.ndarray | None = None) -> np.ndarray:
    """The 0-based rank of each segment's target (its id at ``positions``) under the co-occurrence score of the
    segment's other ids (module docstring): ids scored higher, or as high and more popular, or as high, as popular
    and smaller, come before it; the segment's own ids are never ranked.

    With ``table`` (``N x m`` hash tokens, :attr:`~hashlib_core.hashing.bloom.BloomHashMaps.table`) the scores go
    through the hash first (:func:`through_hash`): what Superbloom's decoding makes of the count distribution."""
    n_ids = c.shape[0]
    weight = np.where(f > 0, 1.0 / np.maximum(f, 1), 0.0)
    ranks = np.empty(len(segments), dtype=np.int64)
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
        scores[rows, cols] = 0.0                                      # the segment's own ids: no mass, never ranked
        if table is not None:
            scores = through_hash(scores, table)
        ranks[start:start + len(part)] = _ranks(scores, np.asarray(targets[start:start + len(part)]), f, (rows, cols))
    return ranks


def through_hash(scores: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``(B, N)`` non-negative id scores -> ``(B, N)`` Superbloom decoding scores ``Σ_k log Q_k(h_k(j))``, where
    ``Q_k(t)`` sums the scores of the ids hash ``k`` sends to token ``t`` (Algorithm 1's score of id ``j`` when each
    hash's distribution is the exact image of the scores; ``-inf`` where a token gets nothing). The score's scale
    does not change the order, so the scores need not be normalised."""
    table = np.asarray(table)
    if table.ndim != 2 or table.shape[0] != scores.shape[-1]:
        raise ValueError(f"table must be (N = {scores.shape[-1]}, m) hash tokens, got shape {table.shape}")
    if (scores < 0).any() or np.isnan(scores).any():
        raise ValueError("through_hash needs non-negative scores (masses), got a negative or NaN score")
    out = np.zeros(scores.shape, dtype=np.float64)
    with np.errstate(divide="ignore"):
        for k in range(table.shape[1]):
            tokens = np.asarray(table[:, k])
            order = np.argsort(tokens, kind="stable")                 # ids grouped by token
            starts = np.flatnonzero(np.r_[True, np.diff(tokens[order]) != 0])
            mass = np.zeros((scores.shape[0], int(tokens.max()) + 1))
            mass[:, tokens[order][starts]] = np.add.reduceat(scores[:, order], starts, axis=1)
            out += np.log(mass)[:, tokens]
    return out


def _ranks(scores: np.ndarray, targets: np.ndarray, f: np.ndarray, own: tuple[np.ndarray, np.ndarray] | None = None
           ) -> np.ndarray:
    """The 0-based rank of ``targets[b]`` in row ``b`` of ``scores``: ids scored higher, or as high and more popular
    (``f``), or as high, as popular and smaller, come before it; ``own`` (rows, ids) are never counted."""
    b = np.arange(len(targets))
    st, ft = scores[b, targets][:, None], f[targets][:, None]
    idx = np.arange(scores.shape[1])
    before = (scores > st) | ((scores == st) & ((f > ft) | ((f == ft) & (idx < targets[:, None]))))
    if own is not None:
        before[own] = False
    return before.sum(axis=1)


def hashed_popularity_ranks(targets: np.ndarray, frequency: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The 0-based rank of each of ``targets`` when ids are scored by :func:`through_hash` of ``frequency`` (the
    popularity ranking through the hash maps ``table``), ties to the more frequent id, then the smaller."""
    frequency = np.asarray(frequency, dtype=np.float64)
    score = through_hash(frequency[None, :], table)[0]
    order = np.lexsort((np.arange(len(score)), -frequency, -score))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[np.asarray(targets)]


def _recall(ranks: np.ndarray, ks: Sequence[int]) -> dict[str, float]:
    return {f"rec@{k}": 100.0 * float((ranks < k).mean()) for k in ks}


def cooccurrence_recall(res: Any, ks: Sequence[int], counts: tuple[sp.csr_matrix, np.ndarray] | None = None
                        ) -> dict[str, Any]:
    """Recall@k (%) of the co-occurrence ranking on ``res``'s test segments, its counts (``counts``: :func:`pair_counts`
    when already built) from ``res``'s training pages."""
    c, f = counts or _counts(res)
    test = res.test
    ranks = target_ranks(test.segments, test.targets, test.positions, c, f)
    return {"name": COOCCURRENCE, **_recall(ranks, ks), "segments": len(ranks), "pairs": int(c.nnz // 2)}


def hashed_rows(res: Any, alphas: Sequence[int], num_hashes: int, seed: int, ks: Sequence[int],
                counts: tuple[sp.csr_matrix, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """Recall@k (%) of the popularity and co-occurrence rankings through the hash maps of a Superbloom model at each
    of ``alphas`` (``num_hashes`` maps drawn with ``seed``, as :class:`~hashlib_core.hashing.bloom.BloomHashMaps`
    draws a model's) on ``res``'s test segments; one row per alpha and ranking."""
    c, f = counts or _counts(res)
    test, rows = res.test, []
    for alpha in alphas:
        maps = BloomHashMaps(res.sets.num_ids, alpha, num_hashes, seed)
        table = maps.table.numpy()
        head = {"alpha": alpha, "num_hashes": num_hashes, "tokens_per_map": maps.tokens_per_map}
        ranks = hashed_popularity_ranks(test.targets, f, table)
        rows.append({**head, "name": POPULARITY_HASHED, **_recall(ranks, ks), "segments": len(ranks)})
        ranks = target_ranks(test.segments, test.targets, test.positions, c, f, table=table)
        rows.append({**head, "name": COOCCURRENCE_HASHED, **_recall(ranks, ks), "segments": len(ranks)})
    return rows


def _counts(res: Any) -> tuple[sp.csr_matrix, np.ndarray]:
    return pair_counts([res.sets.sets[p] for p in res.pages[0]], res.sets.num_ids)


def yardstick_rows(datasets: Sequence[str], resources, ks: Sequence[int],
                   alphas: Callable[[str], Sequence[int]] = lambda name: (), num_hashes: int = 2, seed: int = 0
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both rankings on each of ``datasets`` (``resources(name)``: that dataset's
    :class:`~hashlib_core.papers.superbloom.training.Resources`), one row per dataset and ranking; and both through
    the hash at each of ``alphas(name)`` (:func:`hashed_rows`), one row per dataset, alpha and ranking."""
    from hashlib_core.papers.superbloom.training import popularity_recall

    rows, hashed = [], []
    for name in datasets:
        res = resources(name)
        head = {"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0])}
        counts = _counts(res)
        rows += [{**head, **popularity_recall(res, ks)}, {**head, **cooccurrence_recall(res, ks, counts)}]
        hashed += [{**head, **r} for r in hashed_rows(res, alphas(name), num_hashes, seed, ks, counts)]
    return pd.DataFrame(rows), pd.DataFrame(hashed)


def shape_rows(datasets: Sequence[str], resources, batch: int) -> pd.DataFrame:
    """What a training step holds on each of ``datasets`` (``resources(name)`` as for :func:`yardstick_rows`): its
    training segments, their mean items, the items the masking predicts per segment
    (:func:`~hashlib_core.papers.superbloom.data.expected_masked`) and per step of ``batch`` segments."""
    from hashlib_core.papers.superbloom.data import expected_masked

    rows = []
    for name in datasets:
        res = resources(name)
        lengths = [len(s) for s in res.train_segments.segments]
        masked = expected_masked(lengths)
        rows.append({"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0]),
                     "train_segments": len(lengths), "items_per_segment": float(np.mean(lengths)),
                     "masked_per_segment": masked, "batch": batch, "masked_per_step": batch * masked})
    return pd.DataFrame(rows)
