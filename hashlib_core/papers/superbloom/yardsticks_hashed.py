"""The no-training rankings as Superbloom's decoding sees them (the ``yardsticks_hashed`` result of the ``yardsticks``
experiment).

A ranking's scores ``s_j >= 0`` are sharpened to ``s_j ** power`` and passed through a model's hash maps
(:class:`HashImage`): each token ``t`` of map ``k`` gets the summed score ``Q_k(t)`` of the ids it holds, and id ``j``
is scored by ``Σ_k log Q_k(h_k(j))``, Algorithm 1's score when each hash's distribution is that image. Unlike the
unhashed ranking, the result depends on how sharp the scores are (a monotone change of the scores changes the
summed masses), and the count scores are not calibrated probabilities; so the power is chosen among ``powers`` on
the validation segments (the best sum of recall@k over the cut-offs), separately for each ranking, alpha and seed.
The result is a strong predictor of each hash's distribution read through the hash, not a ceiling: a model may
predict those distributions better than the counts do.

* **Popularity through the hash**: the label frequencies so passed, the same for every segment: what a model reaches
  that has learned the frequencies and nothing of the segment.
* **Co-occurrence counts through the hash**: :func:`~hashlib_core.papers.superbloom.yardsticks.target_ranks`'
  scores so passed (the segment's own ids get no score and are ranked, as a trained model ranks them).

The maps are those of the trained models: :class:`~hashlib_core.hashing.bloom.BloomHashMaps` drawn with each
training seed (a model's hash maps are drawn with its seed). Cost: per chunk of segments, ``m`` gathers and segment
sums over the ``chunk x N`` scores (the token grouping is built once per map set), plus the ranking's comparisons.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.papers.superbloom.yardsticks import counts_of, recall_row, target_ranks

__all__ = ["COOCCURRENCE_HASHED", "POPULARITY_HASHED", "POWERS", "HashImage", "hashed_popularity_ranks",
           "hashed_rows", "hashed_yardstick_rows"]

#: the names of the rankings' rows through a Superbloom model's hash maps
COOCCURRENCE_HASHED = "co-occurrence counts through the hash (no training)"
POPULARITY_HASHED = "popularity through the hash (no model)"
#: the sharpenings tried on the validation segments (1: the scores as they are)
POWERS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


class HashImage:
    """The image of id scores through the hash maps ``table`` (``N x m`` non-negative integer tokens,
    :attr:`~hashlib_core.hashing.bloom.BloomHashMaps.table`), scores first raised to ``power`` (module docstring).
    Calling it maps ``(B, N)`` non-negative scores to ``(B, N)`` decoding scores (``-inf`` where a token gets
    nothing), written to ``out`` when given. Its work arrays are kept between calls (arrays of this size are slow to
    allocate afresh), so one image serves one caller at a time."""

    def __init__(self, table: np.ndarray, power: float = 1.0) -> None:
        table = np.asarray(table)
        if table.ndim != 2 or not table.shape[0] or not table.shape[1]:
            raise ValueError(f"table must be (N, m) hash tokens with N, m >= 1, got shape {table.shape}")
        if not np.issubdtype(table.dtype, np.integer) or table.min() < 0:
            raise ValueError("table must hold non-negative integer tokens (BloomHashMaps.table), got "
                             f"dtype {table.dtype}, smallest {table.min()}")
        self.table, self.power = table, _checked_power(power)
        self._groups = []
        for k in range(table.shape[1]):
            tokens = table[:, k]
            order = np.argsort(tokens, kind="stable")                   # ids grouped by token
            starts = np.flatnonzero(np.r_[True, np.diff(tokens[order]) != 0])
            self._groups.append((tokens, order, starts, tokens[order][starts], int(tokens.max()) + 1))
        self._work: dict[str, np.ndarray] = {}

    def with_power(self, power: float) -> "HashImage":
        """The same maps at another ``power`` (the grouping and the work arrays are shared, not rebuilt)."""
        other = object.__new__(HashImage)
        other.table, other._groups, other._work = self.table, self._groups, self._work
        other.power = _checked_power(power)
        return other

    def _array(self, name: str, rows: int, cols: int) -> np.ndarray:
        held = self._work.get(name)
        if held is None or held.shape[0] < rows or held.shape[1] != cols:
            held = self._work[name] = np.zeros((rows, cols))
        return held[:rows]

    def __call__(self, scores: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 2 or scores.shape[1] != self.table.shape[0]:
            raise ValueError(f"scores must be (B, N = {self.table.shape[0]}), got shape {scores.shape}")
        if np.isnan(scores).any() or (scores < 0).any():
            raise ValueError("HashImage needs non-negative scores (masses), got a negative or NaN score")
        b, n = scores.shape
        out = np.empty((b, n)) if out is None else out
        sharp, gathered = self._array("sharp", b, n), self._array("gathered", b, n)
        top = scores.max(axis=1, keepdims=True)
        np.divide(scores, np.where(top > 0, top, 1.0), out=sharp)       # scale-free: the order does not move
        _sharpen(sharp, self.power)
        with np.errstate(divide="ignore"):
            for k, (tokens, order, starts, present, size) in enumerate(self._groups):
                np.take(sharp, order, axis=1, out=gathered)
                mass = np.zeros((b, size))
                mass[:, present] = np.add.reduceat(gathered, starts, axis=1)
                np.take(np.log(mass), tokens, axis=1, out=out if k == 0 else gathered)
                if k:
                    out += gathered
        return out


def _checked_power(power: float) -> float:
    if isinstance(power, bool) or not isinstance(power, (int, float, np.floating)) or not (
            np.isfinite(power) and power > 0):
        raise ValueError(f"power must be a positive finite number, got {power!r}")
    return float(power)


def _sharpen(values: np.ndarray, power: float) -> None:
    """``values ** power`` in place (a power of two by repeated squaring, one half by the square root)."""
    doublings = np.log2(power)
    if power == 1.0:
        return
    if power > 1 and doublings == round(doublings):
        for _ in range(int(round(doublings))):
            np.multiply(values, values, out=values)
    elif power == 0.5:
        np.sqrt(values, out=values)
    else:
        np.power(values, power, out=values)


def hashed_popularity_ranks(targets: np.ndarray, frequency: np.ndarray, image: HashImage) -> np.ndarray:
    """The 0-based rank of each of ``targets`` when ids are scored by ``image`` of ``frequency`` (the popularity
    ranking through the hash), ties to the more frequent id, then the smaller."""
    frequency = np.asarray(frequency, dtype=np.float64)
    score = image(frequency[None, :])[0]
    order = np.lexsort((np.arange(len(score)), -frequency, -score))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[np.asarray(targets)]


def _chosen(ranks_at: Callable[[HashImage], np.ndarray], image: HashImage, powers: Sequence[float],
            ks: Sequence[int]) -> HashImage:
    """The image at the power whose validation ranks (``ranks_at(image)``) have the best sum of recall@k; ties go
    to the earlier power of ``powers``."""
    if not powers:
        raise ValueError("powers must name at least one sharpening (1.0: the scores as they are)")
    scored = [(sum(recall_row(ranks_at(image.with_power(p)), ks).values()), -i, p) for i, p in enumerate(powers)]
    return image.with_power(max(scored)[2])


def hashed_rows(res: Any, alphas: Sequence[int], num_hashes: int, seeds: Callable[[int], Sequence[int]],
                ks: Sequence[int], counts: tuple[sp.csr_matrix, np.ndarray] | None = None,
                powers: Sequence[float] = POWERS) -> list[dict[str, Any]]:
    """Recall@k (%) of the popularity and co-occurrence rankings through the hash maps of a Superbloom model at each
    of ``alphas`` (``num_hashes`` maps drawn with each of ``seeds(alpha)``) on ``res``'s test segments, each at the
    power of ``powers`` chosen on ``res``'s validation segments; one row per alpha, seed and ranking."""
    c, f = counts or counts_of(res)
    test, val, rows = res.test, res.validation, []
    for alpha in alphas:
        for seed in seeds(alpha):
            maps = BloomHashMaps(res.sets.num_ids, alpha, num_hashes, seed)
            image = HashImage(maps.table.numpy())
            head = {"alpha": alpha, "num_hashes": num_hashes, "tokens_per_map": maps.tokens_per_map, "seed": seed}
            pop = _chosen(lambda im: hashed_popularity_ranks(val.targets, f, im), image, powers, ks)
            ranks = hashed_popularity_ranks(test.targets, f, pop)
            rows.append({**head, "name": POPULARITY_HASHED, "power": pop.power, **recall_row(ranks, ks),
                         "segments": len(ranks)})
            cooc = _chosen(lambda im: target_ranks(val.segments, val.targets, val.positions, c, f, image=im),
                           image, powers, ks)
            ranks = target_ranks(test.segments, test.targets, test.positions, c, f, image=cooc)
            rows.append({**head, "name": COOCCURRENCE_HASHED, "power": cooc.power, **recall_row(ranks, ks),
                         "segments": len(ranks)})
    return rows


def hashed_yardstick_rows(datasets: Sequence[str], resources, ks: Sequence[int],
                          alphas: Callable[[str], Sequence[int]], seeds: Callable[[str, int], Sequence[int]],
                          num_hashes: int, counts: Callable[[str], tuple[sp.csr_matrix, np.ndarray]] | None = None,
                          powers: Sequence[float] = POWERS) -> pd.DataFrame:
    """:func:`hashed_rows` on each of ``datasets`` (``resources(name)``: its
    :class:`~hashlib_core.papers.superbloom.training.Resources`) at ``alphas(name)`` and ``seeds(name, alpha)``
    (those of the Superbloom models trained on it; ``counts(name)``: its pair counts, built here when not given)."""
    rows = []
    for name in datasets:
        res = resources(name)
        head = {"dataset": res.sets.name, "ids": res.sets.num_ids, "train_pages": len(res.pages[0])}
        built = counts(name) if counts is not None else counts_of(res)
        rows += [{**head, **r} for r in hashed_rows(res, alphas(name), num_hashes, lambda a: seeds(name, a), ks,
                                                    built, powers)]
    return pd.DataFrame(rows)
