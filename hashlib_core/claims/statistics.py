"""Uncertainty for claims: intervals across seeds, bootstraps over test items and seeds, Kendall's tau.

Every function returns an :class:`Interval`: the point estimate, a two-sided interval at ``level`` (95% unless
asked otherwise) or none, a sentence saying how it was obtained, which the claims table prints, and the sources of
chance it covers (:attr:`Interval.covers`: test items, training seeds, timing repeats).

* :func:`seed_interval` -- the mean of one model's scores over seeds, with Student's t interval;
* :func:`seed_difference` -- the difference of two models' means over seeds (Welch's t interval), when the two are
  not scored on shared items (or only their per-seed scores were kept);
* :func:`paired_bootstrap` -- two models scored **on the same items** (the usual test in NLP, Koehn 2004; Berg-
  Kirkpatrick et al. 2012). With per-item scores of several training runs (seeds x items) it is a **two-level**
  bootstrap: every resample draws the items (the same draw for both models: paired) and, within each model, its
  runs, with replacement, so the interval covers the variation between training runs as well as the choice of test
  items. :func:`bootstrap_means` is the general form (any statistic of several models' means);
* :func:`stratified_bootstrap` -- several item sets (the dev sets of several tasks) resampled independently, each
  giving some values per resample (models' scores on that task), combined into one statistic (an average difference
  over tasks, a retention, the lowest of several retentions);
* :func:`kendall_tau`, :func:`correlation_interval`, :func:`correlation_difference`, :func:`auc_interval`,
  :func:`proportion_interval`, :func:`ratio_of_means`: closed-form intervals;
* :func:`resolving_factor` -- how many times more items (and seeds) an interval needs to resolve an effect.

**Vectorised.** A bootstrap draws its resamples as count matrices (how often each item, each run, is drawn in each
resample; :func:`item_counts`), so a model's score on every resample at once is a matrix product and the metrics
(accuracy, a hit rate, Matthews' correlation, Spearman's rho: :func:`weighted_mcc`, :func:`weighted_spearman`) are
computed on counts instead of once per resample in Python. A resample drawn as indices and the same resample
given as counts score the same (tested).

Resampling draws from local ``numpy`` generators with fixed seeds, so a verdict is reproducible bit for bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

__all__ = ["Interval", "seed_interval", "seed_difference", "paired_bootstrap", "bootstrap_means",
           "stratified_bootstrap", "kendall_tau", "correlation_interval", "correlation_difference", "auc_interval",
           "proportion_interval", "ratio_of_means", "resolving_factor", "seed_contrast", "combined", "item_counts",
           "resampled_mean", "seed_average", "weighted_mcc", "weighted_ranks", "weighted_spearman", "DEFAULT_RESAMPLES"]

#: resamples of a bootstrap: enough that the percentile interval's ends move by well under its width
DEFAULT_RESAMPLES = 2000
#: entries of one chunk's count matrix (resamples x items): bounds the memory a bootstrap holds at once
_CELLS = 2_000_000


@dataclass(frozen=True)
class Interval:
    """A point estimate and, when the evidence allows one, its two-sided interval at ``level``.

    ``covers`` names the sources of chance the interval resamples or models (``"items"``, ``"seeds"``,
    ``"repeats"``); empty for an exact number or a single measurement."""

    estimate: float
    low: float | None = None
    high: float | None = None
    method: str = ""
    n: int | None = None          # items (bootstrap) or seeds (t interval) the interval rests on
    level: float = 0.95
    covers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.low is None) != (self.high is None):
            raise ValueError("an interval needs both ends or neither")
        if not math.isfinite(self.estimate):
            raise ValueError(f"the estimate must be a finite number, got {self.estimate!r}")
        if self.low is not None:
            slack = 1e-9 * max(1.0, abs(self.estimate))
            if not self.low - slack <= self.estimate <= self.high + slack:
                raise ValueError(f"interval [{self.low}, {self.high}] does not contain its estimate {self.estimate}")

    @property
    def has_interval(self) -> bool:
        return self.low is not None

    @property
    def half_width(self) -> float | None:
        """Half the interval's width: the smallest effect this test resolves (``None`` without an interval)."""
        return None if self.low is None else (self.high - self.low) / 2


def _finite(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError(f"{what}: no values (a model with no scored run cannot be compared)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: values must be finite numbers, got {arr.tolist()}")
    return arr


def _t_quantile(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def _check_level(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise ValueError(f"level must be in [0.5, 1), got {level!r}")


def _check_resamples(resamples: int) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 100:
        raise ValueError(f"resamples must be an integer of at least 100 for a percentile interval, got {resamples!r}")


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 (it seeds numpy's generator), got {seed!r}")


def seed_interval(values: Sequence[float], *, level: float = 0.95, what: str = "scores") -> Interval:
    """The mean of ``values`` (one per seed) with Student's t interval; one value gives the mean and no interval."""
    arr = _finite(values, what)
    mean = float(arr.mean())
    n = int(arr.size)
    if n < 2:
        return Interval(mean, method="one seed: no interval", n=n, level=level)
    spread = float(arr.std(ddof=1))
    if spread == 0.0:
        return Interval(mean, method=f"{n} seeds scored the same: no interval (no variation seen is not certainty)",
                        n=n, level=level)
    half = _t_quantile(level, n - 1) * spread / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, f"t interval over {n} seeds", n, level, ("seeds",))


def seed_difference(a: Sequence[float], b: Sequence[float], *, level: float = 0.95) -> Interval:
    """``mean(a) - mean(b)`` over seeds, with Welch's t interval (no pairing assumed between the seeds of two
    models). Fewer than two seeds on either side gives the difference and no interval, and so does a zero spread
    (every seed of both models scored the same, a model stuck at the majority class, say): seeing no variation in a
    few runs is no evidence of certainty, so such a difference cannot settle a claim."""
    x, y = _finite(a, "first model's scores"), _finite(b, "second model's scores")
    diff = float(x.mean() - y.mean())
    if x.size < 2 or y.size < 2:
        return Interval(diff, method=f"{min(x.size, y.size)} seed(s): no interval", n=int(min(x.size, y.size)),
                        level=level)
    vx, vy = float(x.var(ddof=1)) / x.size, float(y.var(ddof=1)) / y.size
    se = math.sqrt(vx + vy)
    seeds = f"{x.size} and {y.size} seeds" if x.size != y.size else f"{x.size} seeds each"
    if se == 0.0:
        return Interval(diff, method=f"{seeds}, every seed scored the same: no interval (no variation seen is not "
                        "certainty)", n=int(min(x.size, y.size)), level=level)
    df = (vx + vy) ** 2 / (vx ** 2 / (x.size - 1) + vy ** 2 / (y.size - 1))
    half = _t_quantile(level, df) * se
    return Interval(diff, diff - half, diff + half, f"Welch t interval over {seeds}", int(min(x.size, y.size)),
                    level, ("seeds",))


# ------------------------------------------------------------------------------------------- the vectorised draws
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


def resampled_mean(scores: np.ndarray, counts: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """One model's mean per-item score on each resample: ``scores`` is ``(runs, items)``; ``counts`` the items'
    counts ``(resamples, items)``; with a generator ``rng`` the runs are drawn with replacement too (two levels),
    with ``None`` every run counts once. Returns ``(resamples,)``."""
    runs, n = scores.shape
    if rng is None or runs == 1:
        per_item = scores.mean(axis=0)
        return counts @ per_item / n
    weights = item_counts(rng, runs, counts.shape[0])            # (resamples, runs)
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
) -> Interval:
    """A statistic of several models' mean per-item scores, all scored on the same items, with a two-level paired
    percentile bootstrap.

    ``scores[name]`` is ``(items,)`` or ``(runs, items)``: each training run's per-item score (a 0/1 correctness, a
    hit@k, a loss). A model's score is its mean over runs and items; ``statistic({name: (R,) array})`` combines the
    models' scores on ``R`` resamples at once (vectorised: ``lambda m: m["A"] - m["B"]``). Each resample draws the
    items once for every model (paired) and, with ``seeds``, each model's runs with replacement (two levels; a model
    with one run contributes only its items)."""
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
    ones = np.ones((1, n))
    estimate = _scalar(statistic({k: resampled_mean(m, ones, None) for k, m in mats.items()}), 1)
    rng, units = np.random.default_rng(seed), (np.random.default_rng([seed, 1]) if seeds else None)
    draws = []
    for size in _chunks(resamples, n):
        counts = item_counts(rng, n, size)
        draws.append(_vector(statistic({k: resampled_mean(m, counts, units) for k, m in mats.items()}), size))
    low, high = _percentiles(np.concatenate(draws), estimate, level)
    runs = {k: m.shape[0] for k, m in mats.items()}
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


def seed_contrast(groups: Sequence[Sequence[float]], signs: Sequence[float], *, level: float = 0.95) -> Interval:
    """``sum(sign * mean(group))`` over independent groups of per-seed scores (a difference of two models, or a
    difference of two differences), with a Welch-Satterthwaite t interval over the seeds. Fewer than two seeds in a
    group, or no spread at all, gives the contrast and no interval."""
    if len(groups) != len(signs) or not groups:
        raise ValueError("seed_contrast needs one sign per group, and at least one group")
    arrays = [_finite(g, f"group {i}") for i, g in enumerate(groups)]
    estimate = float(sum(sg * a.mean() for sg, a in zip(signs, arrays)))
    if min(a.size for a in arrays) < 2:
        return Interval(estimate, method="a group with one seed: no interval over seeds", level=level)
    parts = [sg * sg * float(a.var(ddof=1)) / a.size for sg, a in zip(signs, arrays)]
    var = sum(parts)
    if var == 0.0:
        return Interval(estimate, method="every seed scored the same: no interval over seeds", level=level)
    df = var ** 2 / sum(v ** 2 / (a.size - 1) for v, a in zip(parts, arrays) if v > 0)
    half = _t_quantile(level, df) * math.sqrt(var)
    seeds = "/".join(str(a.size) for a in arrays)
    return Interval(estimate, estimate - half, estimate + half, f"Welch t interval over seeds ({seeds})",
                    min(a.size for a in arrays), level, ("seeds",))


def combined(items: Interval, seeds: Interval, *, estimate: float | None = None) -> Interval:
    """An interval that covers two independent sources of chance measured apart: the test items (``items``, e.g. a
    bootstrap with the seeds averaged per item) and the training runs (``seeds``, e.g. :func:`seed_contrast` over
    per-seed scores), their half-widths added in quadrature around ``estimate`` (``items``' estimate by default).
    An approximation, said in the method, for results that kept per-seed scores but no per-item scores per seed."""
    if not items.has_interval:
        raise ValueError("combined needs an interval over the items")
    centre = items.estimate if estimate is None else float(estimate)
    if not seeds.has_interval:
        return Interval(centre, items.low, items.high, f"{items.method}; seeds: {seeds.method}", items.n,
                        items.level, items.covers)
    lo, hi = items.estimate - items.low, items.high - items.estimate
    s = seeds.half_width
    return Interval(centre, centre - math.hypot(lo, s), centre + math.hypot(hi, s),
                    f"{items.method}, combined with a {seeds.method} (half-widths added in quadrature: approximate)",
                    items.n, items.level, ("items", "seeds"))


def resolving_factor(interval: Interval, effect: float) -> float | None:
    """How many times more items (and seeds, where they are resampled) would shrink ``interval``'s half-width to
    ``effect``, at the variance it shows: a half-width falls as one over the square root of the sample, so the
    factor is ``(half-width / effect)^2`` (at least 1). ``None`` without an interval or a positive effect."""
    hw = interval.half_width
    if hw is None or not effect or effect <= 0 or not math.isfinite(effect):
        return None
    return max(1.0, (hw / effect) ** 2)


def kendall_tau(reference: Sequence[float], ours: Sequence[float]) -> float:
    """Kendall's tau-b between two score lists over the same models (same order); NaN-free inputs required."""
    from scipy import stats

    x, y = _finite(reference, "reference scores"), _finite(ours, "our scores")
    if x.size != y.size or x.size < 2:
        raise ValueError(f"Kendall's tau needs two equally long lists of at least 2 scores, got {x.size} and "
                         f"{y.size}")
    tau = stats.kendalltau(x, y).statistic
    return 0.0 if not math.isfinite(tau) else float(tau)


def _normal_quantile(level: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def correlation_interval(r: float, n: int, *, kind: str = "pearson", level: float = 0.95) -> Interval:
    """A correlation over ``n`` pairs with its Fisher z interval ``tanh(atanh(r) -/+ q se)``: ``se = 1 / sqrt(n -
    3)`` for Pearson's r, Bonett & Wright's (2000) ``sqrt((1 + r^2 / 2) / (n - 3))`` for Spearman's rho."""
    if kind not in ("pearson", "spearman"):
        raise ValueError(f"kind must be 'pearson' or 'spearman', got {kind!r}")
    if n < 4:
        raise ValueError(f"a Fisher z interval needs at least 4 pairs, got {n}")
    if not -1.0 < r < 1.0:
        raise ValueError(f"a correlation must lie strictly between -1 and 1, got {r}")
    se = math.sqrt((1 + r ** 2 / 2) / (n - 3)) if kind == "spearman" else 1 / math.sqrt(n - 3)
    z, half = math.atanh(r), _normal_quantile(level) * se
    how = "Fisher z interval" + (" (Bonett-Wright)" if kind == "spearman" else "")
    return Interval(float(r), math.tanh(z - half), math.tanh(z + half), f"{how} over {n:,} pairs", n, level, ("items",))


def correlation_difference(r1: float, n1: int, r2: float, n2: int, *, level: float = 0.95) -> Interval:
    """``r1 - r2`` for two Pearson correlations taken as independent, with Zou's (2007) interval built from each
    one's Fisher z interval: ``L = d - sqrt((r1 - l1)^2 + (u2 - r2)^2)``, ``U = d + sqrt((u1 - r1)^2 + (r2 -
    l2)^2)``. (Two correlations over the same pairs are not independent: with per-pair scores kept, use
    :func:`paired_bootstrap` instead.)"""
    a = correlation_interval(r1, n1, level=level)
    b = correlation_interval(r2, n2, level=level)
    d = float(r1 - r2)
    low = d - math.sqrt((r1 - a.low) ** 2 + (b.high - r2) ** 2)
    high = d + math.sqrt((a.high - r1) ** 2 + (r2 - b.low) ** 2)
    return Interval(d, low, high, f"Zou's interval for a difference of two correlations (Fisher z, {min(n1, n2):,} "
                    "pairs each, taken as independent)", min(n1, n2), level, ("items",))


def auc_interval(auc: float, n_positive: int, n_negative: int, *, level: float = 0.95) -> Interval:
    """An AUC (the chance that a positive scores above a negative) with Hanley & McNeil's (1982) normal interval from
    its value and the two counts, clipped to [0, 1]."""
    if not 0.0 <= auc <= 1.0:
        raise ValueError(f"an AUC lies in [0, 1], got {auc}")
    if n_positive < 1 or n_negative < 1:
        raise ValueError(f"an AUC needs at least one item of each kind, got {n_positive} and {n_negative}")
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    var = (auc * (1 - auc) + (n_positive - 1) * (q1 - auc ** 2) + (n_negative - 1) * (q2 - auc ** 2)) / (
        n_positive * n_negative)
    half = _normal_quantile(level) * math.sqrt(max(var, 0.0))
    return Interval(float(auc), max(0.0, auc - half), min(1.0, auc + half),
                    f"Hanley-McNeil interval ({n_positive:,} against {n_negative:,} items)", n_positive, level,
                    ("items",))


def proportion_interval(successes: int, n: int, *, level: float = 0.95, items: str = "items") -> Interval:
    """An accuracy ``successes / n`` (in %) with Wilson's score interval: what the choice of the ``n`` test items
    leaves uncertain about one trained model's accuracy."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes} of {n}")
    z = _normal_quantile(level)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    low, high = min(low, p), max(high, p)          # at p = 0 or 1 rounding must not leave p outside
    return Interval(100 * p, 100 * low, 100 * high, f"Wilson interval over {n:,} {items}", n, level,
                    ("items",))


def ratio_of_means(a: Sequence[float], b: Sequence[float], *, level: float = 0.95, scale: float = 100.0) -> Interval:
    """``scale * mean(a) / mean(b)`` (a retention in %, say) with a delta-method interval: Welch's interval of
    ``a - R b`` over the seeds (R the estimated ratio), divided by ``mean(b)``. Both models' seed variation enters;
    with too few seeds, or no spread, there is the ratio and no interval."""
    x, y = _finite(a, "first model's scores"), _finite(b, "second model's scores")
    base = float(y.mean())
    if base == 0.0:
        raise ValueError("the second model's mean is zero: a ratio to it is undefined")
    r = float(x.mean()) / base
    d = seed_difference(x, r * y, level=level)
    if not d.has_interval:
        return Interval(scale * r, method=f"ratio of means; {d.method}", n=d.n, level=level)
    k = scale / abs(base)
    return Interval(scale * r, scale * r + k * d.low, scale * r + k * d.high,
                    f"ratio of means, delta method: {d.method} of a - R b, over the second model's mean", d.n, level,
                    ("seeds",))
