"""Resampling intervals for claims: the two-level paired bootstrap over test items and training runs, vectorised.

* :func:`paired_bootstrap` -- two models scored **on the same items** (the usual test in NLP, Koehn 2004; Berg-
  Kirkpatrick et al. 2012). With per-item scores of several training runs (seeds x items) it is a **two-level**
  bootstrap: every resample draws the items (the same draw for both models: paired) and, within each model, its
  runs, with replacement, so the interval covers the variation between training runs as well as the choice of test
  items. :func:`bootstrap_means` is the general form (any statistic of several models' means);
* :func:`stratified_bootstrap` -- several item sets (the dev sets of several tasks) resampled independently, each
  giving some values per resample (models' scores on that task), combined into one statistic (an average difference
  over tasks, a retention, the lowest of several retentions).

**Vectorised.** A bootstrap draws its resamples as count matrices (how often each item, each run, is drawn in each
resample; :func:`item_counts`), so a model's score on every resample at once is a matrix product and the metrics
(accuracy, a hit rate, Matthews' correlation, Spearman's rho: :func:`weighted_mcc`, :func:`weighted_spearman`) are
computed on counts instead of once per resample in Python. A resample drawn as indices and the same resample given
as counts score the same (tested).

Resampling draws from local ``numpy`` generators with fixed seeds, so a verdict is reproducible bit for bit.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from hashlib_core.claims.statistics import Interval, _check_level, _check_resamples, _check_seed

__all__ = ["DEFAULT_RESAMPLES", "paired_bootstrap", "bootstrap_means", "stratified_bootstrap", "item_counts",
           "resampled_mean", "seed_average", "weighted_mcc", "weighted_ranks", "weighted_spearman"]

#: resamples of a bootstrap: enough that the percentile interval's ends move by well under its width
DEFAULT_RESAMPLES = 2000
#: entries of one chunk's count matrix (resamples x items): bounds the memory a bootstrap holds at once
_CELLS = 2_000_000


def _chunks(resamples: int, n: int) -> list[int]:
    """Resamples per chunk, so that a chunk's count matrix holds at most :data:`_CELLS` entries."""
    size = max(1, min(resamples, _CELLS // max(n, 1)))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def item_counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """``(resamples, n)`` float counts: how often each of ``n`` items is drawn in each resample of ``n`` draws with
    replacement (the draws of :meth:`numpy.random.Generator.integers`, counted)."""
    draws = rng.integers(0, n, (resamples, n))
    flat = (draws + n * np.arange(resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(float)


def resampled_mean(scores: np.ndarray, counts: np.ndarray, rng: np.random.Generator | None,
                   weights: np.ndarray | None = None) -> np.ndarray:
    """One model's mean per-item score on each resample: ``scores`` is ``(runs, items)``; ``counts`` the items'
    counts ``(resamples, items)``; with a generator ``rng`` the runs are drawn with replacement too (two levels;
    ``weights``: those draws already made, ``(resamples, runs)`` counts, shared by several scores of the same runs),
    with ``None`` every run counts once. Returns ``(resamples,)``."""
    runs, n = scores.shape
    if (rng is None and weights is None) or runs == 1:
        per_item = scores.mean(axis=0)
        return counts @ per_item / n
    if weights is None:
        weights = item_counts(rng, runs, counts.shape[0])        # (resamples, runs)
    return np.einsum("ri,ri->r", weights @ scores, counts) / (runs * n)


def seed_average(per_run: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """``(resamples, runs)`` scores (each run's metric on each resample) averaged over the runs, which a generator
    ``rng`` draws with replacement first (the second level of a two-level bootstrap)."""
    resamples, runs = per_run.shape
    if rng is None or runs == 1:
        return per_run.mean(axis=1)
    return (item_counts(rng, runs, resamples) * per_run).sum(axis=1) / runs


def weighted_mcc(pred: np.ndarray, gold: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Matthews' correlation of two binary label arrays on each resample given as item counts ``(resamples, n)``
    (0 where a margin is empty, as scikit-learn returns)."""
    p, g = np.asarray(pred) == 1, np.asarray(gold) == 1
    tp, fp = counts @ (p & g).astype(float), counts @ (p & ~g).astype(float)
    fn, tn = counts @ (~p & g).astype(float), counts @ (~p & ~g).astype(float)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (tp * tn - fp * fn) / np.sqrt(den)
    return np.where(den == 0, 0.0, out)


def weighted_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each item's average rank (1-based, ties shared) in the multiset where item i appears ``counts[:, i]`` times:
    what ``scipy.stats.rankdata`` gives every copy of item i in the resampled array."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    group = np.cumsum(np.r_[True, sorted_values[1:] != sorted_values[:-1]]) - 1          # group of each sorted item
    ends = np.r_[starts[1:], len(values)]
    cum = np.cumsum(counts[:, order], axis=1)
    cum = np.concatenate([np.zeros((counts.shape[0], 1)), cum], axis=1)
    below = cum[:, starts]                                    # drawn items strictly smaller than each group
    inside = cum[:, ends] - below
    ranks_sorted = (below + (inside + 1) / 2)[:, group]
    ranks = np.empty_like(ranks_sorted)
    ranks[:, order] = ranks_sorted
    return ranks


def weighted_spearman(pred: np.ndarray, gold: np.ndarray, counts: np.ndarray,
                      gold_ranks: np.ndarray | None = None) -> np.ndarray:
    """Spearman's rho (average ranks for ties) on each resample given as item counts ``(resamples, n)``: the Pearson
    correlation of the resampled multiset's ranks; 0 where either side is constant. ``gold_ranks``: the gold
    scores' weighted ranks for these counts, when several predictions share them."""
    rp = weighted_ranks(np.asarray(pred, dtype=float), counts)
    rg = weighted_ranks(np.asarray(gold, dtype=float), counts) if gold_ranks is None else gold_ranks
    total = counts.sum(axis=1)
    mp, mg = (counts * rp).sum(axis=1) / total, (counts * rg).sum(axis=1) / total
    dp, dg = rp - mp[:, None], rg - mg[:, None]
    cov = (counts * dp * dg).sum(axis=1)
    vp, vg = (counts * dp * dp).sum(axis=1), (counts * dg * dg).sum(axis=1)
    tiny = 1e-12 * total ** 3                                 # rank variances are O(n^3): below this, constant
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = cov / np.sqrt(vp * vg)
    return np.where((vp <= tiny) | (vg <= tiny), 0.0, np.clip(rho, -1.0, 1.0))


def _percentiles(draws: np.ndarray, estimate: float, level: float) -> tuple[float, float]:
    if not np.all(np.isfinite(draws)):
        raise ValueError("the statistic returned a non-finite value on a resample; use metrics defined on every "
                         "subset (e.g. MCC returns 0 when a class is missing)")
    low, high = (float(v) for v in np.percentile(draws, [100 * (0.5 - level / 2), 100 * (0.5 + level / 2)]))
    return min(low, estimate), max(high, estimate)


# --------------------------------------------------------------------------------------------------- bootstraps
def _as_items(values: np.ndarray | Sequence, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{what}: per-item scores must be (items,) or (seeds, items), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{what}: no items")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: per-item scores must be finite")
    return arr


def _runs_text(runs: Mapping[str, int]) -> str:
    """``"A: 3 seeds, B: 1 seed"``, or ``"3 seeds each"``."""
    if len(set(runs.values())) == 1 and len(runs) > 1:
        k = next(iter(runs.values()))
        return f"{k} seed{'s' * (k > 1)} each"
    return ", ".join(f"{name}: {k} seed{'s' * (k > 1)}" for name, k in runs.items())


def bootstrap_means(
    scores: Mapping[str, np.ndarray | Sequence],
    statistic: Callable[[Mapping[str, np.ndarray]], np.ndarray],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    items: str = "items",
    seeds: bool = True,
    runs_of: Mapping[str, str] | None = None,
) -> Interval:
    """A statistic of several models' mean per-item scores, all scored on the same items, with a two-level paired
    percentile bootstrap.

    ``scores[name]`` is ``(items,)`` or ``(runs, items)``: each training run's per-item score (a 0/1 correctness, a
    hit@k, a loss). A model's score is its mean over runs and items; ``statistic({name: (R,) array})`` combines the
    models' scores on ``R`` resamples at once (vectorised: ``lambda m: m["A"] - m["B"]``). Each resample draws the
    items once for every model (paired) and, with ``seeds``, each model's runs with replacement (two levels; a model
    with one run contributes only its items). ``runs_of`` maps score names to the model whose runs they come from
    (a model's hits at several cut-offs, say): scores of one model share its draws of runs in every resample."""
    _check_resamples(resamples)
    _check_level(level)
    _check_seed(seed)
    if not scores:
        raise ValueError("bootstrap_means needs at least one model's scores")
    mats = {name: _as_items(s, name) for name, s in scores.items()}
    widths = {name: m.shape[1] for name, m in mats.items()}
    if len(set(widths.values())) != 1:
        raise ValueError(f"the models were scored on different numbers of items ({widths}): a paired bootstrap "
                         "needs the same items in the same order")
    n = next(iter(widths.values()))
    if n < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n}")
    owner = {k: (runs_of or {}).get(k, k) for k in mats}
    for model in set(owner.values()):
        sizes = {mats[k].shape[0] for k in mats if owner[k] == model}
        if len(sizes) > 1:
            raise ValueError(f"the scores of {model} have different numbers of runs ({sorted(sizes)})")
    ones = np.ones((1, n))
    estimate = _scalar(statistic({k: resampled_mean(m, ones, None) for k, m in mats.items()}), 1)
    rng, units = np.random.default_rng(seed), (np.random.default_rng([seed, 1]) if seeds else None)
    draws = []
    for size in _chunks(resamples, n):
        counts = item_counts(rng, n, size)
        drawn = {}
        for k in mats:                                            # one draw of runs per model, in the scores' order
            runs_k = mats[k].shape[0]
            if units is not None and runs_k > 1 and owner[k] not in drawn:
                drawn[owner[k]] = item_counts(units, runs_k, size)
        draws.append(_vector(statistic({k: resampled_mean(m, counts, None, drawn.get(owner[k]))
                                        for k, m in mats.items()}), size))
    low, high = _percentiles(np.concatenate(draws), estimate, level)
    runs = {model: mats[k].shape[0] for k, model in owner.items()}
    several = seeds and any(r > 1 for r in runs.values())
    how = f"{resamples:,} resamples" + (f"; each model's seeds resampled too ({_runs_text(runs)})" if several else
                                        (f"; {_runs_text(runs)}, averaged per item" if any(r > 1 for r in
                                                                                          runs.values()) else ""))
    return Interval(estimate, low, high, f"paired bootstrap over {n:,} {items} ({how})", n, level,
                    ("items", "seeds") if several else ("items",))


def _scalar(value: np.ndarray | float, expected: int) -> float:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.size != expected:
        raise ValueError(f"the statistic must return one value per resample ({expected}), got {arr.size}")
    if not math.isfinite(float(arr[0])):
        raise ValueError("the statistic is not finite on the items themselves")
    return float(arr[0])


def _vector(value: np.ndarray | float, expected: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.size != expected:
        raise ValueError(f"the statistic must return one value per resample ({expected}), got {arr.size}: write it "
                         "with arrays (np.mean(..., axis=0), np.minimum), not with Python's min() or float()")
    return arr


def paired_bootstrap(
    a: np.ndarray | Sequence | None = None,
    b: np.ndarray | Sequence | None = None,
    *,
    metric: Callable[[np.ndarray], float] | None = None,
    metric_b: Callable[[np.ndarray], float] | None = None,
    n_items: int | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    items: str = "items",
    seeds: bool = True,
    names: tuple[str, str] = ("a", "b"),
) -> Interval:
    """The difference ``A - B`` of two models scored on the same items, with a paired percentile-bootstrap interval.

    Two ways to call it:

    * **per-item scores** ``a`` and ``b`` (``(items,)`` or ``(runs, items)``: a 0/1 correctness, a hit@k, a
      per-item loss): the metric is their mean; with several runs (seeds) the bootstrap is two-level, each model's
      runs resampled within every draw of the items (:func:`bootstrap_means`; ``seeds=False`` averages the runs per
      item and resamples the items only);
    * **a metric** ``metric(indices) -> float`` for model A and ``metric_b`` for B (e.g. MCC of the predictions
      at ``indices`` against the labels at ``indices``), with ``n_items``: both are recomputed on each resample,
      one at a time (the general, slow path, for metrics of one run that no count matrix expresses).

    ``items`` names the items in the method sentence (``"SST-2 dev sentences"``), ``names`` the two models (where
    their numbers of seeds differ). Resampling is paired: both models see the same resampled items, so what they
    share (hard items, easy items) cancels in the difference.
    """
    _check_resamples(resamples)
    _check_level(level)
    _check_seed(seed)
    if metric is None and metric_b is None:
        if a is None or b is None:
            raise ValueError("paired_bootstrap needs per-item scores a and b, or metric, metric_b and n_items")
        first, second = names
        if first == second:
            raise ValueError(f"the two models need two names, got {names!r}")
        return bootstrap_means({first: a, second: b}, lambda m: m[first] - m[second], resamples=resamples,
                               level=level, seed=seed, items=items, seeds=seeds)
    if metric is None or metric_b is None or n_items is None:
        raise ValueError("a metric bootstrap needs metric, metric_b and n_items")
    if a is not None or b is not None:
        raise ValueError("give either per-item scores (a, b) or metrics, not both")
    if n_items < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n_items}")
    rng = np.random.default_rng(seed)
    everything = np.arange(n_items)
    estimate = float(metric(everything) - metric_b(everything))
    diffs = np.empty(resamples)
    for r in range(resamples):
        idx = rng.integers(0, n_items, n_items)
        diffs[r] = metric(idx) - metric_b(idx)
    low, high = _percentiles(diffs, estimate, level)
    return Interval(estimate, low, high, f"paired bootstrap over {n_items:,} {items} ({resamples:,} resamples)",
                    n_items, level, ("items",))


def stratified_bootstrap(
    parts: Sequence[tuple[int, Callable[[np.ndarray, np.random.Generator | None], Sequence[np.ndarray]]]],
    combine: Callable[[list[Sequence[np.ndarray]]], np.ndarray],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    items: str = "items",
    nested: str = "",
) -> Interval:
    """A statistic of several models scored on several item sets, with a percentile-bootstrap interval, vectorised.

    ``parts`` are ``(n_items, values)``: ``values(counts, rng)`` gets the item counts of ``R`` resamples of one set
    (``(R, n_items)``; a single row of ones for the estimate) and returns the numbers the statistic needs from it,
    each an ``(R,)`` array (e.g. two models' metric on each resample of one task: :func:`resampled_mean`,
    :func:`weighted_mcc`). Each resample draws every part's items independently with replacement, the same draw for
    every model (the comparison stays paired), and ``combine`` turns the parts' values into the statistic, an
    ``(R,)`` array (e.g. the mean over tasks of A - B).

    ``nested`` (a description, e.g. "each model's fine-tuning seeds") makes the bootstrap two-level: ``rng`` is then
    a generator in every resample (``None`` for the estimate), which ``values`` uses to draw its own units too (each
    model's runs, with replacement: :func:`seed_average`), so the interval also covers the variation between them;
    without ``nested``, ``rng`` is always ``None``."""
    if not parts:
        raise ValueError("stratified_bootstrap needs at least one part")
    _check_resamples(resamples)
    _check_level(level)
    _check_seed(seed)
    sizes = [int(n) for n, _ in parts]
    if min(sizes) < 2:
        raise ValueError(f"every part needs at least 2 items, got {sizes}")
    rng = np.random.default_rng(seed)
    units = np.random.default_rng([seed, 1]) if nested else None
    estimate = _scalar(combine([[np.asarray(v, float) for v in fn(np.ones((1, n)), None)] for n, fn in parts]), 1)
    draws = []
    for size in _chunks(resamples, max(sizes)):
        values = [[_vector(v, size) for v in fn(item_counts(rng, n, size), units)] for n, fn in parts]
        draws.append(_vector(combine(values), size))
    low, high = _percentiles(np.concatenate(draws), estimate, level)
    what = f"{sum(sizes):,} {items}" if len(sizes) == 1 else f"{' + '.join(f'{n:,}' for n in sizes)} {items}"
    how = (f"{resamples:,} resamples" + (", each set resampled on its own" if len(sizes) > 1 else "")
           + (f"; {nested} resampled too" if nested else ""))
    return Interval(estimate, low, high, f"paired bootstrap over {what} ({how})", sum(sizes), level,
                    ("items", "seeds") if nested else ("items",))
